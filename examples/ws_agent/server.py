"""A reference agent for the voxbench agent protocol (voxbench-agent/1), in plain Python.

Run it, then point voxbench at it::

    python examples/ws_agent/server.py --port 8765            # voxbench ends each turn
    python examples/ws_agent/server.py --port 8765 --vad      # this agent's own VAD does
    voxbench run smoke -t websocket/ws://127.0.0.1:8765/agent --mode audio

It needs only the ``websockets`` package and the standard library: copy it as the start of
your own bridge (replace ``Agent.answer_text`` / ``Agent.answer_audio`` with calls into your
bot). What it does, so every message of the protocol appears once:

- ``session.start`` → ``session.ready`` (16 kHz in, 16 kHz out, turn detection, binary audio);
- a text turn (``user.text`` then ``user.turn_end``) is echoed back word by word as
  ``agent.text``; a user saying goodbye gets a ``tool.call`` of ``end_session`` (when the
  benchmark offers it), and once the ``tool.result`` comes, a goodbye;
- an audio turn is echoed back: the user's own audio as binary frames, with an
  ``agent.text`` saying so; with ``--vad`` an energy VAD sends ``speech.started`` /
  ``speech.stopped``, ends the turn after 0.8 s of silence, and stops an echo the user talks
  over (``agent.interrupted``);
- every response ends with ``turn.end``.

The protocol itself is described in docs/agent-protocol.md.
"""

from __future__ import annotations

import argparse
import array
import asyncio
import contextlib
import itertools
import json
import math
import re
import sys
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

RATE = 16000
FRAME = RATE // 50 * 2  # 20 ms of PCM16
SPEECH_RMS = 0.02  # of full scale
END_OF_TURN_SILENCE_MS = 800
GOODBYE = re.compile(r"\b(bye|goodbye)\b", re.IGNORECASE)


def loud(frame: bytes) -> bool:
    """Whether a PCM16 frame's RMS is above the speech threshold."""
    samples = array.array("h", frame[: len(frame) // 2 * 2])
    if sys.byteorder == "big":
        samples.byteswap()
    if not samples:
        return False
    return math.sqrt(sum(s * s for s in samples) / len(samples)) / 32768 > SPEECH_RMS


class Agent:
    """One connection: one conversation."""

    def __init__(self, ws: ServerConnection, vad: bool) -> None:
        self.ws = ws
        self.vad = vad
        self.tools: set[str] = set()
        self.modality = "text"
        self.text: list[str] = []
        self.audio = bytearray()
        self.pending: dict[str, str] = {}  # call id → what to say once it is answered
        self.ids = itertools.count(1)
        self.speaking: asyncio.Task[None] | None = None
        self.in_speech = False
        self.silence_ms = 0
        self.rest = b""

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def serve(self) -> None:
        async for message in self.ws:
            if isinstance(message, bytes):
                await self.on_audio(message)
                continue
            data = json.loads(message)
            kind = data.get("type")
            if kind == "session.start":
                self.tools = {tool["name"] for tool in data.get("tools", [])}
                self.modality = data.get("modality", "text")
                await self.send(
                    {
                        "type": "session.ready",
                        "input_sample_rate": RATE,
                        "output_sample_rate": RATE,
                        "turn_detection": "agent" if self.vad else "client",
                        "audio_transport": "binary",
                        "agent": "voxbench reference echo agent",
                    }
                )
            elif kind == "user.text":
                self.text.append(data["text"])
            elif kind == "user.turn_end":
                await self.end_of_turn()
            elif kind == "tool.result":
                said = self.pending.pop(data["call_id"], None)
                if said is not None:
                    await self.say(said)
                    await self.send({"type": "turn.end"})
            elif kind == "session.end":
                return

    async def end_of_turn(self) -> None:
        if self.text:
            text, self.text = " ".join(self.text), []
            await self.answer_text(text)
        elif self.audio:
            audio, self.audio = bytes(self.audio), bytearray()
            self.speaking = asyncio.create_task(self.answer_audio(audio))

    async def answer_text(self, text: str) -> None:
        if GOODBYE.search(text) and "end_session" in self.tools:
            call_id = f"call_{next(self.ids)}"
            self.pending[call_id] = "Goodbye!"
            await self.send(
                {"type": "tool.call", "call_id": call_id, "name": "end_session", "arguments": {}}
            )
            return  # the turn goes on when the result comes
        await self.say(f"You said: {text}")
        await self.send({"type": "turn.end"})

    async def say(self, text: str) -> None:
        for i, word in enumerate(text.split(" ")):
            await self.send({"type": "agent.text", "text": word if i == 0 else " " + word})

    async def answer_audio(self, audio: bytes) -> None:
        first = next((i for i in range(0, len(audio), FRAME) if loud(audio[i : i + FRAME])), 0)
        audio = audio[first:]  # the silence streamed before the user spoke is not echoed
        await self.send({"type": "agent.text", "text": "(an echo of what you said)"})
        step = FRAME * 5  # 100 ms per frame, paced like a real voice
        for i in range(0, len(audio), step):
            await self.ws.send(audio[i : i + step])
            await asyncio.sleep(0.1)
        await self.send({"type": "turn.end"})

    async def on_audio(self, pcm: bytes) -> None:
        if not self.vad and self.speaking is not None and not self.speaking.done():
            return  # voxbench ends the turns: what it streams while the echo plays is silence
        self.audio += pcm
        if not self.vad:
            return
        data, usable = self.rest + pcm, 0
        for start in range(0, len(data) - FRAME + 1, FRAME):
            usable = start + FRAME
            await self.on_frame(loud(data[start : start + FRAME]))
        self.rest = data[usable:]

    async def on_frame(self, speech: bool) -> None:
        if speech and not self.in_speech:
            self.in_speech, self.silence_ms = True, 0
            await self.send({"type": "speech.started"})
            if self.speaking is not None and not self.speaking.done():
                self.speaking.cancel()  # the user talks over the echo: stop it
                with contextlib.suppress(asyncio.CancelledError):
                    await self.speaking
                await self.send({"type": "agent.interrupted"})
                await self.send({"type": "turn.end", "status": "cancelled"})
            return
        if not self.in_speech:
            self.audio.clear()  # silence before the user speaks is not part of the turn
            return
        self.silence_ms = 0 if speech else self.silence_ms + 20
        if self.silence_ms >= END_OF_TURN_SILENCE_MS:
            self.in_speech = False
            await self.send({"type": "speech.stopped"})
            await self.end_of_turn()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--vad", action="store_true", help="detect the end of turns here")
    args = parser.parse_args()

    async def handle(ws: ServerConnection) -> None:
        if ws.request is not None and ws.request.path.split("?")[0] != "/agent":
            await ws.close(1008, "the agent is at /agent")
            return
        agent = Agent(ws, args.vad)
        with contextlib.suppress(ConnectionClosed):
            await agent.serve()
        if agent.speaking is not None:
            agent.speaking.cancel()

    async with serve(handle, args.host, args.port) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"voxbench agent listening on ws://{args.host}:{port}/agent", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
