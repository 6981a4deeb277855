"""The OpenAI Realtime adapter: the GA websocket protocol mapped onto ``Session``.

One base for the whole OpenAI-Realtime family; Azure OpenAI (``variants.py``) changes the
URL and the auth header, xAI also the session (only the parameters xAI documents). Inputs: ``send_user_text`` adds a user message item;
``send_user_audio`` resamples to 24 kHz and appends; ``end_user_turn`` commits and asks for
a response in manual mode (the benchmark default) and does nothing for audio under server
VAD. Outputs go through one dispatch table (``_handlers``); the response/tool-call state
machine lives in ``ResponseTracker`` (``responses.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from voxbench.core.errors import ProtocolError, ProviderError
from voxbench.core.events import SpeechStarted, SpeechStopped
from voxbench.core.session import HistoryMessage, SessionSetup, TargetInfo
from voxbench.targets.realtime.audio import PcmResampler, b64encode, is_silent
from voxbench.targets.realtime.base import RealtimeSession, tool_result_text
from voxbench.targets.realtime.openai import events as ev
from voxbench.targets.realtime.openai.responses import ResponseTracker, classify_error

DEFAULT_TRANSCRIPTION_MODEL = "gpt-4o-mini-transcribe"
_APPEND_BYTES = 24000 * 2  # one second of 24 kHz PCM16 per append event
_HANDSHAKE_MESSAGES = 64


def realtime_url(base_url: str, model: str | None, extra: dict[str, str] | None = None) -> str:
    """``https://host/v1`` or ``ws://host`` → ``wss://host/v1/realtime?model=...``."""
    parts = urlsplit(base_url.rstrip("/"))
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/")
    if not path.endswith("/realtime"):
        path += "/realtime" if path.endswith("/v1") else "/v1/realtime"
    query = dict(extra or {})
    if model:
        query.setdefault("model", model)
    return urlunsplit((scheme, parts.netloc, path, urlencode(query), ""))


def parse_turn_detection(value: Any) -> ev.TurnDetection | None:
    """The ``turn_detection`` option: None/"manual" (default), "server_vad", "semantic_vad",
    or a mapping of ``TurnDetection`` fields."""
    if value in (None, "manual", "none", False):
        return None
    if isinstance(value, str):
        return ev.TurnDetection(type=value)  # type: ignore[arg-type]
    if isinstance(value, dict):
        return ev.TurnDetection.model_validate(value)
    raise ProtocolError(f"turn_detection option {value!r}: expected manual, server_vad, ...")


class OpenAIRealtimeSession(RealtimeSession):
    """A conversation with an OpenAI Realtime model over one websocket."""

    provider = "openai-realtime"
    default_base_url = "wss://api.openai.com/v1"
    base_url_vars: tuple[str, ...] = ("OPENAI_BASE_URL",)
    """The OpenAI SDK's endpoint variable: an ``https://…/v1`` base becomes ``wss://…/v1/realtime``."""
    key_env: tuple[str, ...] = ("OPENAI_API_KEY",)

    def __init__(
        self, model: str, *, base_url: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        super().__init__(options)
        self.model = model
        self.base_url = base_url
        self.turn_detection = parse_turn_detection(self.options.get("turn_detection"))
        self.voice: str | None = self.options.get("voice")
        output = self.options.get("output", "audio")
        self.output_modalities: list[Any] = ["text"] if output == "text" else ["audio"]
        self.info = TargetInfo(
            name=f"{self.provider}/{model}",
            input_modality="audio",
            output_modality="text" if output == "text" else "audio",
            input_sample_rate=ev.INPUT_SAMPLE_RATE,
            output_sample_rate=ev.OUTPUT_SAMPLE_RATE,
        )
        self._resample = PcmResampler(ev.INPUT_SAMPLE_RATE)
        self._text_sent = False
        self._audio_appended = False
        self.tracker = ResponseTracker(self)
        self._handlers: dict[type[ev.ServerEvent], Callable[[Any], Awaitable[None]]] = {
            ev.ErrorEvent: self.tracker.on_error,
            ev.SpeechStarted: self._on_speech_started,
            ev.SpeechStopped: self._on_speech_stopped,
            ev.InputAudioBufferCommitted: self.tracker.on_committed,
            ev.InputTranscriptionCompleted: self.tracker.on_user_transcript,
            ev.InputTranscriptionFailed: self.tracker.on_user_transcript_failed,
            ev.ResponseCreated: self.tracker.on_response_created,
            ev.OutputItemAdded: self.tracker.on_output_item_added,
            ev.OutputAudioDelta: self.tracker.on_audio_delta,
            ev.OutputAudioTranscriptDelta: self.tracker.on_text_delta,
            ev.OutputAudioTranscriptDone: self.tracker.on_text_done,
            ev.OutputTextDelta: self.tracker.on_text_delta,
            ev.OutputTextDone: self.tracker.on_text_done,
            ev.FunctionCallArgumentsDone: self.tracker.on_function_call,
            ev.ResponseDone: self.tracker.on_response_done,
        }

    # -- connection -----------------------------------------------------------------------

    def url(self) -> str:
        """The websocket URL for this model."""
        from_env = next((os.environ[v] for v in self.base_url_vars if os.environ.get(v)), None)
        return realtime_url(self.base_url or from_env or self.default_base_url, self.model)

    def auth_headers(self, key: str) -> dict[str, str]:
        """Headers that authenticate the handshake."""
        return {"Authorization": f"Bearer {key}"}

    @property
    def server_vad(self) -> bool:
        """The server detects turns (otherwise the client commits them)."""
        return self.turn_detection is not None

    def session_config(self, setup: SessionSetup) -> ev.SessionConfig:
        """The ``session.update`` payload for ``setup``."""
        audio_input = ev.AudioInput(
            format=ev.AudioFormat(type="audio/pcm", rate=ev.INPUT_SAMPLE_RATE),
            turn_detection=self.turn_detection,
        )
        transcription = self.options.get("input_transcription", DEFAULT_TRANSCRIPTION_MODEL)
        if setup.modality == "audio" or self.server_vad:
            audio_input.transcription = (
                ev.InputTranscription(model=transcription) if transcription else None
            )
        self.tracker.transcribes = audio_input.transcription is not None
        return ev.SessionConfig(
            instructions=setup.system_prompt,
            output_modalities=self.output_modalities,
            audio=ev.AudioConfig(
                input=audio_input,
                output=ev.AudioOutput(
                    format=ev.AudioFormat(type="audio/pcm", rate=ev.OUTPUT_SAMPLE_RATE),
                    voice=self.voice,
                ),
            ),
            tools=[
                ev.FunctionTool(name=t.name, description=t.description, parameters=t.parameters)
                for t in setup.tools
            ]
            or None,
            tool_choice="auto" if setup.tools else None,
        )

    def history_items(self, history: list[HistoryMessage]) -> list[ev.ConversationItem]:
        """The conversation so far as items: messages, and tool calls as real call items."""
        items: list[ev.ConversationItem] = []
        for i, message in enumerate(history):
            if message.role == "user":
                items.append(_message("user", "input_text", message.text))
                continue
            for call in message.tool_calls:
                # Prefixed: ids from earlier sessions may repeat across reconnects.
                call_id = f"hist{i}_{call.call_id}"
                items.append(
                    ev.ConversationItem(
                        type="function_call",
                        call_id=call_id,
                        name=call.name,
                        arguments=json.dumps(call.arguments, ensure_ascii=False),
                    )
                )
                items.append(
                    ev.ConversationItem(
                        type="function_call_output",
                        call_id=call_id,
                        output=tool_result_text(call.result),
                    )
                )
            if message.text:
                items.append(_message("assistant", "output_text", message.text))
        return items

    async def start(self, setup: SessionSetup) -> None:
        await self.open_session(self.session_config(setup))
        for item in self.history_items(setup.history):
            await self.send_event(ev.ConversationItemCreate(item=item))
        self.start_receiving()

    async def open_session(self, config: ev.SessionConfig) -> dict[str, Any]:
        """The handshake every user of the protocol performs (a target's ``start``, the
        realtime audio judge): connect to ``url()`` with ``auth_headers``, wait for the
        server's hello, send ``session.update`` with ``config`` and wait for
        ``session.updated``, which is returned. A refused handshake or an ``error`` event is
        a classified ``ProviderError``."""
        await self.open_socket(self.url(), self.auth_headers(self.api_key()))
        await self.await_server(("session.created", "conversation.created"))
        await self.send_event(ev.SessionUpdate(session=config))
        return await self.await_server(("session.updated",))

    async def await_server(
        self,
        wanted: tuple[str, ...],
        *,
        refused: str = "session setup refused",
        limit: int | None = _HANDSHAKE_MESSAGES,
    ) -> dict[str, Any]:
        """Read server events (before the receive loop runs) until one of ``wanted``, which
        is returned; an ``error`` event raises a classified ``ProviderError`` saying
        ``refused``. More than ``limit`` other events (None: no limit) is a protocol error."""
        seen = 0
        while limit is None or seen < limit:
            seen += 1
            data = await self.recv_json()
            kind = data.get("type")
            if kind in wanted:
                return data
            if kind == "error":
                error = ev.ErrorEvent.model_validate(data).error
                category, retryable = classify_error(error)
                raise ProviderError(
                    f"{self.provider}: {refused}: {error.message or error.code or 'error'}",
                    category=category,
                    retryable=retryable,
                )
        raise ProtocolError(f"{self.provider}: no {' or '.join(wanted)} during setup")

    async def send_event(self, event: ev.ClientEvent) -> str:
        """The one way out: stamp a client event id, send it; returns the id."""
        if event.event_id is None:
            event.event_id = self.next_id("evt")
        await self.send_text(event.to_json())
        return event.event_id

    # -- inputs ---------------------------------------------------------------------------

    async def send_user_text(self, text: str) -> None:
        self._text_sent = True
        await self.send_event(ev.ConversationItemCreate(item=_message("user", "input_text", text)))

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        if not self.server_vad and not self._audio_appended and is_silent(pcm):
            # Manual turns: an open microphone's silence before the user speaks (while the
            # agent answers, say) is not part of the turn; server VAD needs all of it.
            return
        await self._append(self._resample(pcm, sample_rate))

    async def _append(self, pcm: bytes) -> None:
        for start in range(0, len(pcm), _APPEND_BYTES):
            self._audio_appended = True
            chunk = pcm[start : start + _APPEND_BYTES]
            await self.send_event(ev.InputAudioBufferAppend(audio=b64encode(chunk)))

    async def end_user_turn(self) -> None:
        await self._append(self._resample.flush())
        audio, text = self._audio_appended, self._text_sent
        self._audio_appended = self._text_sent = False
        if self.server_vad and (audio or not text):
            return  # the server commits on silence and creates the response itself
        if audio:
            await self.send_event(ev.InputAudioBufferCommit())
        await self.request_response()

    async def request_response(self) -> None:
        """Send ``response.create`` (remembering its id to recognise a refusal)."""
        event_id = await self.send_event(ev.ResponseCreate())
        self.tracker.response_requested(event_id)

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        await self.tracker.answer(call_id, result)

    async def send_tool_outputs(self, outputs: list[tuple[str, Any]]) -> None:
        """Send the outputs of a response's calls, then ask the model to continue."""
        for call_id, result in outputs:
            await self.send_event(
                ev.ConversationItemCreate(
                    item=ev.ConversationItem(
                        type="function_call_output",
                        call_id=call_id,
                        output=tool_result_text(result),
                    )
                )
            )
        await self.request_response()

    async def close(self) -> None:
        self.tracker.cancel_timers()
        await super().close()

    # -- outputs --------------------------------------------------------------------------

    async def on_message(self, message: str | bytes) -> None:
        if isinstance(message, bytes):
            raise ProtocolError(f"{self.provider}: unexpected binary frame ({len(message)} B)")
        event = ev.parse_server_event(message)
        if isinstance(event, ev.UnknownServerEvent):
            self.note_unknown(event.type)
            return
        if self.seen_before(event.event_id):
            return  # a redelivered event: handled the first time
        handler = self._handlers.get(type(event))
        if handler is not None:
            await handler(event)

    async def _on_speech_started(self, event: ev.SpeechStarted) -> None:
        self.emit(SpeechStarted())
        self.tracker.on_barge_in()

    async def _on_speech_stopped(self, event: ev.SpeechStopped) -> None:
        # ``audio_end_ms`` counts the input audio the server had when its VAD decided (its
        # silence wait included): the end of speech on the input's own clock. The wire model
        # defaults it to 0, so only a value the server actually sent is passed on.
        sent = "audio_end_ms" in event.model_fields_set
        self.emit(SpeechStopped(audio_end_s=event.audio_end_ms / 1000 if sent else None))


def _message(role: Any, part_type: Any, text: str) -> ev.ConversationItem:
    return ev.ConversationItem(
        type="message", role=role, content=[ev.ContentPart(type=part_type, text=text)]
    )
