"""Scorecards: fixed denominators, undecided and absorbed turns, strict pass, statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from voxbench.core.measures import LatencySummary
from voxbench.core.records import (
    CheckTotals,
    DimensionScore,
    Judgment,
    Rate,
    TurnRecord,
    TurnTimings,
)
from voxbench.scoring.scorecard import build_scorecard, dimension_score
from voxbench.scoring.stats import mcnemar_exact, wilson_interval


def record(turn: str, status: str = "ok") -> TurnRecord:
    return TurnRecord(
        turn=turn,
        index=int(turn),
        user_text="u",
        timings=TurnTimings(start=0.0),
        status=status,  # type: ignore[arg-type]
    )


def j(turn: str, dim: str, passed: bool | None, **kw) -> Judgment:
    return Judgment(turn=turn, dimension=dim, passed=passed, **kw)


def test_undecided_turns_are_left_out_of_the_denominator_counted_and_listed() -> None:
    score = dimension_score(
        "kb_grounding",
        [
            j("0", "kb_grounding", True),
            j("1", "kb_grounding", False),
            j("2", "kb_grounding", None, judge_failed=True),
            j("3", "kb_grounding", True, absorbed_by="turn 1 tool_use"),
            j("4", "kb_grounding", None),  # does not apply: not scored
        ],
    )
    # Turn 3 failed only because of turn 1: not a pass, not a second failure either.
    assert (score.passed, score.scored, score.rate) == (1, 3, 0.3333)
    assert score.failed_turns == ["1"] and score.undecided_turns == ["2"]
    assert score.undecided == 1
    assert score.absorbed_turns == ["3"] and score.absorbed == 1


def test_absorbed_failures_are_never_shown_as_passes() -> None:
    """Issue 12: an agent whose end state differs on 40 turns, every difference caused by an
    earlier missing call, reads "0/40 passed, 40 caused by earlier misses", not 40/40."""
    records = [record(str(i)) for i in range(41)]
    judgments = [j("0", "tool_use", False)]
    judgments += [j(str(i), "state", True, absorbed_by="turn 0 tool_use") for i in range(1, 41)]
    card = build_scorecard(
        run_id="r", benchmark="b", target="t", records=records, judgments=judgments
    )
    state = card.dimension("state")
    assert state is not None
    assert (state.passed, state.scored, state.rate, state.absorbed) == (0, 40, 0.0, 40)
    assert state.absorbed_note == "40 caused by earlier misses"
    assert state.failed_turns == []  # each failure is still charged once, to turn 0
    # The strict pass charges the root turn only.
    assert card.strict_pass.failed_turns == ["0"]


def test_a_format_2_scorecard_is_read_with_absorbed_failures_taken_out_of_passes() -> None:
    old = {
        "dimension": "state",
        "passed": 40,
        "scored": 40,
        "rate": 1.0,
        "absorbed_turns": [str(i) for i in range(40)],
    }
    score = DimensionScore.model_validate(old)
    assert (score.passed, score.absorbed, score.rate) == (0, 40, 0.0)


def test_strict_pass_needs_a_completed_turn_and_every_dimension() -> None:
    records = [record(str(i)) for i in range(3)] + [record("3", status="no_response")]
    records.append(record("4"))
    judgments = [
        j("0", "tool_use", True),
        j("0", "kb_grounding", True),
        j("1", "tool_use", True),
        j("1", "kb_grounding", None, judge_failed=True),
        j("2", "tool_use", True, absorbed_by="turn 1 tool_use"),
        j("3", "tool_use", True),
        j("4", "tool_use", False),
        j("4", "kb_grounding", None, judge_failed=True),
    ]
    latency = {"ttfb": LatencySummary(count=3, mean=0.5, p50=0.5), "ttft": LatencySummary()}
    card = build_scorecard(
        run_id="r", benchmark="b", target="t", records=records, judgments=judgments, latency=latency
    )
    # Turn 1's only problem is an undecided judgment: neither passed nor failed. Turn 4
    # failed a decided dimension: failed, whatever the undecided one would have said.
    assert card.strict_pass.failed_turns == ["3", "4"]
    assert card.strict_pass.undecided_turns == ["1"]
    assert (card.strict_pass.passed, card.strict_pass.scored) == (2, 4)
    assert card.undecided_turns == ["1", "4"]
    assert card.counts.no_response == 1 and card.counts.judge_failures == 2
    assert card.counts.absorbed == 1
    # The analysis' summary, as measured; a metric nothing measured is left out.
    assert card.latency == {"ttfb": LatencySummary(count=3, mean=0.5, p50=0.5)}


def test_a_perfect_agent_whose_judge_never_answered_is_undecided_not_failed() -> None:
    records = [record(str(i)) for i in range(10)]
    judgments = [j(str(i), "tool_use", True) for i in range(10)]
    judgments += [j(str(i), "instruction_following", None, judge_failed=True) for i in range(10)]
    card = build_scorecard(
        run_id="r", benchmark="b", target="t", records=records, judgments=judgments
    )
    following = card.dimension("instruction_following")
    assert following is not None
    assert (following.passed, following.scored, following.rate) == (0, 0, None)
    assert following.undecided == 10 and following.failed_turns == []
    assert (card.strict_pass.scored, card.strict_pass.undecided) == (0, 10)
    assert card.strict_pass.failed_turns == []
    assert card.too_many_undecided
    assert card.undecided_summary() is not None
    assert "10 of 10 turns undecided" in str(card.undecided_summary())


def test_too_many_undecided_is_more_than_the_limit_share_of_turns() -> None:
    records = [record(str(i)) for i in range(10)]

    def card(undecided: int, limit: float | None = 0.2):
        judgments = [
            j(str(i), "kb_grounding", None, judge_failed=True)
            if i < undecided
            else j(str(i), "kb_grounding", True)
            for i in range(10)
        ]
        return build_scorecard(
            run_id="r",
            benchmark="b",
            target="t",
            records=records,
            judgments=judgments,
            undecided_limit=limit,
        )

    assert not card(0).too_many_undecided and card(0).undecided_summary() is None
    assert not card(2).too_many_undecided  # 20% is the limit, not over it
    assert card(3).too_many_undecided
    assert "more than the 20% allowed" in str(card(3).undecided_summary())
    assert not card(3, limit=0.5).too_many_undecided
    assert not card(10, limit=None).too_many_undecided
    assert card(3).dimension("kb_grounding").rate == 1.0  # type: ignore[union-attr]


def test_a_scorecard_written_before_the_undecided_count_reads_it_from_the_turns() -> None:
    score = DimensionScore.model_validate(
        {"dimension": "d", "passed": 1, "scored": 2, "rate": 0.5, "undecided_turns": ["3"]}
    )
    assert score.undecided == 1


def test_tool_use_rates_over_tool_turns_and_all_turns() -> None:
    records = [record(str(i)) for i in range(4)]
    judgments = [j("0", "tool_use", True), j("1", "tool_use", False)]
    judgments += [j("2", "tool_use", True), j("3", "tool_use", True)]
    card = build_scorecard(
        run_id="r",
        benchmark="b",
        target="t",
        records=records,
        judgments=judgments,
        checks=CheckTotals(),
        tool_turns=["1", "2"],
    )
    assert card.checks is not None
    assert card.checks.tool_use_over_tool_turns == Rate(passed=1, scored=2, rate=0.5)
    assert card.checks.tool_use_over_all_turns == Rate(passed=3, scored=4, rate=0.75)


def test_wilson_interval_by_hand() -> None:
    # 7/10: centre (0.7 + 1.92/10) / 1.384 = 0.6445, half 1.416 * sqrt(0.021 + 0.0096) = 0.2477
    assert wilson_interval(7, 10) == (0.3968, 0.8922)
    assert wilson_interval(10, 10) == (0.7225, 1.0)  # never the degenerate [100%–100%]
    assert wilson_interval(0, 10) == (0.0, 0.2775)
    assert wilson_interval(0, 0) is None


def _exact_coverage(n: int, p: float) -> float:
    """Probability that the interval of k ~ Binomial(n, p) contains p (summed exactly)."""
    total = 0.0
    for k in range(n + 1):
        lo, hi = wilson_interval(k, n)  # type: ignore[misc]
        if lo <= p <= hi:
            total += math.comb(n, k) * p**k * (1 - p) ** (n - k)
    return total


def _percentile_bootstrap_coverage(n: int, p: float) -> float:
    """The same for a percentile bootstrap (what scorecards used before), by simulation."""
    rng = np.random.default_rng(0)
    hits = 0
    draws = 400
    for _ in range(draws):
        outcomes = rng.random(n) < p
        means = outcomes[rng.integers(0, n, size=(500, n))].mean(axis=1)
        lo, hi = np.percentile(means, [2.5, 97.5])
        hits += lo <= p <= hi
    return hits / draws


@pytest.mark.parametrize("n", [10, 20, 75])
def test_wilson_coverage_stays_near_95_percent_where_the_bootstrap_collapses(n: int) -> None:
    grid = [0.5, 0.7, 0.8, 0.9, 0.95]
    coverages = [_exact_coverage(n, p) for p in grid]
    assert sum(coverages) / len(coverages) >= 0.93
    assert min(coverages) >= 0.85
    # Near 100% pass rates (where agents live) the bootstrap misses far more often.
    assert _percentile_bootstrap_coverage(n, 0.95) < _exact_coverage(n, 0.95) - 0.05


def test_exact_mcnemar() -> None:
    assert mcnemar_exact(5, 0) == 0.0625
    assert mcnemar_exact(0, 5) == 0.0625
    assert mcnemar_exact(0, 0) == 1.0
    assert abs(mcnemar_exact(6, 0) - 0.03125) < 1e-12
    assert mcnemar_exact(3, 3) == 1.0


def _fact_free_benchmark():
    from voxbench.core.benchmark import Benchmark, Expectation, ExpectedCall, ToolSpec, Turn

    call = ExpectedCall(name="book", args={"session_id": "S1"})
    return Benchmark(
        id="b",
        version="1",
        description="tool calls only",
        system_prompt="{knowledge_base}",
        current_date="2025-06-02",
        knowledge_base="kb",
        tools=(ToolSpec(name="book", description="d"),),
        turns=(
            Turn(id="0", text="hi", golden_text="hello"),
            Turn(
                id="1", text="book", golden_text="done", expect=Expectation(required_calls=(call,))
            ),
        ),
    )


def test_strict_pass_on_tool_use_alone_is_marked_not_comparable() -> None:
    """Issue 12 item 1: a benchmark without facts or state judged without an LLM judge."""
    benchmark = _fact_free_benchmark()
    records = [record("0"), record("1")]
    code_only = [j("0", "tool_use", True), j("1", "tool_use", True)]
    card = build_scorecard(
        run_id="r",
        benchmark="b",
        target="t",
        records=records,
        judgments=code_only,
        rule_table=benchmark,
    )
    assert card.judged is not None
    assert card.judged.deterministic == ["tool_use"] and card.judged.llm == []
    assert card.judged.not_judged == ["instruction_following", "kb_grounding"]
    assert card.strict_pass_note == "tool use only — not comparable"
    assert card.strict_pass_covers == ["tool_use"]

    judged = code_only + [
        j(t, d, True, judge="openai/gpt-x")
        for t in "01"
        for d in ("instruction_following", "kb_grounding")
    ]
    card = build_scorecard(
        run_id="r",
        benchmark="b",
        target="t",
        records=records,
        judgments=judged,
        rule_table=benchmark,
    )
    assert card.strict_pass_note is None and card.judged.not_judged == []
    assert card.judged.llm == ["instruction_following", "kb_grounding"]
