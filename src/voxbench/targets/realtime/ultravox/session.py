"""The Ultravox adapter: create a call over REST, join its websocket, map data messages.

Call creation carries what other protocols send in-band: the system prompt, the tools (as
client tools, so invocations come to us), the sample rates and the conversation so far as
``initialMessages`` (tool calls and results as real ``TOOL_CALL`` / ``TOOL_RESULT``
messages). On the socket, user text goes out as ``user_text_message`` at ``end_user_turn``
and user audio as binary s16le frames; Ultravox detects the end of spoken turns itself
(there is no client commit), so ``end_user_turn`` does nothing more for audio.

Outputs map through one dispatch table by message type. A turn completes when the agent is
back to ``listening`` after answering, no invocation is waiting for its result, and its
utterances are final (``transcript.final``). Invocations are answered one by one
(``client_tool_result``), as the protocol pauses the agent on each.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from voxbench.core.errors import ProtocolError
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    Interrupted,
    ToolCallRequested,
    TurnComplete,
    UserTranscript,
)
from voxbench.core.session import HistoryMessage, SessionSetup, TargetInfo
from voxbench.providers.http import classify_exception, make_http_client, raise_for_status
from voxbench.targets.realtime.audio import PcmResampler
from voxbench.targets.realtime.base import RealtimeSession, parse_tool_arguments, tool_result_text
from voxbench.targets.realtime.ultravox import events as ev

log = logging.getLogger(__name__)


@dataclass
class _Utterance:
    emitted: str = ""
    final: bool = False


class UltravoxSession(RealtimeSession):
    """A conversation with an Ultravox model over one call."""

    provider = "ultravox"
    default_base_url = "https://api.ultravox.ai"
    key_env = ("ULTRAVOX_API_KEY",)

    def __init__(
        self, model: str, *, base_url: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        super().__init__(options)
        self.model = model
        self.base_url = base_url
        self.input_rate = int(self.options.get("input_sample_rate", 16000))
        self.output_rate = int(self.options.get("output_sample_rate", 24000))
        self.text_output = self.options.get("output", "audio") == "text"
        self.transcript_grace = float(self.options.get("transcript_grace", 1.0))
        self.info = TargetInfo(
            name=f"{self.provider}/{model}",
            input_modality="audio",  # it listens natively: audio mode must not add a cascade
            output_modality="text" if self.text_output else "audio",
            input_sample_rate=self.input_rate,
            output_sample_rate=self.output_rate,
        )
        self.call_id: str | None = None
        self._resample = PcmResampler(self.input_rate)
        self._text: list[str] = []
        self._audio_turn = False
        self._active = False
        self._answered = False
        self._listening = True
        self._heard = False
        self._utterances: dict[int, _Utterance] = {}
        self._invocations: set[str] = set()
        self._waiting: set[str] = set()
        self._grace: asyncio.Task[None] | None = None
        self._handlers: dict[type[ev.ServerMessage], Callable[[Any], Awaitable[None]]] = {
            ev.CallStarted: self._on_call_started,
            ev.State: self._on_state,
            ev.Transcript: self._on_transcript,
            ev.ClientToolInvocation: self._on_invocation,
            ev.PlaybackClearBuffer: self._on_clear_buffer,
        }

    # -- connection -----------------------------------------------------------------------

    def call_request(self, setup: SessionSetup) -> ev.CreateCall:
        """The ``POST /api/calls`` body for ``setup``."""
        tools = []
        for tool in setup.tools:
            props = tool.parameters.get("properties", {}) or {}
            required = set(tool.parameters.get("required", []) or [])
            tools.append(
                ev.SelectedTool(
                    temporaryTool=ev.TemporaryTool(
                        modelToolName=tool.name,
                        description=tool.description,
                        dynamicParameters=[
                            ev.DynamicParameter(name=k, schema_=v, required=k in required)
                            for k, v in props.items()
                        ],
                    )
                )
            )
        return ev.CreateCall(
            systemPrompt=setup.system_prompt,
            model=self.model or None,
            voice=self.options.get("voice"),
            temperature=self.options.get("temperature"),
            selectedTools=tools,
            medium=ev.CallMedium(
                serverWebSocket=ev.ServerWebSocketMedium(
                    inputSampleRate=self.input_rate, outputSampleRate=self.output_rate
                )
            ),
            initialOutputMedium="MESSAGE_MEDIUM_TEXT"
            if self.text_output
            else "MESSAGE_MEDIUM_VOICE",
            initialMessages=initial_messages(setup.history),
            firstSpeakerSettings={"user": {}},
        )

    async def create_call(self, setup: SessionSetup) -> str:
        """Create the call; returns its ``joinUrl``."""
        base = (self.base_url or self.default_base_url).rstrip("/")
        url = base + ("/calls" if base.endswith("/api") else "/api/calls")
        body = self.call_request(setup).dump()
        where = f"{self.provider} call creation"
        # The shared HTTP client policy (proxies, never for loopback) and classification.
        try:
            async with make_http_client(httpx.Timeout(self.connect_timeout)) as http:
                response = await http.post(url, json=body, headers={"X-API-Key": self.api_key()})
        except httpx.HTTPError as exc:
            raise classify_exception(exc, provider=where) from exc
        raise_for_status(response, provider=where, key_vars=self.key_env)
        try:
            created = ev.CallCreated.model_validate(response.json())
        except (ValueError, Exception) as exc:
            raise ProtocolError(f"{self.provider}: unexpected call creation answer: {exc}") from exc
        self.call_id = created.callId
        return created.joinUrl

    async def start(self, setup: SessionSetup) -> None:
        join_url = await self.create_call(setup)
        await self.open_socket(join_url)
        self.start_receiving()

    async def send_message(self, message: ev.ClientMessage) -> None:
        """The one way out for data messages."""
        await self.send_text(message.to_json())

    # -- inputs ---------------------------------------------------------------------------

    async def send_user_text(self, text: str) -> None:
        self._text.append(text)

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        self._audio_turn = True
        data = self._resample(pcm, sample_rate)
        if data:
            await self.send_bytes(data)

    async def end_user_turn(self) -> None:
        self._active = True
        tail = self._resample.flush()
        if tail:
            await self.send_bytes(tail)
        if self._text:
            text, self._text = " ".join(self._text), []
            await self.send_message(ev.UserTextMessage(text=text))

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        if call_id not in self._waiting:
            log.warning(
                "%s: result for unknown or answered call %s ignored", self.provider, call_id
            )
            return
        self._waiting.discard(call_id)
        await self.send_message(
            ev.ClientToolResult(
                invocationId=call_id, result=tool_result_text(result), responseType="tool-response"
            )
        )

    async def close(self) -> None:
        if self._grace is not None:
            self._grace.cancel()
        await super().close()

    # -- outputs --------------------------------------------------------------------------

    async def on_message(self, message: str | bytes) -> None:
        if isinstance(message, bytes):
            if message:
                self._active = self._answered = True
                self.emit(
                    AssistantAudio(
                        pcm=message[: len(message) // 2 * 2], sample_rate=self.output_rate
                    )
                )
            return
        msg = ev.parse_server_message(message)
        if isinstance(msg, ev.UnknownServerMessage):
            self.note_unknown(msg.type)
            return
        handler = self._handlers.get(type(msg))
        if handler is not None:
            await handler(msg)

    async def _on_call_started(self, msg: ev.CallStarted) -> None:
        self.call_id = self.call_id or msg.callId

    async def _on_state(self, msg: ev.State) -> None:
        self._listening = msg.state in ("listening", "idle")
        if not self._listening:
            self._active = True
        self._maybe_complete()

    async def _on_transcript(self, msg: ev.Transcript) -> None:
        if msg.role == "user":
            if msg.final and msg.text:
                self._heard = True
                self.emit(UserTranscript(text=msg.text))
                self._maybe_complete()
            return
        self._active = self._answered = True
        utterance = self._utterances.setdefault(msg.ordinal, _Utterance())
        if utterance.final:
            return  # a repeated final
        piece = msg.delta or ""
        if msg.text is not None:  # the whole utterance so far: emit what is new
            if msg.text.startswith(utterance.emitted):
                piece = msg.text[len(utterance.emitted) :]
            else:
                log.warning(
                    "%s: transcript %d rewritten; keeping what was said", self.provider, msg.ordinal
                )
                piece = ""
        if piece:
            utterance.emitted += piece
            self.emit(AssistantTextDelta(text=piece))
        utterance.final = msg.final
        self._maybe_complete()

    async def _on_invocation(self, msg: ev.ClientToolInvocation) -> None:
        self._active = self._answered = True
        if msg.invocationId in self._invocations:
            return  # a repeated invocation
        self._invocations.add(msg.invocationId)
        self._waiting.add(msg.invocationId)
        arguments, error = parse_tool_arguments(msg.parameters)
        self.emit(
            ToolCallRequested(
                call_id=msg.invocationId,
                name=msg.toolName,
                arguments=arguments,
                raw_arguments=str(msg.parameters) if error else None,
                parse_error=error,
            )
        )

    async def _on_clear_buffer(self, msg: ev.PlaybackClearBuffer) -> None:
        self.emit(Interrupted())

    def _maybe_complete(self) -> None:
        if not (self._active and self._answered and self._listening) or self._waiting:
            return
        if any(not u.final for u in self._utterances.values()):
            return
        if self._audio_turn and not self._heard:
            if self._grace is None:  # the user transcript may still be on its way
                self._grace = asyncio.create_task(self._complete_after_grace())
            return
        self._complete()

    async def _complete_after_grace(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(self.transcript_grace)
            self._heard = True
            self._grace = None
            self._maybe_complete()

    def _complete(self) -> None:
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        self._active = self._answered = self._heard = self._audio_turn = False
        self._utterances.clear()
        self.emit(TurnComplete(status="completed"))


def initial_messages(history: list[HistoryMessage]) -> list[ev.InitialMessage]:
    """The conversation so far as call-creation ``initialMessages``."""
    out: list[ev.InitialMessage] = []
    for i, message in enumerate(history):
        if message.role == "user":
            out.append(
                ev.InitialMessage(
                    role="MESSAGE_ROLE_USER", text=message.text, medium="MESSAGE_MEDIUM_TEXT"
                )
            )
            continue
        for call in message.tool_calls:
            invocation = f"hist{i}_{call.call_id}"
            out.append(
                ev.InitialMessage(
                    role="MESSAGE_ROLE_TOOL_CALL",
                    text=json.dumps(call.arguments, ensure_ascii=False),
                    toolName=call.name,
                    invocationId=invocation,
                )
            )
            out.append(
                ev.InitialMessage(
                    role="MESSAGE_ROLE_TOOL_RESULT",
                    text=tool_result_text(call.result),
                    toolName=call.name,
                    invocationId=invocation,
                )
            )
        if message.text:
            out.append(
                ev.InitialMessage(
                    role="MESSAGE_ROLE_AGENT", text=message.text, medium="MESSAGE_MEDIUM_TEXT"
                )
            )
    return out
