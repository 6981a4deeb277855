"""Registers the agent targets: ``websocket/<url>``. Adapters are imported when chosen."""

from __future__ import annotations

from voxbench.core.session import Session
from voxbench.targets.registry import TargetContext, TargetProvider, register_provider


def _websocket(context: TargetContext) -> Session:
    from voxbench.targets.agent.websocket import AgentWebsocketSession

    return AgentWebsocketSession(context.model, base_url=context.base_url, options=context.options)


register_provider(
    TargetProvider(
        name="websocket",
        factory=_websocket,
        description="your own agent speaking the voxbench agent protocol "
        "(docs/agent-protocol.md): websocket/ws://HOST:PORT/PATH",
        kind="realtime",
    )
)
