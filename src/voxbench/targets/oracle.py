"""The oracle: replays each turn's golden calls and golden answer.

A consistent benchmark and judge give the oracle 100% on every deterministic check, which
makes it the consistency test of every benchmark. It retries a call once when the backend
answers with a transient error, as the benchmarks' system prompts ask every agent to.
"""

from __future__ import annotations

from typing import Any

from voxbench.core.benchmark import Benchmark, Turn
from voxbench.core.errors import ConfigError
from voxbench.core.session import SessionSetup
from voxbench.targets.inprocess import InProcessSession

TRANSIENT_ERRORS = frozenset({"INTERNAL_ERROR", "TEMPORARILY_UNAVAILABLE", "TIMEOUT"})


class OracleSession(InProcessSession):
    """Answers every turn perfectly from the benchmark's golden data."""

    def __init__(self, benchmark: Benchmark) -> None:
        super().__init__("local/oracle")
        self.benchmark = benchmark
        self._next = 0

    def on_start(self, setup: SessionSetup) -> None:
        # Resuming: the turns already in the history are done.
        self._next = sum(1 for m in setup.history if m.role == "user")

    def _turn_for(self, user_text: str) -> Turn:
        for i, turn in enumerate(self.benchmark.turns):
            if turn.text.strip() == user_text.strip():
                self._next = i + 1
                return turn
        if self._next >= len(self.benchmark.turns):
            raise ValueError("more user turns than the benchmark has")
        turn = self.benchmark.turns[self._next]
        self._next += 1
        return turn

    async def respond(self, user_text: str) -> None:
        turn = self._turn_for(user_text)
        for call in turn.expect.required_calls:
            result = await self.call_tool(call.name, dict(call.args))
            if _is_transient(result):
                await self.call_tool(call.name, dict(call.args))
        await self.say(turn.golden_text)
        await self.report_usage(
            input_tokens=len(user_text.split()), output_tokens=len(turn.golden_text.split())
        )


def _is_transient(result: Any) -> bool:
    return isinstance(result, dict) and result.get("error") in TRANSIENT_ERRORS


def make_oracle(benchmark: Benchmark | None) -> OracleSession:
    """Build the oracle for ``benchmark``."""
    if benchmark is None:
        raise ConfigError("the oracle target needs a benchmark to replay", field="target")
    return OracleSession(benchmark)
