"""``twilio-stream/<url>``: a telephony bot evaluated unchanged, with voxbench playing Twilio.

voxbench connects to the bot's Media Streams websocket as Twilio does for a bidirectional
``<Connect><Stream>``: ``connected``, ``start`` (a call with μ-law 8 kHz mono inbound audio),
then the caller's audio as ``media`` messages of 20 ms, without a pause for as long as the
call lasts (silence between turns, as a phone line), and ``stop`` when it hangs up. The bot
answers with ``media`` (μ-law 8 kHz), ``mark`` (echoed back once the audio queued before it
has played, as Twilio does) and ``clear`` (barge-in: the queued audio is dropped, the marks
come back at once, and the session reports ``Interrupted``).

A phone line carries no turn boundaries and no text: the bot's VAD decides when the caller
has finished (``server_vad``), and a response is over when its audio has played and
``turn_end_silence`` seconds (default 1.0) pass without more. What the bot said is heard from
its audio (the run's heard-text ASR). Tools: a telephony bot calls its own tools; serve it the
benchmark's with ``voxbench tools serve``. A dropped stream is reported like the realtime
adapters' drops; the runner reconnects as a new call (a bot keeps no history across calls).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import secrets
import time
from typing import Any

from voxbench.audio.mulaw import mulaw_decode, mulaw_encode
from voxbench.core.errors import ConfigError
from voxbench.core.events import AssistantAudio, Interrupted, TurnComplete
from voxbench.core.secrets import redact_text
from voxbench.core.session import SessionSetup, TargetInfo
from voxbench.targets.agent import twilio_events as tw
from voxbench.targets.agent.websocket import agent_url
from voxbench.targets.realtime.audio import PcmResampler, b64decode, is_silent
from voxbench.targets.realtime.base import RealtimeSession

FRAME_BYTES = tw.SAMPLE_RATE * tw.CHUNK_MS // 1000 * 2
"""One 20 ms media message of PCM16 before μ-law encoding."""


def _sid(prefix: str) -> str:
    return prefix + secrets.token_hex(16)


class TwilioStreamSession(RealtimeSession):
    """One call to a bot that serves Twilio Media Streams."""

    provider = "twilio-stream"

    def __init__(
        self, model: str, *, base_url: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        super().__init__(options)
        self.url = agent_url(model, base_url)
        self.turn_end_silence = float(self.options.get("turn_end_silence", 1.0))
        self.info = TargetInfo(
            name=f"twilio-stream/{redact_text(self.url)}",
            input_modality="audio",
            output_modality="audio",
            input_sample_rate=tw.SAMPLE_RATE,
            output_sample_rate=tw.SAMPLE_RATE,
        )
        self.server_vad = True
        """The bot's own VAD ends the caller's turns (Twilio has no end-of-turn)."""
        self.stream_sid = _sid("MZ")
        self.account_sid = _sid("AC")
        self.call_sid = _sid("CA")
        self._sequence = 0
        self._chunks = 0
        self._resample = PcmResampler(tw.SAMPLE_RATE)
        self._pending = b""
        self._turn_ended = False
        self._spoken = False
        """The bot has sent audio since the caller last spoke: the answer has begun."""
        self._answering = False
        self._play_until = 0.0
        self._marks: dict[str, asyncio.TimerHandle] = {}
        """Marks waiting for the audio queued before them to play, by name."""
        self._timer: asyncio.Task[None] | None = None

    def _next_sequence(self) -> str:
        self._sequence += 1
        return str(self._sequence)

    async def send_message(self, message: tw.TwilioMessage) -> None:
        await self.send_text(message.to_json())

    async def start(self, setup: SessionSetup) -> None:
        if setup.modality != "audio":
            raise ConfigError(
                "a Twilio Media Streams bot takes calls: audio only",
                field="mode",
                expected="--mode audio with a twilio-stream target",
            )
        await self.open_socket(self.url)
        await self.send_message(tw.Connected())
        start = tw.StartInfo(
            streamSid=self.stream_sid, accountSid=self.account_sid, callSid=self.call_sid
        )
        await self.send_message(
            tw.Start(sequenceNumber=self._next_sequence(), start=start, streamSid=self.stream_sid)
        )
        self.start_receiving()

    # -- the caller -----------------------------------------------------------------------

    async def send_user_text(self, text: str) -> None:
        return None  # unreachable: start refuses text mode

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        if not self._turn_ended and not is_silent(pcm):
            self._spoken = False  # the caller is talking: what the bot said before is older
        self._pending += self._resample(pcm, sample_rate)
        while len(self._pending) >= FRAME_BYTES:
            frame, self._pending = self._pending[:FRAME_BYTES], self._pending[FRAME_BYTES:]
            await self._send_frame(frame)

    async def _send_frame(self, frame: bytes) -> None:
        self._chunks += 1
        media = tw.InboundMedia(
            chunk=str(self._chunks),
            timestamp=str((self._chunks - 1) * tw.CHUNK_MS),
            payload=base64.b64encode(mulaw_encode(frame)).decode("ascii"),
        )
        await self.send_message(
            tw.Media(sequenceNumber=self._next_sequence(), media=media, streamSid=self.stream_sid)
        )

    async def end_user_turn(self) -> None:
        # The caller stopped talking; the line stays open and the bot's VAD hears the rest.
        self._turn_ended = True
        self._maybe_answering()

    def _maybe_answering(self) -> None:
        if self._turn_ended and self._spoken and not self._answering:
            self._answering = True
            self._timer = asyncio.create_task(self._complete_when_quiet())

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        return None  # Twilio carries no tool calls (served tools are bridged elsewhere)

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        for handle in self._marks.values():
            handle.cancel()
        if self.connected:
            stop = tw.StopInfo(accountSid=self.account_sid, callSid=self.call_sid)
            await self.send_message(
                tw.Stop(sequenceNumber=self._next_sequence(), streamSid=self.stream_sid, stop=stop)
            )
        await super().close()

    # -- the bot --------------------------------------------------------------------------

    async def on_message(self, message: str | bytes) -> None:
        if isinstance(message, bytes):
            return  # Twilio ignores binary frames
        msg = tw.parse_bot_message(message)
        if isinstance(msg, tw.BotMedia):
            pcm = mulaw_decode(b64decode(msg.media.payload, "media.payload"))
            if not pcm:
                return
            now = time.monotonic()
            self._play_until = max(now, self._play_until) + len(pcm) / 2 / tw.SAMPLE_RATE
            self.emit(AssistantAudio(pcm=pcm, sample_rate=tw.SAMPLE_RATE))
            self._spoken = True
            self._maybe_answering()
        elif isinstance(msg, tw.BotMark):
            name = msg.mark.name
            delay = max(0.0, self._play_until - time.monotonic())
            self._marks[name] = asyncio.get_running_loop().call_later(
                delay, lambda: asyncio.ensure_future(self._echo_mark(name))
            )
        elif isinstance(msg, tw.BotClear):
            # The queued audio is dropped: its marks come back now, as Twilio sends them.
            self._play_until = time.monotonic()
            for name, handle in list(self._marks.items()):
                handle.cancel()
                await self._echo_mark(name)
            self.emit(Interrupted())
        elif isinstance(msg, tw.UnknownBotMessage):
            self.note_unknown(msg.event)

    async def _echo_mark(self, name: str) -> None:
        self._marks.pop(name, None)
        await self.send_message(
            tw.Mark(
                sequenceNumber=self._next_sequence(),
                streamSid=self.stream_sid,
                mark=tw.MarkName(name=name),
            )
        )

    async def _complete_when_quiet(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                wait = self._play_until + self.turn_end_silence - time.monotonic()
                if wait <= 0:
                    break
                await asyncio.sleep(wait)
            self._answering = self._turn_ended = self._spoken = False
            self._timer = None
            self.emit(TurnComplete(status="completed"))
