"""``websocket/<url>``: a team's own voice agent, spoken to in the voxbench agent protocol.

The protocol (``docs/agent-protocol.md``, messages in ``voxbench.targets.agent.events``) is
small enough to implement in an afternoon in any language: JSON control messages, raw PCM16
audio frames, sample rates chosen by the agent in ``session.ready``, turn boundaries by
explicit ``user.turn_end`` or by the agent's own VAD, tool calls relayed to voxbench's tool
backend (``tool.call`` → ``tool.result``), and ``turn.end`` when a response is over.

Every message is stamped by the runner as it arrives, so timings are voxbench's clock at the
wire. The socket plumbing is the realtime adapters' (``RealtimeSession``): a dropped
connection is a fatal, retryable ``TargetError`` and the runner reconnects with the
conversation so far as ``history``.
"""

from __future__ import annotations

import logging
from typing import Any

from voxbench.core.errors import ConfigError, ErrorCategory, ProtocolError, ProviderError
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    Interrupted,
    SpeechStarted,
    SpeechStopped,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    UserTranscript,
)
from voxbench.core.secrets import redact_text, remember_secret
from voxbench.core.session import SessionSetup, TargetInfo
from voxbench.targets.agent import events as ev
from voxbench.targets.realtime.audio import PcmResampler, b64decode, b64encode
from voxbench.targets.realtime.base import RealtimeSession, parse_tool_arguments

log = logging.getLogger(__name__)

_TURN_DETECTION = ("client", "agent")


def agent_url(model: str, base_url: str | None) -> str:
    """The agent's ``ws://`` / ``wss://`` URL: ``--base-url`` when given, else the model part."""
    url = (base_url or model or "").strip()
    if not url.startswith(("ws://", "wss://")):
        raise ConfigError(
            f"{url!r} is not a websocket URL" if url else "no agent URL",
            field="target",
            expected="websocket/ws://HOST:PORT/PATH (or wss://), or --base-url ws://…",
        )
    return url


class AgentWebsocketSession(RealtimeSession):
    """One conversation with an agent that speaks ``voxbench-agent/1``."""

    provider = "websocket"

    def __init__(
        self, model: str, *, base_url: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        super().__init__(options)
        self.url = agent_url(model, base_url)
        wanted = self.options.get("turn_detection")
        if wanted is not None and wanted not in _TURN_DETECTION:
            raise ConfigError(
                f"unknown turn_detection {wanted!r}",
                field="target_options.turn_detection",
                expected="client (voxbench sends user.turn_end) or agent (the agent's VAD)",
            )
        self.wanted_turn_detection: str | None = wanted
        output = self.options.get("output", "audio")
        if output not in ("audio", "text"):
            raise ConfigError(
                f"unknown output {output!r}",
                field="target_options.output",
                expected="audio (the agent speaks) or text (it answers in words)",
            )
        preferred = self.options.get("input_sample_rate")
        self.offered_rates = list(ev.SAMPLE_RATES)
        if preferred is not None:
            rate = int(preferred)
            self.offered_rates = [rate] + [r for r in self.offered_rates if r != rate]
        self.info = TargetInfo(
            name=f"websocket/{redact_text(self.url)}",
            input_modality="audio",  # it listens natively: audio mode adds no cascade
            output_modality="text" if output == "text" else "audio",
            input_sample_rate=self.offered_rates[0],
            output_sample_rate=24000,
        )
        self.server_vad = wanted == "agent"
        """The agent's own VAD ends user turns (read by the FDB driver after ``start``)."""
        self.ready: ev.SessionReady | None = None
        self._resample = PcmResampler(self.offered_rates[0])
        self._text: list[str] = []
        self._audio_turn = False
        self._waiting: set[str] = set()
        self._seen_calls: set[str] = set()
        self._answering = False
        """A response is due or under way: the next ``turn.end`` completes it (a repeated
        ``turn.end`` with nothing under way is ignored)."""

    # -- connection -----------------------------------------------------------------------

    def start_message(self, setup: SessionSetup) -> ev.SessionStart:
        """The ``session.start`` message for ``setup``."""
        return ev.SessionStart(
            system_prompt=setup.system_prompt,
            tools=[
                ev.ToolDefinition(name=t.name, description=t.description, parameters=t.parameters)
                for t in setup.tools
            ],
            history=[ev.HistoryItem.model_validate(m.model_dump()) for m in setup.history],
            modality=setup.modality,
            input_sample_rates=self.offered_rates,
            turn_detection=self.wanted_turn_detection,  # type: ignore[arg-type]
        )

    async def start(self, setup: SessionSetup) -> None:
        headers = {}
        key = self.options.get("api_key")
        if key:
            remember_secret(str(key))
            headers["Authorization"] = f"Bearer {key}"
        await self.open_socket(self.url, headers)
        await self.send_text(self.start_message(setup).to_json())
        first = ev.parse_server_message(await self.recv_json())
        if isinstance(first, ev.AgentErrorMessage):
            raise ProviderError(
                redact_text(f"agent refused the session: {first.message}"),
                category="bad_request",
                retryable=False,
            )
        if not isinstance(first, ev.SessionReady):
            raise ProtocolError(f"agent answered session.start with {first.type!r}, not ready")
        for field in ("input_sample_rate", "output_sample_rate"):
            rate = getattr(first, field)
            if not 8000 <= rate <= 48000:
                raise ProtocolError(f"agent session.ready: {field} {rate} is not 8000–48000 Hz")
        self.ready = first
        self.server_vad = first.turn_detection == "agent"
        self.info = self.info.model_copy(
            update={
                "input_sample_rate": first.input_sample_rate,
                "output_sample_rate": first.output_sample_rate,
            }
        )
        self._resample = PcmResampler(first.input_sample_rate)
        self.start_receiving()

    async def send_message(self, message: ev.ClientMessage) -> None:
        """The one way out for control messages."""
        await self.send_text(message.to_json())

    # -- inputs ---------------------------------------------------------------------------

    async def send_user_text(self, text: str) -> None:
        self._text.append(text)

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        self._audio_turn = True
        await self._send_audio(self._resample(pcm, sample_rate))

    async def _send_audio(self, data: bytes) -> None:
        if not data:
            return
        if self.ready is not None and self.ready.audio_transport == "base64":
            await self.send_message(ev.UserAudio(audio=b64encode(data)))
        else:
            await self.send_bytes(data)

    async def end_user_turn(self) -> None:
        self._answering = True
        await self._send_audio(self._resample.flush())
        if self._text:
            text, self._text = " ".join(self._text), []
            await self.send_message(ev.UserText(text=text))
            await self.send_message(ev.UserTurnEnd())
        elif not self.server_vad:
            await self.send_message(ev.UserTurnEnd())
        # With the agent's VAD an audio turn ends when the agent hears it end: the runner
        # keeps streaming silence until the answer comes.
        self._audio_turn = False

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        if call_id not in self._waiting:
            log.warning("websocket agent: result for unknown or answered call %s ignored", call_id)
            return
        self._waiting.discard(call_id)
        self._answering = True
        await self.send_message(ev.ToolResult(call_id=call_id, result=result))

    async def close(self) -> None:
        if self.connected:
            await self.send_message(ev.SessionEnd())
        await super().close()

    # -- outputs --------------------------------------------------------------------------

    @property
    def output_rate(self) -> int:
        return self.ready.output_sample_rate if self.ready is not None else 24000

    async def on_message(self, message: str | bytes) -> None:
        if isinstance(message, bytes):
            self._answering = True
            if message:
                self.emit(AssistantAudio(pcm=message[: len(message) // 2 * 2],
                                         sample_rate=self.output_rate))  # fmt: skip
            return
        msg = ev.parse_server_message(message)
        if isinstance(msg, ev.AgentText | ev.AgentAudio | ev.ToolCall | ev.SpeechStopped):
            self._answering = True
        if isinstance(msg, ev.AgentText):
            if msg.text:
                self.emit(AssistantTextDelta(text=msg.text))
        elif isinstance(msg, ev.AgentAudio):
            pcm = b64decode(msg.audio, "agent.audio")
            if pcm:
                self.emit(
                    AssistantAudio(pcm=pcm[: len(pcm) // 2 * 2], sample_rate=self.output_rate)
                )
        elif isinstance(msg, ev.ToolCall):
            self._on_tool_call(msg)
        elif isinstance(msg, ev.TurnEnd):
            if not self._answering:
                return  # a repeated turn.end
            self._answering = False
            if self._waiting:
                raise ProtocolError(
                    f"agent ended its turn with tool call(s) {sorted(self._waiting)} unanswered"
                )
            self.emit(TurnComplete(status=msg.status))
        elif isinstance(msg, ev.UserTranscript):
            if msg.text:
                self.emit(UserTranscript(text=msg.text))
        elif isinstance(msg, ev.SpeechStarted):
            self.emit(SpeechStarted())
        elif isinstance(msg, ev.SpeechStopped):
            end = msg.audio_end_ms
            self.emit(SpeechStopped(audio_end_s=None if end is None else end / 1000))
        elif isinstance(msg, ev.AgentInterrupted):
            self.emit(Interrupted())
        elif isinstance(msg, ev.AgentErrorMessage):
            self.emit(
                TargetError(
                    category=ErrorCategory.AGENT,
                    message=redact_text(f"agent error: {msg.message}"),
                    retryable=True,
                    fatal=msg.fatal,
                )
            )
        elif isinstance(msg, ev.UnknownServerMessage):
            self.note_unknown(msg.type)
        elif isinstance(msg, ev.SessionReady):
            raise ProtocolError("agent sent session.ready twice")

    def _on_tool_call(self, msg: ev.ToolCall) -> None:
        if msg.call_id in self._seen_calls:
            return  # a repeated call id: handled once
        self._seen_calls.add(msg.call_id)
        self._waiting.add(msg.call_id)
        arguments, error = parse_tool_arguments(msg.arguments)
        self.emit(
            ToolCallRequested(
                call_id=msg.call_id,
                name=msg.name,
                arguments=arguments,
                raw_arguments=str(msg.arguments) if error else None,
                parse_error=error,
            )
        )
