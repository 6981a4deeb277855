"""A fake Ultravox: the call-creation REST endpoint and the call's websocket, on 127.0.0.1.

``POST /api/calls`` (``X-API-Key`` required) validates the body against
``voxbench.targets.realtime.ultravox.events.CreateCall`` and answers 201 with a ``callId``
and a ``joinUrl`` on the websocket port. On the socket: ``state`` messages
(listening → thinking → speaking → listening), agent ``transcript`` deltas then a final
``text``, binary s16le audio at the call's ``outputSampleRate`` (voice medium), and
``client_tool_invocation`` for each call, continued on ``client_tool_result``. User turns
come as ``user_text_message`` or as binary audio whose end a simulated VAD detects
(Ultravox has no client commit). ``initialMessages`` become the conversation's history.

The simulated VAD ends a turn at any pause of half a second, as Ultravox's own endpointing
can (its default turn endpoint delay is shorter still); a speaker who goes on within
``CONTINUATION_MS`` of that end interrupts the answer and *continues the same utterance*:
the script is not advanced (a real model hears both parts and answers the whole question,
never the next benchmark turn), and the interrupted answer's transcript is finalised with
what was said of it (every utterance gets its final transcript).

Faults are keyed by response number: ``server_error`` / ``rate_limit`` / ``unauthorized``
close the socket (1011 / 1011 / 1008), ``drop`` cuts it without a close frame after the
first chunk, ``hang`` never answers, ``malformed_args`` sends ``parameters`` as cut-off JSON
text, ``duplicate`` repeats structural messages (states, invocations, final transcripts).
``out_of_order=True`` sends the user's transcript after the agent is back to listening.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request as WsRequest
from websockets.http11 import Response as WsResponse

from voxbench.core.errors import ProtocolError
from voxbench.targets.realtime.ultravox import events as ev
from voxbench.testing.http_server import HTTPServer, Request, Responder
from voxbench.testing.realtime_common import (
    Conversation,
    EnergyVad,
    SpeechFake,
    Voice,
    fault_kinds,
    wait_until,
)
from voxbench.testing.scripts import Fault, Script, ScriptCall

CONTINUATION_MS = 1000
"""Speech resuming this soon after the VAD ended a turn continues that turn's utterance."""

_CLOSES = {
    "server_error": (1011, "internal error"),
    "rate_limit": (1011, "rate limited"),
    "unauthorized": (1008, "unauthorized"),
}


class FakeUltravoxServer(HTTPServer, SpeechFake):
    """Ultravox's REST call creation (this HTTP server) plus its call websocket."""

    provider = "ultravox"

    def __init__(
        self,
        script: Script,
        *,
        faults: Sequence[str | Fault] = (),
        ttfb_ms: float = 0.0,
        chunk_ms: float = 0.0,
        audio_chunk_ms: int = 100,
        out_of_order: bool = False,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        voice: Voice | None = None,
    ) -> None:
        super().__init__(host, port)
        self.setup_speech(
            script, faults, ttfb_ms, chunk_ms, audio_chunk_ms, out_of_order, api_key, voice
        )
        self.calls: dict[str, ev.CreateCall] = {}
        """Created calls by id, as requested."""
        self.audio_bytes = 0
        """User audio received (binary frames), all calls together."""
        self._ws: Server | None = None
        self.ws_port = 0

    @property
    def url(self) -> str:
        """The adapter's ``base_url`` (the REST API root)."""
        return self.origin

    async def start(self) -> None:
        await super().start()
        self._ws = await serve(self._join, self.host, 0, process_request=self._check, max_size=None)
        self.ws_port = self._ws.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._ws is not None:
            self._ws.close()
            await self._ws.wait_closed()
            self._ws = None
        await super().stop()

    async def __aenter__(self) -> FakeUltravoxServer:
        await self.start()
        return self

    # -- REST -----------------------------------------------------------------------------

    async def handle(self, request: Request, responder: Responder) -> None:
        if request.method != "POST" or request.path.rstrip("/") != "/api/calls":
            await responder.send(404, {"detail": "Not found."})
            return
        key = request.headers.get("x-api-key")
        if not key or (self.api_key is not None and key != self.api_key):
            await responder.send(403, {"detail": "Invalid API key."})
            return
        try:
            call = ev.CreateCall.model_validate(request.json())
        except ValidationError as exc:
            await responder.send(400, {"detail": str(exc.errors()[0])})
            return
        call_id = self.new_id("call")
        self.calls[call_id] = call
        join = f"ws://{self.host}:{self.ws_port}/calls/{call_id}?apiVersion=1"
        await responder.send(201, {"callId": call_id, "joinUrl": join, "created": time.time()})

    # -- websocket ------------------------------------------------------------------------

    def _check(self, connection: ServerConnection, request: WsRequest) -> WsResponse | None:
        call_id = urlsplit(request.path).path.rsplit("/", 1)[-1]
        if call_id not in self.calls:
            return connection.respond(HTTPStatus.NOT_FOUND, "no such call\n")
        return None

    async def _join(self, ws: ServerConnection) -> None:
        call_id = urlsplit(ws.request.path).path.rsplit("/", 1)[-1] if ws.request else ""
        call = _Call(self, ws, self.calls[call_id], call_id)
        with contextlib.suppress(ConnectionClosed):
            await call.run()
        await call.stop()


class _Call:
    def __init__(
        self, server: FakeUltravoxServer, ws: ServerConnection, config: ev.CreateCall, call_id: str
    ) -> None:
        self.server = server
        self.ws = ws
        self.config = config
        self.call_id = call_id
        self.conversation = Conversation(server.script)
        medium = config.medium.serverWebSocket
        self.in_rate = medium.inputSampleRate
        self.out_rate = medium.outputSampleRate or medium.inputSampleRate
        self.voice = config.initialOutputMedium != "MESSAGE_MEDIUM_TEXT"
        self.vad = EnergyVad(self.in_rate)
        self.ordinal = itertools.count()
        self.waiting: dict[str, ScriptCall] = {}
        self.task: asyncio.Task[None] | None = None
        self.duplicate = False
        self.stopped_ms: int | None = None
        """Where (ms of user audio) the VAD last ended a turn."""
        self.continuing = False
        """The user resumed right after that end: the next end closes the same utterance."""
        self.speaking: tuple[int, str, list[str]] | None = None
        """The agent utterance being spoken: ordinal, medium, the pieces sent so far."""
        self._history()

    def _history(self) -> None:
        names: dict[str, str] = {}
        for message in self.config.initialMessages:
            if message.role == "MESSAGE_ROLE_USER":
                self.conversation.user_text(message.text)
            elif message.role == "MESSAGE_ROLE_AGENT":
                self.conversation.assistant(message.text)
            elif message.role == "MESSAGE_ROLE_TOOL_CALL" and message.invocationId:
                names[message.invocationId] = message.toolName or ""
                args = json.loads(message.text or "{}")
                call = ScriptCall(message.toolName or "", args if isinstance(args, dict) else {})
                self.conversation.assistant(calls={message.invocationId: call})
            elif message.role == "MESSAGE_ROLE_TOOL_RESULT" and message.invocationId:
                self.conversation.result(message.invocationId, message.text)

    async def run(self) -> None:
        await self.send({"type": "call_started", "callId": self.call_id})
        await self.send({"type": "state", "state": "listening"})
        async for raw in self.ws:
            if isinstance(raw, bytes):
                self.server.audio_bytes += len(raw)
                for kind, ms in self.vad.feed(raw):
                    if kind == "started" and self.task is not None and not self.task.done():
                        resumed = ms + self.vad.prefix_ms  # reported prefix_ms early
                        after = resumed - (self.stopped_ms or 0)
                        self.continuing = self.stopped_ms is not None and after <= CONTINUATION_MS
                        await self.stop()  # barge-in
                        await self.send({"type": "playback_clear_buffer"})
                    elif kind == "stopped":
                        self.stopped_ms = ms
                        if self.continuing:
                            # The rest of the utterance the interrupted answer was for: its
                            # transcript went out with the first part; the script stays put.
                            self.continuing = False
                            self.start_response(None, spoken=True)
                        else:
                            heard = self.conversation.user_audio()
                            if not self.server.out_of_order:  # final as the turn ends
                                await self.user_transcript(heard)
                            self.start_response(heard, spoken=True)
                continue
            try:
                message = ev.parse_client_message(raw)
            except ProtocolError:
                await self.ws.close(1007, "invalid data message")
                return
            self.server.received.append(message.dump())
            await self.handle(message)

    async def handle(self, message: ev.ClientMessage) -> None:
        if isinstance(message, ev.UserTextMessage):
            self.conversation.user_text(message.text)
            self.start_response(None, spoken=False)
        elif isinstance(message, ev.ClientToolResult):
            if message.invocationId in self.waiting:
                self.waiting.pop(message.invocationId)
                self.conversation.result(message.invocationId, message.result or "")
                if not self.waiting:
                    self.start_response(None, spoken=False)
        elif isinstance(message, ev.SetOutputMedium):
            self.voice = message.medium == "voice"
        elif isinstance(message, ev.Ping):
            await self.send({"type": "pong", "timestamp": message.timestamp})

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        if self.speaking is not None:
            # An interrupted utterance still gets its final transcript: what was said of it.
            ordinal, medium, said = self.speaking
            self.speaking = None
            with contextlib.suppress(ConnectionClosed):
                await self.send(
                    {"type": "transcript", "role": "agent", "medium": medium}
                    | {"text": "".join(said), "final": True, "ordinal": ordinal},
                    structural=True,
                )

    async def send(self, payload: dict[str, Any], *, structural: bool = False) -> None:
        text = json.dumps(payload)
        await self.ws.send(text)
        if structural and self.duplicate:
            await self.ws.send(text)

    def start_response(self, heard: str | None, *, spoken: bool) -> None:
        self.server.responses += 1
        number, t0 = self.server.responses, time.perf_counter()
        self.task = asyncio.create_task(self.respond(number, heard if spoken else None, t0))

    async def respond(self, number: int, heard: str | None, t0: float) -> None:
        faults = fault_kinds(self.server.faults, number)
        self.duplicate = "duplicate" in faults
        close = next((_CLOSES[k] for k in faults if k in _CLOSES), None)
        if close is not None:
            await self.ws.close(*close)
            return
        await self.send({"type": "state", "state": "thinking"}, structural=True)
        reply = self.conversation.reply(list(faults.values()))
        if "hang" in faults:
            await asyncio.sleep(3600)
        if reply.text and self.voice:
            await self.server.prepare_speech(reply.text, self.out_rate)  # ready beforehand
        await wait_until(t0 + self.server.ttfb)
        drop = "drop" in faults
        if reply.text:
            await self.speak(reply.text, t0, drop)
        made: dict[str, ScriptCall] = {}
        for call in reply.calls:
            invocation = self.server.new_id("invocation")
            made[invocation] = call
            parameters: Any = call.arguments if call.raw_arguments is None else call.raw_arguments
            await self.send(
                {"type": "client_tool_invocation", "toolName": call.name}
                | {"invocationId": invocation, "parameters": parameters},
                structural=True,
            )
            if drop and not reply.text:
                await self.drop()
        self.conversation.assistant(reply.text, made)
        self.waiting.update(made)
        if made:
            return  # the agent waits for the results
        await self.send({"type": "state", "state": "listening"}, structural=True)
        if heard is not None and self.server.out_of_order:
            await self.user_transcript(heard)

    async def user_transcript(self, text: str) -> None:
        message = {"type": "transcript", "role": "user", "medium": "voice", "text": text}
        await self.send(message | {"final": True, "ordinal": next(self.ordinal)})

    async def drop(self) -> None:
        self.ws.transport.abort()
        await asyncio.sleep(3600)

    async def speak(self, text: str, t0: float, drop: bool) -> None:
        await self.send({"type": "state", "state": "speaking"}, structural=True)
        ordinal = next(self.ordinal)
        medium = "voice" if self.voice else "text"
        words = [w if i == 0 else " " + w for i, w in enumerate(text.split(" "))]
        chunks = self.server.speech(text, self.out_rate) if self.voice else (b"",) * len(words)
        sent = 0
        said: list[str] = []
        self.speaking = (ordinal, medium, said)
        for i, chunk in enumerate(chunks):
            if i:
                # Yield even with no spacing: the client may share this event loop, and a
                # burst sent without yielding would reach it only after the last chunk.
                await asyncio.sleep(self.server.chunk)
            if self.voice:
                if i == 0:
                    self.server.first_audio_delays.append(time.perf_counter() - t0)
                await self.ws.send(chunk)
            due = round(len(words) * (i + 1) / len(chunks))
            piece = "".join(words[sent:due])
            sent = due
            said.append(piece)
            if piece:
                await self.send(
                    {"type": "transcript", "role": "agent", "medium": medium, "delta": piece}
                    | {"final": False, "ordinal": ordinal}
                )
            if drop:
                await self.drop()
        self.speaking = None
        await self.send(
            {"type": "transcript", "role": "agent", "medium": medium, "text": text}
            | {"final": True, "ordinal": ordinal},
            structural=True,
        )
