"""Registers the agent targets: ``websocket/<url>`` and ``twilio-stream/<url>``. Adapters are
imported when chosen."""

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


def _twilio(context: TargetContext) -> Session:
    from voxbench.targets.agent.twilio import TwilioStreamSession

    return TwilioStreamSession(context.model, base_url=context.base_url, options=context.options)


register_provider(
    TargetProvider(
        name="twilio-stream",
        factory=_twilio,
        description="a telephony bot serving Twilio Media Streams (μ-law 8 kHz), with voxbench "
        "as Twilio: twilio-stream/wss://HOST/PATH",
        kind="realtime",
    )
)
