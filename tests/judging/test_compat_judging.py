"""Judging under a compat profile with the LLM judge (fake server): free-text arguments
decided by the judge (issue 12 item 3) and turn-taking verdicts told to it (item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.benchmarks.compat import load_compat_profile
from voxbench.core.records import Judgment
from voxbench.core.rundir import RunDirectory
from voxbench.judging.run import JudgeOptions, judge_run
from voxbench.testing import FakeOpenAIServer

from .scripted import Act, JudgeScript, scripted_run
from .test_turn_taking import analysis_of

JUDGE = "openai-compatible/judge-model"
CB = load_compat_profile("conversation-bench").scoring
# Turn 5 asks for a vegetarian meal; the agent writes it another way.
MEAT_FREE = {
    "5": Act(
        calls=[
            ("submit_dietary_request", {"name": "Priya Raman", "dietary_preference": "meat-free"})
        ]
    )
}


def tool_use(judgments: list[Judgment], turn: str) -> Judgment:
    return next(j for j in judgments if j.turn == turn and j.dimension == "tool_use")


@pytest.mark.parametrize("equivalent", [True, False])
async def test_the_judge_decides_a_free_text_argument_in_compat_mode(
    tmp_path: Path, equivalent: bool
) -> None:
    benchmark, records, _ = await scripted_run(tmp_path, MEAT_FREE)
    script = JudgeScript(free_text_equivalent={"5": equivalent})
    async with FakeOpenAIServer(script) as server:
        options = JudgeOptions(judge=JUDGE, base_url=server.url, scoring=CB)
        judged = await judge_run(benchmark, records, options=options)
    view = next(v for v in script.seen if v["turn"] == "5")
    mismatch = view["code_findings"]["free_text_argument_mismatches"]
    assert mismatch[0]["differences"] == [
        "dietary_preference: expected 'vegetarian', got 'meat-free'"
    ]
    verdict = tool_use(judged.judgments, "5")
    assert verdict.passed is equivalent
    if equivalent:
        assert verdict.details["decided_by"] == JUDGE


async def test_voxbench_mode_never_lets_the_judge_decide_an_undeclared_argument(
    tmp_path: Path,
) -> None:
    benchmark, records, _ = await scripted_run(tmp_path, MEAT_FREE)
    script = JudgeScript(free_text_equivalent={"5": True})
    async with FakeOpenAIServer(script) as server:
        options = JudgeOptions(judge=JUDGE, base_url=server.url)
        judged = await judge_run(benchmark, records, options=options)
    # dietary_preference is not declared free text in smoke: code's exact verdict stands.
    view = next(v for v in script.seen if v["turn"] == "5")
    assert view["code_findings"]["free_text_argument_mismatches"] == []
    assert tool_use(judged.judgments, "5").passed is False


async def test_compat_mode_tells_the_judge_each_turns_turn_taking(tmp_path: Path) -> None:
    benchmark, records, run = await scripted_run(tmp_path)
    (run / "conversation.wav").write_bytes(b"")
    script = JudgeScript()
    async with FakeOpenAIServer(script) as server:
        judged = await judge_run(
            benchmark,
            records,
            run_dir=RunDirectory(run),
            analysis=analysis_of(records),  # turn 2 talked over the user; 5 not measured
            options=JudgeOptions(judge=JUDGE, base_url=server.url, scoring=CB),
        )
        system = server.requests[0].json()["messages"][0]["content"]
    told = {v["turn"]: v["turn_taking"] for v in script.seen}
    assert told["2"] == "failed: negative_latency (-200 ms)"
    assert told["0"] == "ok"
    assert told["5"].startswith("not analysed")
    assert "be lenient on instruction_following" in " ".join(system.split())
    assert any(j.dimension == "turn_taking" and j.passed is False for j in judged.judgments)


async def test_voxbench_mode_does_not_tell_the_judge_about_turn_taking(tmp_path: Path) -> None:
    benchmark, records, run = await scripted_run(tmp_path)
    (run / "conversation.wav").write_bytes(b"")
    script = JudgeScript()
    async with FakeOpenAIServer(script) as server:
        await judge_run(
            benchmark,
            records,
            run_dir=RunDirectory(run),
            analysis=analysis_of(records),
            options=JudgeOptions(judge=JUDGE, base_url=server.url),
        )
        system = server.requests[0].json()["messages"][0]["content"]
    assert all("turn_taking" not in v for v in script.seen)
    assert "lenient" not in system
