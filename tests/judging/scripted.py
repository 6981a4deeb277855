"""Scripted runs for judging tests: an agent that plays the oracle except where told, and a
fake LLM judge script that answers like a careful grader (or a gullible one)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.benchmark import Benchmark
from voxbench.core.records import TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.targets.inprocess import InProcessSession
from voxbench.testing import Reply, Script, ScriptCall, ScriptMessage

TRANSIENT = {"INTERNAL_ERROR"}
FOREVER = "<garbage forever>"


@dataclass
class Act:
    """What the agent does on one turn; None keeps the golden behaviour."""

    calls: list[tuple[str, dict[str, Any]]] | None = None
    say: str | None = None
    retry: bool = True
    """Retry a call that got a transient error (as the system prompt asks)."""


class ScriptedAgent(InProcessSession):
    """The oracle, with some turns replaced by an ``Act``."""

    def __init__(self, benchmark: Benchmark, plan: dict[str, Act]) -> None:
        super().__init__("test/scripted")
        self.benchmark = benchmark
        self.plan = plan

    async def respond(self, user_text: str) -> None:
        turn = next(t for t in self.benchmark.turns if t.text == user_text)
        act = self.plan.get(turn.id, Act())
        calls = (
            [(c.name, dict(c.args)) for c in turn.expect.required_calls]
            if act.calls is None
            else act.calls
        )
        for name, args in calls:
            result = await self.call_tool(name, args)
            if act.retry and isinstance(result, dict) and result.get("error") in TRANSIENT:
                await self.call_tool(name, args)
        await self.say(turn.golden_text if act.say is None else act.say)


async def scripted_run(
    tmp_path: Path, plan: dict[str, Act] | None = None
) -> tuple[Benchmark, list[TurnRecord], Path]:
    """Run the smoke benchmark with a scripted agent; returns the records and run dir."""
    benchmark = load_benchmark("smoke")
    path = await run_conversation(
        RunConfig(benchmark="smoke", target="local/oracle", runs_dir=tmp_path / "runs"),
        session_factory=lambda: ScriptedAgent(benchmark, plan or {}),
    )
    return benchmark, RunDirectory.open_existing(path).turns(), path


# -- a fake judge ----------------------------------------------------------------------------


def turn_under_review(user_text: str) -> dict[str, Any]:
    """The JSON of the turn under review, read back from the judge prompt."""
    block = re.search(r"<turn_under_review>\n(.*)\n</turn_under_review>", user_text, re.S)
    assert block is not None, "the prompt has no turn block"
    return json.loads(block.group(1))


@dataclass
class JudgeScript(Script):
    """A grader for the fake server: fails what the test says, passes the rest.

    ``verdicts[turn][dimension] = (passed, cause)``; ``missing_call_cause[turn]``;
    ``free_text_equivalent[turn]``: its answer on free-text arguments code could not match;
    ``raw[turn]``: raw replies to give, in order, before judging normally (``[FOREVER]``:
    garbage every time); ``tool``: answer through that forced tool call (Anthropic).
    """

    verdicts: dict[str, dict[str, tuple[bool, str | None]]] = field(default_factory=dict)
    missing_call_cause: dict[str, str] = field(default_factory=dict)
    free_text_equivalent: dict[str, bool] = field(default_factory=dict)
    raw: dict[str, list[str]] = field(default_factory=dict)
    tool: str | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        text = next(m.text for m in reversed(conversation) if m.role == "user")
        self.prompts.append(text)
        view = turn_under_review(text)
        self.seen.append(view)
        turn = view["turn"]
        queued = self.raw.get(turn)
        if queued == [FOREVER]:
            return Reply(text="not json at all")
        if queued:
            return Reply(text=queued.pop(0))
        answer = {
            "verdicts": [
                {
                    "dimension": dim,
                    "passed": self.verdicts.get(turn, {}).get(dim, (True, None))[0],
                    "reasoning": f"graded {dim} of turn {turn}",
                    "evidence": [view["assistant_said"][:40]],
                    "cause": self.verdicts.get(turn, {}).get(dim, (True, None))[1],
                }
                for dim in view["grade"]
            ],
            "missing_call_cause": self.missing_call_cause.get(turn),
            "missing_call_reasoning": "scripted" if turn in self.missing_call_cause else "",
            "free_text_arguments_equivalent": self.free_text_equivalent.get(turn),
        }
        if self.tool:
            return Reply(calls=(ScriptCall(self.tool, answer),))
        return Reply(text=json.dumps(answer))
