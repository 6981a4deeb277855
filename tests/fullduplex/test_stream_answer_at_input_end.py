"""Issue 30 item 2: a real-time cascade answer was lost when local Whisper was still
transcribing as the input ended (``status completed``, ``errors []``, no response).

The race: in real time the stream stopped listening the moment the input ended and closed
the session, cancelling the turn the cascade was still transcribing; virtual time waits for
an answer in flight, real time did not. Now both wait (up to ``response_timeout_s``): the
answer is recorded, starting after the input's end (and so not in ``output.wav``), or an
error says it never came."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from voxbench.audio.wav import Audio
from voxbench.core.events import AssistantTextDelta, SessionEvent, TurnComplete
from voxbench.core.session import Session, SessionSetup, TargetInfo
from voxbench.fullduplex import stream as stream_module
from voxbench.fullduplex.stream import StreamOptions, stream_input
from voxbench.targets.cascade import CascadeSession

RATE = 16_000


@dataclass
class _Transcript:
    text: str


class SlowWhisper:
    """A local STT that takes ``seconds`` to transcribe (blocking, in a worker thread)."""

    name = "local/slow-whisper"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def transcribe(self, audio: Audio, *args: Any, **kwargs: Any) -> _Transcript:
        time.sleep(self.seconds)
        return _Transcript("what is the time")


class Beeper:
    name = "local/beeper"
    sample_rate = 16_000

    def synthesize(self, text: str, voice: str | None = None) -> Audio:
        t = np.arange(int(0.4 * self.sample_rate)) / self.sample_rate
        return Audio((0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32), self.sample_rate)


class EchoText(Session):
    """A text target answering every turn at once."""

    def __init__(self) -> None:
        self.info = TargetInfo(name="test/echo", in_process=True)
        self.queue: asyncio.Queue[SessionEvent] = asyncio.Queue()

    async def start(self, setup: SessionSetup) -> None:
        return None

    async def send_user_text(self, text: str) -> None:
        return None

    async def end_user_turn(self) -> None:
        await self.queue.put(AssistantTextDelta(text="It is noon."))
        await self.queue.put(TurnComplete())

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        return None

    async def events(self) -> AsyncIterator[SessionEvent]:
        while True:
            yield await self.queue.get()

    async def close(self) -> None:
        return None


async def test_an_answer_still_transcribing_when_the_input_ends_is_kept(monkeypatch) -> None:
    audio = Audio(np.zeros(RATE, np.float32), RATE)  # 1 s of input
    # The user's turn ends 0.1 s before the input does; transcription takes 0.6 s.
    monkeypatch.setattr(stream_module, "turn_actions", lambda a, o: ([(0.9, "end_turn")], []))

    def make() -> Session:
        return CascadeSession(EchoText(), SlowWhisper(0.6), Beeper())  # type: ignore[arg-type]

    out, result = await stream_input(make, audio, StreamOptions(realtime=True))
    assert result.clock == "realtime"
    assert result.errors == []
    (response,) = result.responses
    assert response["end_of_turn"] == 0.9
    assert response["first_audio"] is not None and response["first_audio"] > 1.0, response
    assert result.assistant_text == "It is noon."
    assert result.user_transcript == "what is the time"
    assert {t["stage"] for t in result.stage_timings} >= {"stt"}
    assert out is not None and out.frames == RATE  # the output keeps the input's length
    assert result.dropped_audio_s > 0  # the answer played after the input ended


async def test_an_answer_that_never_completes_is_an_error(monkeypatch) -> None:
    audio = Audio(np.zeros(RATE // 2, np.float32), RATE)
    monkeypatch.setattr(stream_module, "turn_actions", lambda a, o: ([(0.4, "end_turn")], []))

    def make() -> Session:
        return CascadeSession(EchoText(), SlowWhisper(5.0), Beeper())  # type: ignore[arg-type]

    began = time.monotonic()
    _, result = await stream_input(
        make, audio, StreamOptions(realtime=True, response_timeout_s=0.5)
    )
    assert time.monotonic() - began < 4.0
    assert any("no TurnComplete" in e for e in result.errors), result.errors
