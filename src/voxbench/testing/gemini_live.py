"""A fake Gemini Live server (BidiGenerateContent websocket) on 127.0.0.1, driven by a script.

It parses and answers with ``voxbench.targets.realtime.gemini.events`` (the adapter's own
models): the first message must be ``setup`` (answered by ``setupComplete``); user turns
come as ``clientContent`` (``turnComplete: true``), as ``realtimeInput`` audio bracketed by
``activityStart`` / ``activityEnd`` (automatic activity detection disabled), or as audio
whose end a simulated server VAD (``EnergyVad``) detects. Answers stream as
``serverContent.modelTurn`` inline audio (``audio/pcm;rate=24000``) with
``outputTranscription`` pieces, then ``generationComplete`` and ``turnComplete`` with
``usageMetadata``; calls go out as ``toolCall`` and continue on ``toolResponse``. The key is
checked in the ``key`` query parameter (or ``x-goog-api-key``).

Faults are keyed by response number: ``server_error`` / ``rate_limit`` / ``unauthorized``
close the socket with 1011 / 1011 / 1008 and a reason (the Live API has no error message),
``drop`` cuts it without a close frame after the first chunk, ``hang`` never answers,
``malformed_args`` sends ``args`` as cut-off JSON text instead of an object, ``duplicate``
repeats every structural message (``toolCall``, the terminator with its usage).
``out_of_order=True`` sends the user's input transcription after ``turnComplete``.

``strict`` (the default) closes with 1007, as the Live API does, on what the docs say it
refuses: a second ``setup`` on one connection (the configuration cannot change while it is
open); more than one response modality ("AUDIO" or "TEXT", one per session); a TEXT
modality on a native-audio model ("Cannot extract voices from a non-audio request"); a
``thinkingConfig`` with both ``thinkingLevel`` and ``thinkingBudget``, or an unknown level;
``activityStart`` / ``activityEnd`` while automatic activity detection is on (they are for
manual turns only); and ``realtimeInput.text`` under manual turns or inside an activity
bracket (no doc describes it: typed turns go as ``clientContent`` with ``turnComplete:
true``, which the 3.1 model page supports throughout the session, or as realtime text
under automatic activity detection).

Session management, per the docs' session-management page: a session that asked for
``sessionResumption`` gets a ``sessionResumptionUpdate {newHandle, resumable: true}`` after
each completed turn, and a later connection whose ``setup.sessionResumption.handle`` names
one continues that conversation (no history needed). Handles live ``handle_ttl`` seconds
(the docs: 2 hours); an unknown or expired one is refused by closing with 1007 before
``setupComplete`` (the docs do not give the code; the adapter treats any close there as
a refusal). ``go_away_every=N`` stands in for the ~10-minute connection lifetime: each
connection sends ``goAway {timeLeft}`` as its N-th response starts and drops the socket
``go_away_time_left`` seconds later, whatever the client is doing then.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from voxbench.core.errors import ProtocolError
from voxbench.targets.realtime.audio import b64decode, b64encode
from voxbench.targets.realtime.gemini import events as ev
from voxbench.testing.realtime_common import (
    Conversation,
    EnergyVad,
    WebsocketFake,
    fault_kinds,
    wait_until,
)
from voxbench.testing.scripts import Reply, Script, ScriptCall, ScriptMessage

RATE = ev.OUTPUT_SAMPLE_RATE
THOUGHT_TOKENS = 3
"""Thinking tokens reported with every answer (counted apart from ``responseTokenCount``)."""
_CLOSES = {
    "server_error": (1011, "Internal error encountered."),
    "rate_limit": (1011, "RESOURCE_EXHAUSTED: quota exceeded"),
    "unauthorized": (1008, "API key not valid."),
}


@dataclass(frozen=True)
class _Resumable:
    """What a resumption handle restores: the conversation as of its issue."""

    issued: float
    messages: tuple[ScriptMessage, ...]
    calls: dict[str, ScriptCall]


class FakeGeminiLiveServer(WebsocketFake):
    """A Gemini-Live-compatible websocket server for tests and dry runs."""

    provider = "gemini-live"

    def __init__(
        self,
        script: Script,
        *,
        go_away_every: int | None = None,
        go_away_time_left: float = 1.0,
        handle_ttl: float = 7200.0,
        **options: Any,
    ) -> None:
        super().__init__(script, **options)
        self.go_away_every = go_away_every
        """Each connection's response that is announced by ``goAway`` (None: never)."""
        self.go_away_time_left = go_away_time_left
        self.handle_ttl = handle_ttl
        self.handles: dict[str, _Resumable] = {}
        """Every resumption handle issued, with what it restores."""
        self.resumed: list[str] = []
        """Handles that connections resumed, in order."""
        self.go_aways = 0
        """``goAway`` messages sent."""

    def resumable(self, handle: str) -> _Resumable | None:
        """What ``handle`` restores, or None when it is unknown or expired."""
        state = self.handles.get(handle)
        if state is None or time.monotonic() - state.issued > self.handle_ttl:
            return None
        return state

    @property
    def url(self) -> str:
        """The adapter's ``base_url``."""
        return f"ws://{self.host}:{self.port}"

    def check(self, connection: ServerConnection, request: Request) -> Response | None:
        url = urlsplit(request.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        key = query.get("key") or request.headers.get("x-goog-api-key")
        self.handshakes.append({"path": url.path, "has_key": bool(key)})
        if not url.path.endswith(ev.WS_PATH):
            return connection.respond(HTTPStatus.NOT_FOUND, f"expected {ev.WS_PATH}\n")
        if not key or (self.api_key is not None and key != self.api_key):
            return connection.respond(HTTPStatus.FORBIDDEN, "API key not valid.\n")
        return None

    def new_session(self, ws: ServerConnection) -> _Session:
        return _Session(self, ws)


class _Session:
    def __init__(self, server: FakeGeminiLiveServer, ws: ServerConnection) -> None:
        self.server = server
        self.ws = ws
        self.conversation = Conversation(server.script)
        self.setup: ev.Setup | None = None
        self.vad: EnergyVad | None = None
        self.auto_vad = True
        """Automatic activity detection is on (the default; ``disabled: true`` turns it off)."""
        self.in_activity = False
        self.audio = bytearray()
        self.outstanding: dict[str, ScriptCall] = {}
        self.answered: dict[str, Any] = {}
        self.task: asyncio.Task[None] | None = None
        self.duplicate = False
        self.history_open = False
        """A 3.x model's initial-history phase: clientContent is history, answered by none."""
        self.typed = False
        """Text came as realtime input inside the current activity."""
        self.responses = 0
        """Responses on this connection (``go_away_every`` counts them)."""
        self.ending: asyncio.Task[None] | None = None
        """The drop that follows a ``goAway``."""

    async def run(self) -> None:
        async for raw in self.ws:
            try:
                message = ev.parse_client_message(raw)
            except ProtocolError as exc:
                await self.ws.close(1007, str(exc)[:120])
                return
            self.server.received.append(message.dump())
            if self.setup is None and message.setup is None:
                await self.ws.close(1007, "the first message must be setup")
                return
            await self.handle(message)

    async def stop(self) -> None:
        for task in (self.task, self.ending):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def send(self, payload: dict[str, Any], *, structural: bool = False) -> None:
        text = json.dumps(payload)
        await self.ws.send(text)
        if structural and self.duplicate:
            await self.ws.send(text)

    async def refuse(self, message: ev.ClientMessage) -> str | None:
        """What the real service closes the socket for (strict mode), else None."""
        if not self.server.strict:
            return None
        if message.setup is not None:
            if self.setup is not None:
                # The Live API reference: the configuration cannot change while the
                # connection is open (a new one, resuming a handle, may change it).
                return "setup must be the first and only setup message of a connection"
            return _refuse_setup(message.setup)
        assert self.setup is not None
        data = message.realtimeInput
        if data is None:
            return None
        if (data.activityStart is not None or data.activityEnd is not None) and self.auto_vad:
            return "activityStart/activityEnd need automaticActivityDetection.disabled: true"
        if data.text is not None and (self.in_activity or not self.auto_vad):
            # Realtime text ends its turn by the server's activity detection; text in a
            # manual activity bracket is a combination no doc describes.
            return "realtimeInput.text needs automatic activity detection; use clientContent"
        return None

    async def handle(self, message: ev.ClientMessage) -> None:
        reason = await self.refuse(message)
        if reason is not None:
            await self.ws.close(1007, reason)
            return
        if message.realtimeInput is not None:
            self.history_open = False
        if message.setup is not None:
            resumption = message.setup.sessionResumption
            if resumption is not None and resumption.handle:
                state = self.server.resumable(resumption.handle)
                if state is None:
                    await self.ws.close(1007, "session resumption handle is not valid")
                    return
                self.conversation.messages = list(state.messages)
                self.conversation.calls = dict(state.calls)
                self.server.resumed.append(resumption.handle)
            self.setup = message.setup
            history = message.setup.historyConfig
            self.history_open = bool(history and history.initialHistoryInClientContent)
            detection = message.setup.realtimeInputConfig or ev.RealtimeInputConfig()
            aad = detection.automaticActivityDetection
            self.auto_vad = not (aad and aad.disabled)
            if self.auto_vad:
                self.vad = EnergyVad(
                    ev.INPUT_SAMPLE_RATE, silence_ms=aad and aad.silenceDurationMs or 500
                )
            await self.send({"setupComplete": {}})
        elif message.clientContent is not None:
            for turn in message.clientContent.turns:
                text = " ".join(p.text or "" for p in turn.parts)
                if turn.role == "model":
                    self.conversation.assistant(text)
                else:
                    self.conversation.user_text(text)
            if message.clientContent.turnComplete:
                if self.history_open:
                    self.history_open = False  # the history is complete; no answer to it
                else:
                    self.start_response(audio=False)
        elif message.realtimeInput is not None:
            await self.realtime_input(message.realtimeInput)
        elif message.toolResponse is not None:
            for response in message.toolResponse.functionResponses:
                if response.id in self.outstanding:
                    self.answered[response.id] = response.response
            if self.outstanding and set(self.outstanding) <= set(self.answered):
                for call_id in self.outstanding:
                    self.conversation.result(call_id, self.answered[call_id])
                self.outstanding.clear()
                self.answered.clear()
                self.start_response(audio=False)

    async def realtime_input(self, data: ev.RealtimeInput) -> None:
        if data.activityStart is not None:
            self.in_activity = True
            self.audio.clear()
        if data.audio is not None:
            pcm = b64decode(data.audio.data)
            self.audio.extend(pcm)
            if self.vad is not None:
                for kind, _ in self.vad.feed(pcm):
                    if kind == "started" and self.task is not None and not self.task.done():
                        await self.stop()  # barge-in
                        await self.send({"serverContent": {"interrupted": True}})
                    elif kind == "stopped":
                        self.start_response(audio=True)
        if data.text:
            self.conversation.user_text(data.text)
            if self.in_activity:
                self.typed = True  # answered at activityEnd
            else:
                self.start_response(audio=False)
        if data.activityEnd is not None and self.in_activity:
            self.in_activity = False
            spoke = bool(self.audio) or not self.typed
            self.typed = False
            self.start_response(audio=spoke)
        if data.audioStreamEnd and self.vad is not None and self.vad.speaking:
            self.start_response(audio=True)

    def start_response(self, audio: bool) -> None:
        self.server.responses += 1
        self.responses += 1
        number, t0 = self.server.responses, time.perf_counter()
        heard = self.conversation.user_audio() if audio else None
        self.audio.clear()
        self.task = asyncio.create_task(self.respond(number, heard, t0))

    async def go_away(self) -> None:
        """Announce the end of this connection, then drop it ``time_left`` later."""
        left = self.server.go_away_time_left
        self.server.go_aways += 1
        await self.send({"goAway": {"timeLeft": f"{left:g}s"}})

        async def end() -> None:
            await asyncio.sleep(left)
            self.ws.transport.abort()

        self.ending = asyncio.create_task(end())

    async def respond(self, number: int, heard: str | None, t0: float) -> None:
        if self.responses == self.server.go_away_every:
            await self.go_away()
        faults = fault_kinds(self.server.faults, number)
        self.duplicate = "duplicate" in faults
        close = next((_CLOSES[k] for k in faults if k in _CLOSES), None)
        if close is not None:
            await self.ws.close(*close)
            return
        reply = self.conversation.reply(list(faults.values()))
        transcribe = (
            heard is not None and self.setup and self.setup.inputAudioTranscription is not None
        )
        if transcribe and not self.server.out_of_order:
            await self.send({"serverContent": {"inputTranscription": {"text": heard}}})
        if "hang" in faults:
            await asyncio.sleep(3600)
        if reply.text:
            await self.server.prepare_speech(reply.text, RATE)  # ready beforehand
        await wait_until(t0 + self.server.ttfb)
        await self.speak(reply.text, t0, "drop" in faults)
        if reply.calls:
            await self.call(reply.calls, "drop" in faults and not reply.text)
            return
        self.conversation.assistant(reply.text)
        await self.send({"serverContent": {"generationComplete": True}}, structural=True)
        await self.send(
            {"serverContent": {"turnComplete": True}, "usageMetadata": _usage(heard or "", reply)},
            structural=True,
        )
        if self.setup is not None and self.setup.sessionResumption is not None:
            handle = self.server.new_id("resume-handle")
            self.server.handles[handle] = _Resumable(
                time.monotonic(), tuple(self.conversation.messages), dict(self.conversation.calls)
            )
            await self.send({"sessionResumptionUpdate": {"newHandle": handle, "resumable": True}})
        if transcribe and self.server.out_of_order:
            await self.send({"serverContent": {"inputTranscription": {"text": heard}}})

    async def drop(self) -> None:
        self.ws.transport.abort()
        await asyncio.sleep(3600)

    async def call(self, calls: Sequence[ScriptCall], drop: bool) -> None:
        made: dict[str, ScriptCall] = {}
        wire = []
        for call in calls:
            call_id = self.server.new_id("function-call")
            made[call_id] = call
            args: Any = call.arguments if call.raw_arguments is None else call.raw_arguments
            wire.append({"id": call_id, "name": call.name, "args": args})
        if drop:
            await self.drop()
        self.conversation.assistant("", made)
        self.outstanding = made
        await self.send({"toolCall": {"functionCalls": wire}}, structural=True)

    async def speak(self, text: str, t0: float, drop: bool) -> None:
        if not text:
            return
        assert self.setup is not None
        config = self.setup.generationConfig or ev.GenerationConfig()
        text_out = (config.responseModalities or ["AUDIO"]) == ["TEXT"]
        words = [w if i == 0 else " " + w for i, w in enumerate(text.split(" "))]
        chunks = (b"",) * len(words) if text_out else self.server.speech(text, RATE)
        sent = 0
        for i, chunk in enumerate(chunks):
            if i:
                # Yield even with no spacing: the client may share this event loop, and a
                # burst sent without yielding would reach it only after the last chunk.
                await asyncio.sleep(self.server.chunk)
            due = round(len(words) * (i + 1) / len(chunks))
            piece = "".join(words[sent:due])
            sent = due
            if text_out:
                await self.send({"serverContent": {"modelTurn": {"parts": [{"text": piece}]}}})
            else:
                if i == 0:
                    self.server.first_audio_delays.append(time.perf_counter() - t0)
                blob = {"mimeType": f"audio/pcm;rate={RATE}", "data": b64encode(chunk)}
                content: dict[str, Any] = {"modelTurn": {"parts": [{"inlineData": blob}]}}
                if piece and self.setup.outputAudioTranscription is not None:
                    content["outputTranscription"] = {"text": piece}
                await self.send({"serverContent": content})
            if drop:
                await self.drop()


def _refuse_setup(setup: ev.Setup) -> str | None:
    """Why the Live API closes on ``setup`` (1007), per its docs, or None."""
    model = setup.model.removeprefix("models/")
    config = setup.generationConfig or ev.GenerationConfig()
    modalities = config.responseModalities or []
    if len(modalities) > 1:
        return "responseModalities: set one modality per session (AUDIO or TEXT)"
    native = "native-audio" in model or model.startswith("gemini-3")
    if native and "TEXT" in modalities:
        return "Cannot extract voices from a non-audio request."
    thinking = config.thinkingConfig
    if thinking is not None:
        if thinking.thinkingLevel is not None and thinking.thinkingBudget is not None:
            return "thinkingConfig: thinkingLevel and thinkingBudget cannot both be set"
        level = thinking.thinkingLevel
        if level is not None and level.lower() not in ev.THINKING_LEVELS:
            return (
                f"thinkingConfig.thinkingLevel {level!r}: expected {'|'.join(ev.THINKING_LEVELS)}"
            )
    return None


def _usage(heard: str, reply: Reply) -> dict[str, Any]:
    said = len(reply.text.split()) + 5 * len(reply.calls)
    prompt = len(heard.split()) + 1
    thoughts = THOUGHT_TOKENS
    return {
        "promptTokenCount": prompt,
        "responseTokenCount": said,
        "thoughtsTokenCount": thoughts,
        "totalTokenCount": prompt + said + thoughts,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        "responseTokensDetails": [{"modality": "AUDIO", "tokenCount": said}],
    }
