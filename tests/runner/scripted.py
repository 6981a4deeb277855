"""A scripted in-process Session for runner tests: each turn does what the test says."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.events import TargetError, ToolCallRequested
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
