"""Harness options in a run: AIEWF's nudge, upstream duplicates, voxbench mode by default."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from tests.runner.scripted import ScriptedSession
from voxbench.benchmarks.backend import UPSTREAM_NUDGE_TEXT
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import RunDirectory
from voxbench.core.timeline import HarnessNudgeSent
from voxbench.evaluation.evaluate import evaluate_run_async
from voxbench.report.terminal import turns_table
from voxbench.runner.config import RunConfig, build_config, split_harness_options
from voxbench.runner.launch import run_conversation

REGISTER = {"name": "Priya Raman", "session_id": "H-101"}


class HesitantAgent(ScriptedSession):
    """Turn 1 (a registration) asks instead of acting; told to go ahead, it registers."""

    def __init__(self) -> None:
        super().__init__()
        self.nudges_heard = 0

    async def respond(self, user_text: str) -> None:
        if user_text == UPSTREAM_NUDGE_TEXT:
            self.nudges_heard += 1
            result = await self.call_tool("register_for_session", REGISTER)
            await self.say(f"Done: {result['status']}")
        elif user_text == self.texts[1]:
            await self.say("Shall I register you for H-101?")
        else:
            await super().respond(user_text)


class Listener(ScriptedSession):
    """A scripted agent that answers the harness's nudge with a plain "ok"."""

    async def respond(self, user_text: str) -> None:
        if user_text == UPSTREAM_NUDGE_TEXT:
            await self.say("ok")
        else:
            await super().respond(user_text)


async def _run(tmp_path: Path, agent: ScriptedSession, **kw) -> RunDirectory:
    config = RunConfig(benchmark="smoke", target="local/oracle", runs_dir=tmp_path / "runs", **kw)
    return RunDirectory.open_existing(await run_conversation(config, session_factory=lambda: agent))


async def test_nudge_follows_a_reply_that_lacks_its_required_call(tmp_path: Path) -> None:
    agent = HesitantAgent()
    run = await _run(tmp_path, agent, only_turns="0-2", harness_options={"nudge": True})
    first, second, third = run.turns()
    assert agent.nudges_heard == 1  # turn 0 needs no call; turn 2 is not a registration
    assert first.nudge is None and third.nudge is None
    # The turn's own answer is kept as it was; the follow-up is recorded apart.
    assert second.assistant_text == "Shall I register you for H-101?" and second.tool_calls == []
    assert second.nudge is not None
    assert second.nudge.user_text == "Please go ahead."
    assert second.nudge.missing == ["register_for_session"]
    assert second.nudge.assistant_text == "Done: success"
    assert [c.name for c in second.nudge.tool_calls] == ["register_for_session"]
    assert second.state_after["registrations"] == ["H-101"]  # the world saw the call
    nudges = [e for e in run.events() if isinstance(e, HarnessNudgeSent)]
    assert [(e.turn, e.text) for e in nudges] == [("1", "Please go ahead.")]
    # Upstream never scores its recovery turns: the turn still fails tool use.
    evaluation = await evaluate_run_async(run.path, write=False)
    tool_use = {j.turn: j.passed for j in evaluation.judgments if j.dimension == "tool_use"}
    assert tool_use["1"] is False
    console = Console(record=True, width=240)
    console.print(turns_table(run.turns(), evaluation.judgments))
    shown = " ".join(console.export_text().split())
    assert "after the harness nudge 'Please go ahead.'" in shown
    assert "register_for_session (after the nudge, not scored)" in shown


async def test_no_nudge_in_voxbench_harness_or_when_the_call_was_made(tmp_path: Path) -> None:
    agent = HesitantAgent()
    run = await _run(tmp_path / "a", agent, only_turns="1")
    assert agent.nudges_heard == 0 and run.turns()[0].nudge is None

    async def acts(s: ScriptedSession, _: str) -> None:
        await s.call_tool("register_for_session", REGISTER)
        await s.say("registered")

    eager = ScriptedSession({1: acts})
    run = await _run(tmp_path / "b", eager, only_turns="1", harness_options={"nudge": True})
    assert run.turns()[0].nudge is None


async def test_upstream_duplicates_are_skipped_in_a_run(tmp_path: Path) -> None:
    async def twice(s: ScriptedSession, _: str) -> None:
        first = await s.call_tool("register_for_session", REGISTER)
        again = await s.call_tool("register_for_session", REGISTER)
        await s.say(f"{first['status']} {again['status']}")

    run = await _run(
        tmp_path,
        ScriptedSession({1: twice}),
        only_turns="1",
        harness_options={"duplicate_calls": "skip"},
    )
    rec = run.turns()[0]
    assert rec.assistant_text == "success duplicate_skipped"
    assert [c.is_duplicate for c in rec.tool_calls] == [False, True]


def test_run_options_pick_the_harness() -> None:
    options = {"voice": "alloy", "harness": "voxbench", "harness.nudge": False}
    fields = split_harness_options(options)
    assert options == {"voice": "alloy"}  # what is left goes to the target
    assert fields == {"harness": "voxbench", "harness_options": {"nudge": False}}
    assert build_config({"benchmark": "smoke", **fields}).harness == "voxbench"
    with pytest.raises(ConfigError, match=r"harness_options\.nudges.*nudge_text"):
        build_config({"benchmark": "smoke", "harness_options": {"nudges": True}})
    with pytest.raises(ConfigError, match="harness_options.duplicate_calls"):
        build_config({"benchmark": "smoke", "harness_options": {"duplicate_calls": "drop"}})


async def test_aiewf_rule_decides_whether_the_call_was_made(tmp_path: Path) -> None:
    # "vegetarian meal" for the golden "vegetarian": the benchmark's normalized matcher says
    # the call is missing; AIEWF's harness rule (containment) says it was made.
    async def loose(s: ScriptedSession, _: str) -> None:
        args = {"name": "Priya Raman", "dietary_preference": "vegetarian meal"}
        await s.call_tool("submit_dietary_request", args)
        await s.say("noted")

    by_benchmark = await _run(
        tmp_path / "a", Listener({5: loose}), only_turns="5", harness_options={"nudge": True}
    )
    assert by_benchmark.turns()[0].nudge is not None
    by_aiewf = await _run(
        tmp_path / "b",
        Listener({5: loose}),
        only_turns="5",
        harness_options={"nudge": True, "nudge_match": "aiewf"},
    )
    assert by_aiewf.turns()[0].nudge is None
