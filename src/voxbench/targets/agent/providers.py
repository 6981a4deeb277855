"""Registers the agent targets: ``websocket/<url>``, ``twilio-stream/<url>`` and
``pipecat/<module:factory>``. Adapters are imported when chosen (Pipecat is an optional extra)."""

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


def _pipecat(context: TargetContext) -> Session:
    from voxbench.targets.agent.pipecat import PipecatSession

    return PipecatSession(context.model, options=context.options)


register_provider(
    TargetProvider(
        name="pipecat",
        factory=_pipecat,
        description="your own Pipecat bot, run in-process with voxbench as its transport "
        "(pip install 'voxbench[pipecat]'): pipecat/package.module:factory",
        kind="realtime",
        options=frozenset(
            {
                "turn_detection",
                "output",
                "input_sample_rate",
                "output_sample_rate",
                "tool_timeout",
                "playback",
            }
        ),
    )
)
