"""The Gemini Live adapter: raw BidiGenerateContent websocket mapped onto ``Session``.

Raw websocket through our own ``events.py`` (no SDK), so the fake server can check what we
send. Inputs: text goes out at ``end_user_turn`` as ``clientContent`` with
``turnComplete: true``, for every model: the Gemini 3.1 Flash Live model page
(ai.google.dev/gemini-api/docs/models/gemini-3.1-flash-live-preview, "Migrating from Gemini
2.5 Flash Live", client content) supports ``send_client_content`` with explicit roles
throughout the session, ``turn_complete=true`` interrupting an answer in progress. Option
``text_input: realtime_input`` sends ``realtimeInput.text`` instead (the Live API
reference: realtime input whose end of turn the server derives from activity), which needs
``automatic_activity_detection``: text inside an ``activityStart`` / ``activityEnd``
bracket is a combination no doc describes, and it is never sent. Audio is resampled to
16 kHz and streamed as ``realtimeInput.audio``.
Turns are manual by default (automatic activity detection disabled: the adapter brackets
the user's audio with ``activityStart`` / ``activityEnd``); ``automatic_activity_detection``
hands turn-taking to the server (``end_user_turn`` then sends ``audioStreamEnd``).

Outputs map through one dispatch table over the fields a server message carries.
``TurnComplete`` follows ``turnComplete`` when no call is pending; a function call's answer
goes back in one ``toolResponse`` per ``toolCall`` message. History is replayed as
``clientContent`` turns, tool calls written as text (whether a Live session accepts
``functionCall`` parts in client content is not documented): for the 3.x live models after
``setup.historyConfig.initialHistoryInClientContent`` and ending ``turnComplete: true``
(which closes the history, without a model call), for older ones with
``turnComplete: false``.

Native-audio models (``*native-audio*`` and the 3.x live models) answer in AUDIO only: the
server closes with 1007 ("Cannot extract voices from a non-audio request") on a TEXT
request, so ``output: text`` is refused for them before connecting; the answer's words come
from the output transcription.

Every session asks for ``contextWindowCompression`` (a sliding window), without which the
docs limit an audio session to about 15 minutes of context, and for ``sessionResumption``,
because a connection lasts about 10 minutes. The server's ``sessionResumptionUpdate``
handles are kept only when they hold every completed turn: one that arrives while nothing
is in flight (no input since the server's last ``turnComplete``). That handle is
``resume_handle()``, so the runner's reconnect after a dropped socket resumes with it and
replays no history; a handle the server refuses (it closes the socket before
``setupComplete``) falls back to a fresh session with the history replayed, and so does a
reconnect with no current handle. A ``goAway`` (the connection ends after ``timeLeft``) is
handled inside the session: at the next safe point (the server completed the turn, no call
is pending, and a handle newer than that turn arrived) it opens a new connection with the
handle, and sends wait for it. Option ``resumption_handle`` starts a session (one without
history) from a given handle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlencode, urlsplit, urlunsplit

from voxbench.core.errors import ConfigError, ErrorCategory, ProtocolError, ProviderError
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    Interrupted,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    Usage,
    UserTranscript,
)
from voxbench.core.secrets import redact_text
from voxbench.core.session import HistoryMessage, SessionSetup, TargetInfo
from voxbench.targets.realtime.audio import (
    PcmResampler,
    b64decode,
    b64encode,
    is_silent,
    rate_from_mime,
)
from voxbench.targets.realtime.base import (
    RealtimeSession,
    close_category,
    describe_history_call,
    parse_tool_arguments,
)
from voxbench.targets.realtime.gemini import events as ev

log = logging.getLogger(__name__)

_SETUP_MESSAGES = 16


def bare_model(model: str) -> str:
    """``models/gemini-x`` → ``gemini-x``."""
    return model.removeprefix("models/")


def is_live_3(model: str) -> bool:
    """A 3.x live model: initial history announced by ``setup.historyConfig``."""
    return bare_model(model).startswith("gemini-3")


def is_native_audio(model: str) -> bool:
    """A native-audio model: it speaks, it cannot answer in TEXT."""
    return "native-audio" in bare_model(model) or is_live_3(model)


class GeminiLiveSession(RealtimeSession):
    """A conversation with a Gemini Live model over one websocket."""

    provider = "gemini-live"
    default_base_url = "wss://generativelanguage.googleapis.com"
    key_env = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

    def __init__(
        self, model: str, *, base_url: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        super().__init__(options)
        self.model = model
        self.base_url = base_url
        self.automatic_vad = bool(self.options.get("automatic_activity_detection", False))
        self.text_output = self.options.get("output", "audio") == "text"
        if self.text_output and is_native_audio(model):
            raise ConfigError(
                f"{self.provider}/{model}: output: text is not possible on a native-audio "
                "model, which answers in AUDIO only (the Live API closes with 1007 'Cannot "
                "extract voices from a non-audio request'); use output: audio (the answer's "
                "transcript is recorded as its text) or a half-cascade live model"
            )
        text_input = self.options.get("text_input", "client_content")
        if text_input not in ("realtime_input", "client_content"):
            raise ConfigError(
                f"{self.provider}: text_input option {text_input!r}: expected "
                "client_content or realtime_input"
            )
        if text_input == "realtime_input" and not self.automatic_vad:
            raise ConfigError(
                f"{self.provider}: text_input: realtime_input needs "
                "automatic_activity_detection: true (realtime text ends its turn by the "
                "server's activity detection; under manual turns typed text goes as "
                "clientContent)"
            )
        self.text_as_realtime_input = text_input == "realtime_input"
        self.history_in_setup = is_live_3(model)
        """Seed history after ``historyConfig.initialHistoryInClientContent`` (3.x models)."""
        self.voice: str | None = self.options.get("voice")
        self.transcript_grace = float(self.options.get("transcript_grace", 1.0))
        self.info = TargetInfo(
            name=f"{self.provider}/{model}",
            input_modality="audio",  # it listens natively: audio mode must not add a cascade
            output_modality="text" if self.text_output else "audio",
            input_sample_rate=ev.INPUT_SAMPLE_RATE,
            output_sample_rate=ev.OUTPUT_SAMPLE_RATE,
        )
        self._setup: SessionSetup | None = None
        self._handle: str | None = None
        """The newest resumable handle that holds every completed turn (None: none is)."""
        self._busy = False
        """Input went out (or a response runs) since the server's last ``turnComplete``."""
        self._ready = asyncio.Event()
        """Clear while a ``goAway`` reconnect swaps the connection: sends wait for it."""
        self._ready.set()
        self._rotation: asyncio.Task[None] | None = None
        self.resumed = False
        """This session continued a server-side conversation from a handle (no history)."""
        self.connections = 0
        """Connections this session opened (a ``goAway`` reconnect adds one)."""
        self._resample = PcmResampler(ev.INPUT_SAMPLE_RATE)
        self._transcribe_input = False
        self._text: list[str] = []
        self._in_activity = False
        self._audio_turn = False
        self._turn_active = False
        self._interrupted = False
        self._heard = False
        self._seen_calls: set[str] = set()
        self._local_ids: set[str] = set()
        """Ids the adapter made up for calls the server sent without one (never sent back)."""
        self._batches: list[list[tuple[str, str]]] = []
        self._results: dict[str, Any] = {}
        self._pending_complete: asyncio.Task[None] | None = None
        self._going_away: str | None = None
        self._handlers: list[tuple[str, Callable[[Any], None]]] = [
            ("interrupted", self._on_interrupted),
            ("inputTranscription", self._on_input_transcription),
            ("outputTranscription", self._on_output_transcription),
            ("modelTurn", self._on_model_turn),
            ("usageMetadata", self._on_usage),
            ("toolCall", self._on_tool_call),
            ("toolCallCancellation", self._on_tool_cancellation),
            ("turnComplete", self._on_turn_complete),
            ("sessionResumptionUpdate", self._on_resumption),
            ("goAway", self._on_go_away),
        ]
        """Field → handler, in the order a combined message is processed (a handle that
        comes with ``turnComplete`` is newer than the turn it completes)."""

    # -- connection -----------------------------------------------------------------------

    def url(self, key: str) -> str:
        """The BidiGenerateContent endpoint with the key as the ``key`` query parameter."""
        parts = urlsplit((self.base_url or self.default_base_url).rstrip("/"))
        scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
        path = parts.path if parts.path.endswith("BidiGenerateContent") else parts.path + ev.WS_PATH
        return urlunsplit((scheme, parts.netloc, path, urlencode({"key": key}), ""))

    def setup_message(
        self, setup: SessionSetup, handle: str | None = None, seed_history: bool = False
    ) -> ev.Setup:
        """The ``setup`` payload for ``setup``: resuming ``handle``, or a new session (whose
        history follows when ``seed_history``)."""
        self._transcribe_input = setup.modality == "audio" or self.automatic_vad
        speech = None
        if self.voice:
            speech = {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": self.voice}}}
        return ev.Setup(
            model=self.model if self.model.startswith("models/") else f"models/{self.model}",
            generationConfig=ev.GenerationConfig(
                responseModalities=["TEXT" if self.text_output else "AUDIO"], speechConfig=speech
            ),
            systemInstruction=ev.Content(parts=[ev.Part(text=setup.system_prompt)]),
            tools=[
                ev.Tool(
                    functionDeclarations=[
                        ev.FunctionDeclaration(
                            name=t.name, description=t.description, parameters=t.parameters
                        )
                        for t in setup.tools
                    ]
                )
            ]
            if setup.tools
            else None,
            realtimeInputConfig=ev.RealtimeInputConfig(
                automaticActivityDetection=ev.AutomaticActivityDetection(
                    disabled=not self.automatic_vad
                )
            ),
            inputAudioTranscription={} if self._transcribe_input else None,
            outputAudioTranscription=None if self.text_output else {},
            sessionResumption=ev.SessionResumptionConfig(handle=handle),
            contextWindowCompression=ev.ContextWindowCompression(slidingWindow=ev.SlidingWindow()),
            historyConfig=ev.HistoryConfig(initialHistoryInClientContent=True)
            if self.history_in_setup and seed_history
            else None,
        )

    async def start(self, setup: SessionSetup) -> None:
        self._setup = setup
        handle = setup.resume_handle
        if handle is None and not setup.history:
            # The option starts a run from a given handle; a later reconnect has history
            # newer than it, so only the runner's handle (or that history) may continue.
            handle = self.options.get("resumption_handle")
        if handle:
            try:
                await self._connect(handle)
            except ProviderError as exc:
                if not self.closed_by_server():
                    raise  # not a refusal: the handle may still be good for the next try
                log.warning(
                    "%s: the server refused the resumption handle (%s); replaying the history",
                    self.provider,
                    exc,
                )
                await self.retire_socket()
            else:
                self._handle, self.resumed = handle, True
                self.start_receiving()
                return
        await self._connect(None, seed_history=bool(setup.history))
        if setup.history:
            # A 3.x model takes history until turnComplete: true, which triggers no answer.
            content = ev.ClientContent(
                turns=history_turns(setup.history), turnComplete=self.history_in_setup
            )
            await self.send_message(ev.ClientMessage(clientContent=content))
        self.start_receiving()

    async def _connect(self, handle: str | None, seed_history: bool = False) -> None:
        """Open a connection and complete its ``setup`` (resuming ``handle`` when given)."""
        assert self._setup is not None
        await self.open_socket(self.url(self.api_key()))
        self.connections += 1
        setup = self.setup_message(self._setup, handle, seed_history)
        await self.send_text(ev.ClientMessage(setup=setup).to_json())
        for _ in range(_SETUP_MESSAGES):
            if "setupComplete" in await self.recv_json():
                return
        raise ProtocolError(f"{self.provider}: no setupComplete after setup")

    async def send_message(self, message: ev.ClientMessage) -> None:
        """The one way out (after a ``goAway`` reconnect in progress)."""
        await self._ready.wait()
        await self.send_text(message.to_json())

    def resume_handle(self) -> str | None:
        return self._handle

    def on_closed(self, code: int | None, reason: str) -> TargetError:
        category = ErrorCategory.BAD_REQUEST if code == 1007 else close_category(code)
        away = f" after goAway (time left {self._going_away})" if self._going_away else ""
        detail = f"code {code}" + (f": {reason}" if reason else "") if code else "no close frame"
        return TargetError(
            category=category,
            message=redact_text(f"{self.provider}: websocket closed ({detail}){away}"),
            retryable=category not in (ErrorCategory.BAD_REQUEST, ErrorCategory.AUTHENTICATION),
            fatal=True,
        )

    # -- inputs ---------------------------------------------------------------------------

    async def send_user_text(self, text: str) -> None:
        self._text.append(text)

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        if not self.automatic_vad and not self._in_activity:
            if is_silent(pcm):
                # An open microphone's silence must not open an activity: activityStart
                # while the model answers would interrupt it.
                return
            self._in_activity = self._busy = True
            await self.send_message(
                ev.ClientMessage(realtimeInput=ev.RealtimeInput(activityStart={}))
            )
        await self._stream(self._resample(pcm, sample_rate))

    async def _stream(self, pcm: bytes) -> None:
        if pcm:
            self._audio_turn = True
            # An open microphone's silence (automatic activity detection) starts no turn.
            self._busy = self._busy or not is_silent(pcm)
            blob = ev.Blob(mimeType=ev.INPUT_MIME, data=b64encode(pcm))
            await self.send_message(ev.ClientMessage(realtimeInput=ev.RealtimeInput(audio=blob)))

    async def end_user_turn(self) -> None:
        self._turn_active = True
        await self._stream(self._resample.flush())
        if self._in_activity:
            self._in_activity = False
            await self.send_message(
                ev.ClientMessage(realtimeInput=ev.RealtimeInput(activityEnd={}))
            )
        elif self.automatic_vad and self._audio_turn:
            await self.send_message(
                ev.ClientMessage(realtimeInput=ev.RealtimeInput(audioStreamEnd=True))
            )
        if self._text:
            text, self._text = " ".join(self._text), []
            self._busy = True
            if self.text_as_realtime_input:
                await self._send_realtime_text(text)
                return
            turn = ev.Content(role="user", parts=[ev.Part(text=text)])
            await self.send_message(
                ev.ClientMessage(clientContent=ev.ClientContent(turns=[turn], turnComplete=True))
            )

    async def _send_realtime_text(self, text: str) -> None:
        """A typed turn as realtime text, its end left to automatic activity detection."""
        await self.send_message(ev.ClientMessage(realtimeInput=ev.RealtimeInput(text=text)))

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        if call_id not in self._seen_calls:
            log.warning("%s: result for unknown call %s ignored", self.provider, call_id)
            return
        self._results.setdefault(call_id, result)
        self._busy = True
        while self._batches and all(c in self._results for c, _ in self._batches[0]):
            batch = self._batches.pop(0)
            responses = [
                ev.FunctionResponse(
                    id=None if call_id in self._local_ids else call_id,
                    name=name,
                    response=_as_object(self._results.pop(call_id)),
                )
                for call_id, name in batch
            ]
            await self.send_message(
                ev.ClientMessage(toolResponse=ev.ToolResponse(functionResponses=responses))
            )

    async def close(self) -> None:
        if self._pending_complete is not None:
            self._pending_complete.cancel()
        if self._rotation is not None and not self._rotation.done():
            self._rotation.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._rotation
        await super().close()

    # -- outputs --------------------------------------------------------------------------

    async def on_message(self, message: str | bytes) -> None:
        # The Live API sends its JSON in binary frames as often as in text frames.
        msg = ev.parse_server_message(message)
        for field in msg.unknown_fields():
            self.note_unknown(field)
        content = msg.serverContent
        terminator_only = content is not None and not (
            content.modelTurn or content.outputTranscription or msg.toolCall
        )
        if (
            terminator_only
            and content is not None
            and content.turnComplete
            and not self._turn_active
        ):
            return  # a repeated terminator (with its usage) for a turn already complete
        fields: dict[str, Any] = {
            "usageMetadata": msg.usageMetadata,
            "toolCall": msg.toolCall,
            "toolCallCancellation": msg.toolCallCancellation,
            "goAway": msg.goAway,
            "sessionResumptionUpdate": msg.sessionResumptionUpdate,
        }
        if content is not None:
            fields |= {
                "interrupted": content.interrupted or None,
                "inputTranscription": content.inputTranscription,
                "outputTranscription": content.outputTranscription,
                "modelTurn": content.modelTurn,
                "turnComplete": content.turnComplete or None,
            }
        for name, handler in self._handlers:
            if fields.get(name) is not None:
                handler(fields[name])

    def _on_interrupted(self, _: bool) -> None:
        self._interrupted = True
        self.emit(Interrupted())

    def _on_input_transcription(self, transcription: ev.Transcription) -> None:
        if transcription.text:
            self._heard = True
            self.emit(UserTranscript(text=transcription.text))
            if self._pending_complete is not None:
                # Heard at last: finish soon (a transcript may come in several pieces).
                self._pending_complete.cancel()
                settle = min(self.transcript_grace, 0.1)
                self._pending_complete = asyncio.create_task(self._complete_after_grace(settle))

    def _on_output_transcription(self, transcription: ev.Transcription) -> None:
        self._turn_active = True
        if transcription.text and not self.text_output:
            self.emit(AssistantTextDelta(text=transcription.text))

    def _on_model_turn(self, content: ev.Content) -> None:
        self._turn_active = True
        for part in content.parts:
            if part.inlineData is not None and part.inlineData.mimeType.startswith("audio/"):
                pcm = b64decode(part.inlineData.data, "serverContent.modelTurn audio")
                rate = rate_from_mime(part.inlineData.mimeType, ev.OUTPUT_SAMPLE_RATE)
                if pcm:
                    self.emit(AssistantAudio(pcm=pcm, sample_rate=rate))
            elif part.text and self.text_output and not part.thought:
                self.emit(AssistantTextDelta(text=part.text))

    def _on_usage(self, usage: ev.UsageMetadata) -> None:
        def audio(details: list[ev.ModalityTokenCount]) -> int:
            return sum(d.tokenCount for d in details if d.modality.upper() == "AUDIO")

        self.emit(
            Usage(
                input_tokens=usage.promptTokenCount,
                # Thinking is output (billed so), as the HTTP adapter counts it.
                output_tokens=usage.responseTokenCount + usage.thoughtsTokenCount,
                cached_input_tokens=usage.cachedContentTokenCount,
                audio_input_tokens=audio(usage.promptTokensDetails),
                audio_output_tokens=audio(usage.responseTokensDetails),
            )
        )

    def _on_tool_call(self, tool_call: ev.ToolCall) -> None:
        self._turn_active = True
        batch: list[tuple[str, str]] = []
        for call in tool_call.functionCalls:
            call_id = call.id or self.next_id("call")
            if call_id in self._seen_calls:
                continue  # a repeated toolCall message
            if not call.id:
                self._local_ids.add(call_id)
            self._seen_calls.add(call_id)
            batch.append((call_id, call.name))
            arguments, error = _arguments(call.args)
            self.emit(
                ToolCallRequested(
                    call_id=call_id,
                    name=call.name,
                    arguments=arguments,
                    raw_arguments=str(call.args) if error else None,
                    parse_error=error,
                )
            )
        if batch:
            self._batches.append(batch)

    def _on_tool_cancellation(self, cancellation: ev.ToolCallCancellation) -> None:
        cancelled = set(cancellation.ids)
        self._batches = [[c for c in b if c[0] not in cancelled] for b in self._batches]
        self._batches = [b for b in self._batches if b]
        log.info("%s: server cancelled calls %s", self.provider, sorted(cancelled))

    def _on_go_away(self, go_away: ev.GoAway) -> None:
        self._going_away = go_away.timeLeft or "unknown"
        log.info("%s: server will disconnect (time left %s)", self.provider, self._going_away)
        self._rotate_when_safe()

    def _on_resumption(self, update: ev.SessionResumptionUpdate) -> None:
        # A handle taken mid-turn would resume without part of it (or, retried, twice).
        if update.resumable and update.newHandle and not self._busy:
            self._handle = update.newHandle
            self._rotate_when_safe()

    def _rotate_when_safe(self) -> None:
        """After ``goAway``: reconnect with the handle once nothing is in flight."""
        handle = self._handle
        idle = not self._busy and self._rotation is None
        if self._going_away and handle is not None and idle and not self._closing:
            self._ready.clear()  # from now on, sends wait for the new connection
            self._rotation = asyncio.create_task(self._rotate(handle))

    async def _rotate(self, handle: str) -> None:
        try:
            await self.retire_socket()
            try:
                await self._connect(handle)
            except (ProviderError, ProtocolError) as exc:
                if self.closed_by_server():
                    self._handle = None  # refused: the runner's reconnect replays history
                self._dropped = True
                self.emit(
                    TargetError(
                        category=(
                            exc.category
                            if isinstance(exc, ProviderError)
                            else ErrorCategory.PROTOCOL
                        ),
                        message=redact_text(
                            f"{self.provider}: reconnecting after goAway failed: {exc}"
                        ),
                        retryable=True,
                        fatal=True,
                    )
                )
                return
            log.info("%s: reconnected after goAway with a resumption handle", self.provider)
            self._going_away = None
            self.start_receiving()
        finally:
            self._rotation = None
            self._ready.set()

    def _on_turn_complete(self, _: bool) -> None:
        if self._batches:
            return  # calls pending: the model's turn goes on after the tool response
        if self._busy:
            # The server finished this turn: handles from before it no longer hold it.
            self._busy = False
            self._handle = None
        if self._pending_complete is not None:
            return
        if self._audio_turn and self._transcribe_input and not self._heard:
            # The input transcript has no ordering guarantee: give it a moment to arrive.
            self._pending_complete = asyncio.create_task(
                self._complete_after_grace(self.transcript_grace)
            )
            return
        self._complete()

    async def _complete_after_grace(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(seconds)
            self._complete()

    def _complete(self) -> None:
        if not self._turn_active:
            return
        self._pending_complete = None
        status: Literal["cancelled", "completed"] = (
            "cancelled" if self._interrupted else "completed"
        )
        self._turn_active = self._interrupted = self._heard = self._audio_turn = False
        self.emit(TurnComplete(status=status))


def history_turns(history: list[HistoryMessage]) -> list[ev.Content]:
    """The conversation so far as ``clientContent`` turns (tool calls written as text)."""
    turns: list[ev.Content] = []
    for message in history:
        if message.role == "user":
            turns.append(ev.Content(role="user", parts=[ev.Part(text=message.text)]))
            continue
        lines = [describe_history_call(c) for c in message.tool_calls]
        if message.text:
            lines.append(message.text)
        if lines:
            turns.append(ev.Content(role="model", parts=[ev.Part(text="\n".join(lines))]))
    return turns


def _arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    if isinstance(raw, dict):
        return raw, None
    if raw is None:
        return {}, None
    if isinstance(raw, str):
        return parse_tool_arguments(raw)
    return {}, f"args are a JSON {type(raw).__name__}, not an object"


def _as_object(result: Any) -> dict[str, Any]:
    # ``FunctionResponse.response`` is a Struct: a non-object result is wrapped.
    return result if isinstance(result, dict) else {"result": result}
