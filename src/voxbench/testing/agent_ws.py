"""A fake agent speaking the voxbench agent protocol (``voxbench-agent/1``) on 127.0.0.1.

It stands in for a team's own voice agent behind ``websocket/<url>``: it reads every message
with the protocol's models (``voxbench.targets.agent.events``, strict for what voxbench
sends), answers ``session.start`` with ``session.ready`` (its own input/output rates, turn
detection and audio transport), and answers each user turn from its ``Script`` — the
benchmark's oracle with ``GoldenScript``. User turns are ``user.text`` + ``user.turn_end``,
audio + ``user.turn_end`` (client turn detection) or audio whose end its energy VAD
detects (agent turn detection, with ``speech.started`` / ``speech.stopped``, barge-in
answered by ``agent.interrupted``). Answers stream as ``agent.text`` pieces with binary
PCM16 (or ``agent.audio``) chunks, calls as ``tool.call`` continued on ``tool.result``, and
every response ends with ``turn.end``. ``session.start.history`` becomes the conversation.
With a ``tool_client`` the agent owns its tools: it calls them through that client (an HTTP
or MCP client of ``voxbench tools serve``) and never sends ``tool.call``.

Latency: each response's first output is held until ``ttfb_ms`` after its trigger (the
``user.turn_end``, the detected end of speech or the last ``tool.result``); the measured
delays are kept in ``first_output_delays``. Faults are keyed by response number:
``server_error`` / ``unauthorized`` close with 1011 / 1008, ``rate_limit`` sends an
``error`` message (fatal) and closes, ``drop`` cuts the connection without a close frame
after the first chunk, ``hang`` never answers, ``malformed_args`` sends cut-off JSON text as
``arguments``, ``duplicate`` sends every ``tool.call`` and ``turn.end`` twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from http import HTTPStatus
from typing import Any, Literal

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from voxbench.core.errors import ProtocolError
from voxbench.targets.agent import events as ev
from voxbench.targets.realtime.audio import b64decode, b64encode
from voxbench.testing.realtime_common import (
    Conversation,
    EnergyVad,
    WebsocketFake,
    fault_kinds,
    split_words,
    wait_until,
)
from voxbench.testing.scripts import Fault, Script, ScriptCall

ToolClient = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""The benchmark tool's name and arguments → its result, for an agent that owns its tools."""

_CLOSES = {"server_error": (1011, "internal error"), "unauthorized": (1008, "unauthorized")}


class FakeAgentServer(WebsocketFake):
    """A scripted agent on ``ws://127.0.0.1:PORT/agent``."""

    provider = "websocket"

    def __init__(
        self,
        script: Script,
        *,
        faults: Sequence[str | Fault] = (),
        input_sample_rate: int = 16000,
        output_sample_rate: int = 24000,
        turn_detection: Literal["client", "agent"] | None = None,
        audio_transport: Literal["binary", "base64"] = "binary",
        vad_silence_ms: int = 1000,
        tool_client: ToolClient | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(script, faults=faults, **kwargs)
        self.input_sample_rate = input_sample_rate
        self.output_sample_rate = output_sample_rate
        self.turn_detection = turn_detection
        """What the agent uses; None: what voxbench asks for (``client`` if it asks nothing)."""
        self.audio_transport = audio_transport
        self.vad_silence_ms = vad_silence_ms
        self.tool_client = tool_client
        """Set: the agent owns its tools and runs each call through it (e.g. an HTTP or MCP
        client of ``voxbench tools serve``) instead of sending ``tool.call``."""
        """Silence that ends a user turn under agent turn detection (the smoke benchmark's
        speech pauses for up to 500 ms inside a turn)."""
        self.starts: list[ev.SessionStart] = []
        """Every ``session.start`` received, one per connection."""
        self.audio_bytes = 0
        """User audio received, all connections together."""
        self.first_output_delays: list[float] = []
        """Seconds from each response's trigger to its first output (text or audio)."""

    @property
    def url(self) -> str:
        """The target's URL: ``websocket/<url>``."""
        return f"ws://{self.host}:{self.port}/agent"

    def check(self, connection: ServerConnection, request: Request) -> Response | None:
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer").strip()
        self.handshakes.append({"path": request.path, "auth": "bearer" if bearer else None})
        if self.api_key is not None and bearer != self.api_key:
            return connection.respond(HTTPStatus.UNAUTHORIZED, "invalid or missing token\n")
        if request.path.split("?")[0] != "/agent":
            return connection.respond(HTTPStatus.NOT_FOUND, "the agent is at /agent\n")
        return None

    def new_session(self, ws: ServerConnection) -> _AgentConnection:
        return _AgentConnection(self, ws)


class _AgentConnection:
    """One connection: its negotiated settings, conversation and response in progress."""

    def __init__(self, server: FakeAgentServer, ws: ServerConnection) -> None:
        self.server = server
        self.ws = ws
        self.conversation = Conversation(server.script)
        self.start: ev.SessionStart | None = None
        self.turn_detection = "client"
        self.vad = EnergyVad(server.input_sample_rate, silence_ms=server.vad_silence_ms)
        self.audio_in_turn = False
        self.text_in_turn = False
        self.waiting: dict[str, ScriptCall] = {}
        self.task: asyncio.Task[None] | None = None
        self.duplicate = False

    async def run(self) -> None:
        async for raw in self.ws:
            if isinstance(raw, bytes):
                await self.audio(raw)
                continue
            try:
                message = ev.parse_client_message(raw)
            except ProtocolError as exc:
                await self.ws.close(1007, str(exc)[:120])
                return
            self.server.received.append(message.dump())
            if self.start is None and not isinstance(message, ev.SessionStart):
                await self.ws.close(1002, "the first message must be session.start")
                return
            await self.handle(message)

    async def handle(self, message: ev.ClientMessage) -> None:
        if isinstance(message, ev.SessionStart):
            await self.open(message)
        elif isinstance(message, ev.UserText):
            self.conversation.user_text(message.text)
            self.text_in_turn = True
        elif isinstance(message, ev.UserAudio):
            await self.audio(b64decode(message.audio, "user.audio"))
        elif isinstance(message, ev.UserTurnEnd):
            await self.turn_end()
        elif isinstance(message, ev.ToolResult):
            if message.call_id in self.waiting:
                self.waiting.pop(message.call_id)
                self.conversation.result(message.call_id, message.result)
                if not self.waiting:
                    self.start_response(None)
        elif isinstance(message, ev.SessionEnd):
            await self.ws.close(1000, "bye")

    async def open(self, start: ev.SessionStart) -> None:
        if self.start is not None:
            await self.ws.close(1002, "session.start sent twice")
            return
        self.start = start
        self.server.starts.append(start)
        self.turn_detection = self.server.turn_detection or start.turn_detection or "client"
        for item in start.history:
            if item.role == "user":
                self.conversation.user_text(item.text)
                continue
            calls = {c.call_id: ScriptCall(c.name, dict(c.arguments)) for c in item.tool_calls}
            if calls:
                self.conversation.assistant(calls=calls)
                for call in item.tool_calls:
                    self.conversation.result(call.call_id, call.result)
            if item.text:
                self.conversation.assistant(item.text)
        ready = ev.SessionReady(
            input_sample_rate=self.server.input_sample_rate,
            output_sample_rate=self.server.output_sample_rate,
            turn_detection=self.turn_detection,
            audio_transport=self.server.audio_transport,
            agent="voxbench fake agent",
        )
        await self.send(ready.dump())

    async def audio(self, pcm: bytes) -> None:
        self.server.audio_bytes += len(pcm)
        self.audio_in_turn = True
        if self.turn_detection != "agent":
            return
        for kind, ms in self.vad.feed(pcm):
            if kind == "started":
                await self.send({"type": "speech.started"})
                if self.task is not None and not self.task.done():
                    await self.cancel()  # barge-in
                    await self.send({"type": "agent.interrupted"})
            else:
                await self.send({"type": "speech.stopped", "audio_end_ms": ms})
                await self.heard_turn()

    async def turn_end(self) -> None:
        if self.text_in_turn:
            self.text_in_turn = self.audio_in_turn = False
            self.start_response(None)
        elif self.audio_in_turn and self.turn_detection == "client":
            await self.heard_turn()

    async def heard_turn(self) -> None:
        self.audio_in_turn = False
        heard = self.conversation.user_audio()
        self.start_response(heard)

    async def cancel(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    async def stop(self) -> None:
        await self.cancel()

    async def send(self, payload: dict[str, Any], *, structural: bool = False) -> None:
        text = ev.parse_server_message(payload).to_json()  # only what the protocol defines
        await self.ws.send(text)
        if structural and self.duplicate:
            await self.ws.send(text)

    def start_response(self, heard: str | None) -> None:
        self.server.responses += 1
        number, t0 = self.server.responses, time.perf_counter()
        self.task = asyncio.create_task(self.respond(number, heard, t0))

    async def respond(self, number: int, heard: str | None, t0: float) -> None:
        faults = fault_kinds(self.server.faults, number)
        self.duplicate = "duplicate" in faults
        close = next((_CLOSES[k] for k in faults if k in _CLOSES), None)
        if close is not None:
            await self.ws.close(*close)
            return
        if "rate_limit" in faults:
            await self.send({"type": "error", "message": "too many requests", "fatal": True})
            await self.ws.close(1013, "try again later")
            return
        if heard is not None:
            await self.send({"type": "user.transcript", "text": heard})
        reply = self.conversation.reply(list(faults.values()))
        if "hang" in faults:
            await asyncio.sleep(3600)
        spoken = self.start is not None and self.start.modality == "audio"
        if reply.text and spoken:
            await self.server.prepare_speech(
                reply.text, self.server.output_sample_rate
            )  # ready beforehand
        await wait_until(t0 + self.server.ttfb)
        drop = "drop" in faults
        if reply.text:
            await self.speak(reply.text, t0, spoken=spoken, drop=drop)
        while reply.calls and self.server.tool_client is not None:
            # The agent owns its tools: it calls them itself (over a tool server), then
            # goes on with the results, all in one response.
            made = {self.server.new_id("call"): call for call in reply.calls}
            self.conversation.assistant("", made)
            for call_id, call in made.items():
                result = await self.server.tool_client(call.name, dict(call.arguments))
                self.conversation.result(call_id, result)
            reply = self.conversation.reply([])
            if reply.text:
                await self.speak(reply.text, t0, spoken=spoken, drop=False)
        made = {}
        for call in reply.calls:
            call_id = self.server.new_id("call")
            made[call_id] = call
            arguments: Any = call.arguments if call.raw_arguments is None else call.raw_arguments
            if not reply.text and len(made) == 1:
                self.server.first_output_delays.append(time.perf_counter() - t0)
            await self.send(
                {
                    "type": "tool.call",
                    "call_id": call_id,
                    "name": call.name,
                    "arguments": arguments,
                },
                structural=True,
            )
            if drop and not reply.text:
                await self.drop()
        self.conversation.assistant(reply.text, made)
        self.waiting.update(made)
        if made:
            return  # the agent waits for the results
        await self.send({"type": "turn.end", "status": "completed"}, structural=True)

    async def speak(self, text: str, t0: float, *, spoken: bool, drop: bool) -> None:
        rate = self.server.output_sample_rate
        words = split_words(text)
        chunks = self.server.speech(text, rate) if spoken else (b"",) * len(words)
        sent = 0
        for i, chunk in enumerate(chunks):
            if i:
                # Yield even with no spacing: the client may share this event loop.
                await asyncio.sleep(self.server.chunk)
            due = round(len(words) * (i + 1) / len(chunks))
            piece, sent = "".join(words[sent:due]), due
            if i == 0:
                self.server.first_output_delays.append(time.perf_counter() - t0)
            if spoken:
                if i == 0:
                    self.server.first_audio_delays.append(time.perf_counter() - t0)
                if self.server.audio_transport == "base64":
                    await self.send({"type": "agent.audio", "audio": b64encode(chunk)})
                else:
                    await self.ws.send(chunk)
            if piece:
                await self.send({"type": "agent.text", "text": piece})
            if drop:
                await self.drop()

    async def drop(self) -> None:
        self.ws.transport.abort()
        await asyncio.sleep(3600)
