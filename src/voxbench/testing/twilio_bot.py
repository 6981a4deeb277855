"""A fake telephony bot serving Twilio Media Streams, for ``twilio-stream/<url>``.

It accepts the connection Twilio would open, reads every message with the Media Streams
models (``voxbench.targets.agent.twilio_events``, strict for what the client sends): first
``connected``, then ``start`` with a μ-law 8 kHz mono inbound track, then ``media``. Like a
production bot it finds the caller's turns itself: an energy VAD on the decoded audio ends a
turn after ``vad_silence_ms`` of silence, and a caller talking over its answer makes it stop
and send ``clear``. It answers from its ``Script`` (``GoldenScript``: the oracle), calling
its tools through ``tool_client`` (a client of ``voxbench tools serve``: Twilio carries no
tool calls), and speaks the answer as μ-law ``media`` messages, ``ttfb_ms`` after the end of
the caller's speech, followed by a ``mark``. Give it a real ``voice`` (eSpeak) when the
run's heard-text ASR must understand it.

Faults, keyed by response number: ``drop`` cuts the connection after the first chunk,
``hang`` never answers, ``server_error`` closes with 1011.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from voxbench.audio.mulaw import mulaw_decode, mulaw_encode
from voxbench.core.errors import ProtocolError
from voxbench.targets.agent import twilio_events as tw
from voxbench.testing.realtime_common import (
    Conversation,
    EnergyVad,
    WebsocketFake,
    fault_kinds,
    wait_until,
)
from voxbench.testing.scripts import Fault, Script

ToolClient = Callable[[str, dict[str, Any]], Awaitable[Any]]


class FakeTwilioBot(WebsocketFake):
    """A scripted telephony bot on ``ws://127.0.0.1:PORT/media``."""

    provider = "twilio-stream"

    def __init__(
        self,
        script: Script,
        *,
        faults: Sequence[str | Fault] = (),
        vad_silence_ms: int = 1000,
        tool_client: ToolClient | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("audio_chunk_ms", 20)
        super().__init__(script, faults=faults, **kwargs)
        self.vad_silence_ms = vad_silence_ms
        self.tool_client = tool_client
        self.starts: list[tw.Start] = []
        """Every ``start`` received, one per call."""
        self.stops = 0
        self.media_in = 0
        """``media`` messages received, all calls together."""
        self.marks_played: list[str] = []
        """Marks the client sent back (the audio before them played)."""

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}/media"

    def check(self, connection: ServerConnection, request: Request) -> Response | None:
        self.handshakes.append({"path": request.path})
        return None

    def new_session(self, ws: ServerConnection) -> _BotCall:
        return _BotCall(self, ws)


class _BotCall:
    def __init__(self, server: FakeTwilioBot, ws: ServerConnection) -> None:
        self.server = server
        self.ws = ws
        self.conversation = Conversation(server.script)
        self.vad = EnergyVad(tw.SAMPLE_RATE, silence_ms=server.vad_silence_ms)
        self.stream_sid = ""
        self.answers = 0
        self.task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        expected = "connected"
        async for raw in self.ws:
            try:
                # One of tw.TWILIO_MESSAGES' classes, each with its ``event`` tag.
                message = cast(
                    "tw.Connected | tw.Start | tw.Media | tw.Mark | tw.Stop",
                    tw.parse_twilio_message(raw),
                )
            except ProtocolError as exc:
                await self.ws.close(1007, str(exc)[:120])
                return
            self.server.received.append(message.dump())
            if expected and message.event != expected:
                await self.ws.close(1002, f"expected {expected} first")
                return
            if isinstance(message, tw.Connected):
                expected = "start"
            elif isinstance(message, tw.Start):
                expected = ""
                self.stream_sid = message.streamSid
                self.server.starts.append(message)
            elif isinstance(message, tw.Media):
                await self.hear(base64.b64decode(message.media.payload))
            elif isinstance(message, tw.Mark):
                self.server.marks_played.append(message.mark.name)
            elif isinstance(message, tw.Stop):
                self.server.stops += 1
                await self.ws.close(1000, "call ended")
                return

    async def hear(self, payload: bytes) -> None:
        self.server.media_in += 1
        for kind, _ in self.vad.feed(mulaw_decode(payload)):
            if kind == "started" and self.task is not None and not self.task.done():
                await self.stop()  # barge-in: stop talking, drop what Twilio queued
                await self.send({"event": "clear", "streamSid": self.stream_sid})
            elif kind == "stopped":
                self.start_response()

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    async def send(self, payload: dict[str, Any]) -> None:
        await self.ws.send(tw.parse_bot_message(payload).to_json())

    def start_response(self) -> None:
        self.server.responses += 1
        number, t0 = self.server.responses, time.perf_counter()
        self.task = asyncio.create_task(self.respond(number, t0))

    async def respond(self, number: int, t0: float) -> None:
        faults = fault_kinds(self.server.faults, number)
        if "server_error" in faults:
            await self.ws.close(1011, "internal error")
            return
        self.conversation.user_audio()
        reply = self.conversation.reply(list(faults.values()))
        if "hang" in faults:
            await asyncio.sleep(3600)
        while reply.calls and self.server.tool_client is not None:
            made = {self.server.new_id("call"): call for call in reply.calls}
            self.conversation.assistant("", made)
            for call_id, call in made.items():
                self.conversation.result(
                    call_id, await self.server.tool_client(call.name, dict(call.arguments))
                )
            reply = self.conversation.reply([])
        self.conversation.assistant(reply.text)
        chunks = self.server.speech(reply.text, tw.SAMPLE_RATE) if reply.text else ()
        await wait_until(t0 + self.server.ttfb)
        for i, chunk in enumerate(chunks):
            if i == 0:
                self.server.first_audio_delays.append(time.perf_counter() - t0)
            payload = base64.b64encode(mulaw_encode(chunk)).decode("ascii")
            await self.send(
                {"event": "media", "streamSid": self.stream_sid, "media": {"payload": payload}}
            )
            if "drop" in faults:
                self.ws.transport.abort()
                await asyncio.sleep(3600)
            await asyncio.sleep(self.server.chunk)
        self.answers += 1
        await self.send(
            {"event": "mark", "streamSid": self.stream_sid, "mark": {"name": f"answer-{number}"}}
        )
