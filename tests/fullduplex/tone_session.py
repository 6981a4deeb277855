"""An in-process Session for driver tests: answers each ended turn with a tone after a
fixed processing delay (a stand-in for a voice agent whose latency is known)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from voxbench.core.events import AssistantAudio, SessionEvent, TurnComplete
from voxbench.core.session import Session, SessionSetup, TargetInfo
from voxbench.targets.registry import TargetContext

TONE_RATE = 24_000


def tone(seconds: float, rate: int = TONE_RATE, freq: float = 440.0) -> bytes:
    t = np.arange(round(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * freq * t) * 32767).astype("<i2").tobytes()


class ToneSession(Session):
    """Answers every ``end_user_turn`` with ``tone_s`` of tone after ``delay`` seconds."""

    def __init__(
        self, context: TargetContext | None = None, *, delay: float = 0.2, tone_s: float = 0.6
    ) -> None:
        options = context.options if context is not None else {}
        self.delay = float(options.get("delay", delay))
        self.tone_s = float(options.get("tone_s", tone_s))
        self.info = TargetInfo(
            name="test/tone",
            input_modality="audio",
            output_modality="audio",
            output_sample_rate=TONE_RATE,
            in_process=True,
        )
        self.queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self.audio_seconds = 0.0
        self.turns_ended = 0
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self, setup: SessionSetup) -> None:
        self.setup = setup

    async def send_user_text(self, text: str) -> None:
        return None

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        self.audio_seconds += len(pcm) / 2 / sample_rate

    async def end_user_turn(self) -> None:
        self.turns_ended += 1
        self.tasks.append(asyncio.create_task(self._answer()))

    async def _answer(self) -> None:
        await asyncio.sleep(self.delay)
        pcm = tone(self.tone_s)
        step = int(0.1 * TONE_RATE) * 2
        for i in range(0, len(pcm), step):
            await self.queue.put(AssistantAudio(pcm=pcm[i : i + step], sample_rate=TONE_RATE))
        await self.queue.put(TurnComplete())

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        return None

    async def events(self) -> AsyncIterator[SessionEvent]:
        while True:
            yield await self.queue.get()

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
