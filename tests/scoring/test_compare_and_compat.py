"""Comparing two runs with a paired test, and the compat summaries (ConversationBench, AIEWF)."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.benchmarks.compat import load_compat_profile
from voxbench.core.benchmark import CompatProfile
from voxbench.core.errors import RunError
from voxbench.core.records import Judgment
from voxbench.judging.run import JudgeOptions, judge_run
from voxbench.scoring.compare import compare_runs
from voxbench.scoring.compat import compat_summary, missing_llm_dimensions
from voxbench.scoring.scorecard import build_scorecard
from voxbench.testing import FakeOpenAIServer

from ..judging.scripted import Act, JudgeScript, scripted_run

NO_CALLS = {str(i): Act(calls=[]) for i in range(10)}


async def judged(
    tmp_path: Path,
    plan: dict[str, Act] | None = None,
    judge_url: str | None = None,
    profile: CompatProfile | None = None,
):
    benchmark, records, _ = await scripted_run(tmp_path, plan)
    scoring = profile.scoring if profile is not None else None
    options = (
        JudgeOptions(judge="openai-compatible/m", base_url=judge_url, scoring=scoring)
        if judge_url
        else JudgeOptions(deterministic_only=True, scoring=scoring)
    )
    result = await judge_run(benchmark, records, options=options)
    card = build_scorecard(
        run_id=str(plan is None),
        benchmark=benchmark.id,
        target="scripted",
        records=result.records,
        judgments=result.judgments,
        checks=result.checks,
        tool_turns=result.tool_turns,
        judges=result.judges,
    )
    return benchmark, card, result


async def test_compare_pairs_turns_and_tests_the_difference(tmp_path: Path) -> None:
    _, card_a, a = await judged(tmp_path / "a")
    _, card_b, b = await judged(tmp_path / "b", NO_CALLS)
    comparison = compare_runs(card_a, a.records, a.judgments, card_b, b.records, b.judgments)
    by_dim = {d.dimension: d for d in comparison.dimensions}
    tool = by_dim["tool_use"]
    # The oracle passes tool use on every turn; the agent that never calls misses turns 1,
    # 4, 5, 6 and 9, which it cannot win back anywhere: 5 discordant pairs, p = 2/32.
    assert (tool.a_passed, tool.b_passed, tool.paired_turns) == (10, 5, 10)
    assert (tool.only_a_passed, tool.only_b_passed) == (5, 0)
    assert tool.difference == -0.5 and tool.p_value == 0.0625
    assert comparison.dimensions[0].dimension == "strict_pass"


async def test_compare_refuses_different_benchmarks(tmp_path: Path) -> None:
    _, card, a = await judged(tmp_path)
    other = card.model_copy(update={"benchmark": "other"})
    with pytest.raises(RunError, match="different benchmarks"):
        compare_runs(card, a.records, a.judgments, other, a.records, a.judgments)


async def test_compat_reproduces_the_public_tool_use_floor(tmp_path: Path) -> None:
    profile = load_compat_profile("conversation-bench")
    benchmark, card, result = await judged(tmp_path, NO_CALLS, profile=profile)
    summary = compat_summary(profile, benchmark, card, result.records, result.judgments)
    # Five of smoke's ten turns need no call: an agent that never calls a tool gets 50% on
    # the public rule; voxbench's own tool_use also fails it on those five turns only.
    assert summary["passes"]["tool_use_correct"] == 5
    assert summary["category_totals"]["tool_use_correct"] == 10
    assert summary["passes"]["instruction_following"] is None
    # Without an LLM judge there is nothing comparable to count (the evaluation refuses).
    assert missing_llm_dimensions(profile, result.judgments) == [
        "instruction_following",
        "kb_grounding",
    ]


PLAN_SPURIOUS_AND_EARLY = {
    "3": Act(calls=[("register_for_session", {"name": "Priya Raman", "session_id": "H-103"})]),
    "4": Act(
        calls=[
            ("register_for_session", {"name": "Priya Raman", "session_id": "H-104"}),
            (
                "submit_dietary_request",
                {"name": "Priya Raman", "dietary_preference": "vegetarian"},
            ),
        ]
    ),
    "5": Act(calls=[]),
}


async def test_compat_differs_where_voxbench_is_stricter(tmp_path: Path) -> None:
    async with FakeOpenAIServer(JudgeScript()) as server:
        _, ours_card, _ = await judged(tmp_path / "ours", PLAN_SPURIOUS_AND_EARLY, server.url)
        profile = load_compat_profile("conversation-bench")
        benchmark, card, result = await judged(
            tmp_path / "cb", PLAN_SPURIOUS_AND_EARLY, server.url, profile
        )
    summary = compat_summary(profile, benchmark, card, result.records, result.judgments)
    # Ours: the spurious call (turn 3) and the early one (due on turn 5) fail.
    assert ours_card.dimension("tool_use").failed_turns == ["3", "5"]
    # ConversationBench: a turn expecting no call passes whatever was called, an early call
    # satisfies the turn it was due on.
    assert card.dimension("tool_use").failed_turns == []
    assert summary["passes"]["tool_use_correct"] == 10
    assert summary["passes"]["instruction_following"] == 10
    assert summary["category_totals"]["state_tracking"] == 4
    assert summary["category_totals"]["ambiguity_handling"] == 1
    assert summary["turn_pass"]["count"] == 10 and summary["turn_pass"]["rate"] == 1.0
    assert summary["judge_name"].startswith("openai-compatible/m@")
    assert card.scoring_rules == "voxbench"  # build_scorecard's default; evaluation names it


async def test_aiewf_fails_a_call_on_a_turn_that_expects_none(tmp_path: Path) -> None:
    profile = load_compat_profile("aiewf")
    async with FakeOpenAIServer(JudgeScript()) as server:
        benchmark, card, result = await judged(
            tmp_path, PLAN_SPURIOUS_AND_EARLY, server.url, profile
        )
    summary = compat_summary(profile, benchmark, card, result.records, result.judgments)
    # AIEWF: the call on turn 3 (which expects none) fails it; the early call still counts.
    assert card.dimension("tool_use").failed_turns == ["3"]
    assert summary["compat"] == "aiewf" and summary["passes"]["tool_use_correct"] == 9
    assert summary["turn_pass"]["count"] == 9


def test_compare_reports_unpaired_turns() -> None:
    from voxbench.core.records import DimensionScore, Scorecard, TurnRecord, TurnTimings

    def card(run: str) -> Scorecard:
        empty = DimensionScore(dimension="strict_pass", passed=0, scored=0, rate=None)
        return Scorecard(
            run_id=run, benchmark="b", target=run, turns=0, dimensions=[], strict_pass=empty
        )

    rec = [
        TurnRecord(turn=t, index=i, user_text="", timings=TurnTimings(start=0))
        for i, t in enumerate("012")
    ]
    a = [Judgment(turn=t, dimension="kb", passed=True) for t in "012"]
    b = [Judgment(turn=t, dimension="kb", passed=t != "0") for t in "01"]
    b.append(Judgment(turn="2", dimension="kb", passed=None, judge_failed=True))
    result = compare_runs(card("A"), rec, a, card("B"), rec, b)
    kb = next(d for d in result.dimensions if d.dimension == "kb")
    assert (kb.paired_turns, kb.only_a_passed, kb.only_b_passed) == (2, 1, 0)
    assert (kb.b_passed, kb.b_scored) == (1, 2)  # B's undecided turn 2 is not in its rate
    assert (kb.b_rate, kb.difference) == (0.5, -0.5)
