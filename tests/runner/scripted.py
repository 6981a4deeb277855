"""A scripted in-process Session for runner tests: each turn does what the test says."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.events import TargetError, ToolCallRequested, TurnComplete
from voxbench.targets.inprocess import InProcessSession

Step = Callable[["ScriptedSession", str], Awaitable[None]]


class ScriptedSession(InProcessSession):
    """Runs ``steps[i]`` on turn i of the benchmark (found by its text); says "ok" otherwise."""

    def __init__(self, steps: dict[int, Step] | None = None, benchmark: str = "smoke") -> None:
        super().__init__("test/scripted")
        self.steps = steps or {}
        self.texts = [t.text for t in load_benchmark(benchmark).turns]
        self.turns_heard: list[str] = []
        self.history_len = 0

    def on_start(self, setup) -> None:
        self.history_len = len(setup.history)

    async def respond(self, user_text: str) -> None:
        index = self.texts.index(user_text)
        self.turns_heard.append(user_text)
        step = self.steps.get(index)
        if step is None:
            await self.say("ok")
        else:
            await step(self, user_text)

    async def raw_tool_call(self, call_id: str, name: str, raw: str) -> Any:
        """Emit a tool call whose arguments are not valid JSON."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        await self._queue.put(
            ToolCallRequested(
                call_id=call_id, name=name, raw_arguments=raw, parse_error="Expecting value"
            )
        )
        return await future

    async def emit_error(self, **kwargs: Any) -> None:
        await self._queue.put(TargetError(**kwargs))

    async def complete(self) -> None:
        """Emit a ``TurnComplete`` now (the base sends one more when ``respond`` returns)."""
        await self._queue.put(TurnComplete(status="completed"))


class ToneAgent(InProcessSession):
    """An audio agent: after ``delay`` seconds it answers each turn with ``seconds`` of speech."""

    def __init__(
        self,
        delay: float = 0.0,
        seconds: float = 1.5,
        in_process: bool = True,
        silent_turns: set[int] | None = None,
    ) -> None:
        super().__init__("test/tone")
        self.info = self.info.model_copy(
            update={
                "input_modality": "audio",
                "output_modality": "audio",
                "input_sample_rate": 16_000,
                "output_sample_rate": 24_000,
                "in_process": in_process,
            }
        )
        self.delay = delay
        self.seconds = seconds
        self.silent_turns = silent_turns or set()
        self.received: list[tuple[float, int]] = []  # (monotonic arrival, samples)
        self.turns = 0

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        import time

        self.received.append((time.monotonic(), len(pcm) // 2))

    async def respond(self, user_text: str) -> None:
        from voxbench.core.events import AssistantAudio

        turn = self.turns
        self.turns += 1
        if turn in self.silent_turns:
            await asyncio.sleep(3600)
        await asyncio.sleep(self.delay)
        pcm = _spoken_answer(self.seconds)
        for i in range(0, len(pcm), 4800):
            await self._queue.put(AssistantAudio(pcm=pcm[i : i + 4800], sample_rate=24_000))
        await self.say("tone")


@functools.cache
def _spoken_answer(seconds: float) -> bytes:
    """Real speech (so VAD hears it), cut to about ``seconds``, as 24 kHz PCM16."""
    from voxbench.providers.speech import get_tts

    speech = (
        get_tts("local/espeak").synthesize("Sure, here is my answer to that.").resampled(24_000)
    )
    return speech.to_pcm16()[: int(seconds * 24_000) * 2]
