"""Scorecards: per-dimension pass rates with fixed denominators, strict per-turn pass,
95% Wilson intervals, the latency percentiles of the run's analysis and counts of what went wrong.

Denominators come from the judgments, and the judges emit exactly one judgment per (turn,
dimension the benchmark's rule table applies to that turn), whatever a model answered: a
turn the judge could not decide is *undecided*: neither passed nor failed, left out of the
denominator, counted and listed. A judge that could not answer says nothing about the agent,
so it must not lower (or raise) its rate; the count keeps the loss visible, and
``too_many_undecided`` says when so much is undecided that the rates should not be trusted.
An absorbed failure (counted on its root cause) is counted as passed here and listed, so
every failure is counted once.

Strict per-turn pass: a turn fails when it did not complete or any dimension failed on it; it
passes when it completed and every dimension passed; otherwise (its only problem is an
undecided judgment) it is undecided too, and left out of the strict denominator.
"""

from __future__ import annotations

from collections import defaultdict

from voxbench.core.measures import LatencySummary
from voxbench.core.records import (
    CheckTotals,
    DimensionScore,
    Judgment,
    LLMJudgeStats,
    Rate,
    RunCounts,
    Scorecard,
    TurnRecord,
)
from voxbench.scoring.stats import wilson_interval

STRICT = "strict_pass"


DEFAULT_UNDECIDED_LIMIT = 0.2
"""Above this share of undecided turns an evaluation reports ``too_many_undecided``."""


def scored(judgments: list[Judgment]) -> list[Judgment]:
    """The judgments that concern the run: decided ones and undecided ones (not the
    'does not apply' ones)."""
    return [j for j in judgments if j.passed is not None or j.judge_failed]


def decided(judgments: list[Judgment]) -> list[Judgment]:
    """The judgments that passed or failed (the denominators)."""
    return [j for j in judgments if j.passed is not None and not j.judge_failed]


def dimension_score(dimension: str, judgments: list[Judgment]) -> DimensionScore:
    """Passes over decided turns for one dimension; undecided turns are counted apart."""
    counted = decided(judgments)
    outcomes = [bool(j.passed) for j in counted]
    passed = sum(outcomes)
    undecided = [j.turn for j in judgments if j.judge_failed]
    return DimensionScore(
        dimension=dimension,
        passed=passed,
        scored=len(counted),
        rate=round(passed / len(counted), 4) if counted else None,
        ci95=wilson_interval(passed, len(counted)),
        failed_turns=[j.turn for j in counted if j.passed is False],
        undecided=len(undecided),
        undecided_turns=undecided,
        absorbed_turns=[j.turn for j in counted if j.passed and j.absorbed_by],
    )


def strict_outcomes(records: list[TurnRecord], judgments: list[Judgment]) -> dict[str, bool | None]:
    """Per turn: True when it completed and passed every dimension scored on it, False when
    it did not complete or failed one, None (undecided) when its only problem is an
    undecided judgment."""
    by_turn: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_turn[j.turn].append(j)
    out: dict[str, bool | None] = {}
    for r in records:
        mine = scored(by_turn[r.turn])
        if r.status != "ok" or any(j.passed is False for j in mine):
            out[r.turn] = False
        elif any(j.judge_failed for j in mine):
            out[r.turn] = None
        else:
            out[r.turn] = True
    return out


def undecided_turns(records: list[TurnRecord], judgments: list[Judgment]) -> list[str]:
    """The turns (in conversation order) with at least one undecided judgment."""
    failed = {j.turn for j in judgments if j.judge_failed}
    return [r.turn for r in records if r.turn in failed]


def tool_use_rate(judgments: list[Judgment], turns: list[str]) -> Rate:
    """``tool_use`` passes over the given turns (after absorption), undecided ones left out."""
    wanted = set(turns)
    counted = [j for j in decided(judgments) if j.dimension == "tool_use" and j.turn in wanted]
    passed = sum(bool(j.passed) for j in counted)
    return Rate(
        passed=passed,
        scored=len(counted),
        rate=round(passed / len(counted), 4) if counted else None,
    )


def run_counts(records: list[TurnRecord], judgments: list[Judgment]) -> RunCounts:
    """How many turns completed, went wrong (and how), or were left undecided."""
    return RunCounts(
        turns=len(records),
        ok=sum(r.status == "ok" for r in records),
        no_response=sum(r.status == "no_response" for r in records),
        error=sum(r.status == "error" for r in records),
        ended_early=sum(r.status == "ended_early" for r in records),
        retried=sum(r.retries > 0 for r in records),
        reconnected=sum(r.reconnected for r in records),
        judge_failures=sum(j.judge_failed for j in judgments),
        absorbed=sum(bool(j.absorbed_by) for j in judgments),
    )


def build_scorecard(
    *,
    run_id: str,
    benchmark: str,
    target: str,
    records: list[TurnRecord],
    judgments: list[Judgment],
    checks: CheckTotals | None = None,
    tool_turns: list[str] | None = None,
    llm_judge: LLMJudgeStats | None = None,
    judge_status: dict[str, str] | None = None,
    latency: dict[str, LatencySummary] | None = None,
    judges: list[str] | None = None,
    undecided_limit: float | None = DEFAULT_UNDECIDED_LIMIT,
) -> Scorecard:
    """Aggregate judgments and records into a scorecard.

    ``tool_turns`` (the turns involving tools) adds tool-use rates over them and over all
    turns to ``checks``; ``latency`` is the run analysis' summary, measured once; more than
    ``undecided_limit`` of the turns undecided sets ``too_many_undecided``.
    """
    by_dim: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_dim[j.dimension].append(j)
    dimensions = [dimension_score(d, js) for d, js in by_dim.items()]
    strict = strict_outcomes(records, judgments)
    strict_judgments = [
        Judgment(turn=turn, dimension=STRICT, passed=ok, judge_failed=ok is None)
        for turn, ok in strict.items()
    ]
    undecided = undecided_turns(records, judgments)
    share = len(undecided) / len(records) if records else 0.0
    if checks is not None and tool_turns is not None:
        checks = checks.model_copy(
            update={
                "tool_use_over_tool_turns": tool_use_rate(judgments, tool_turns),
                "tool_use_over_all_turns": tool_use_rate(judgments, [r.turn for r in records]),
            }
        )
    return Scorecard(
        run_id=run_id,
        benchmark=benchmark,
        target=target,
        turns=len(records),
        dimensions=dimensions,
        strict_pass=dimension_score(STRICT, strict_judgments),
        checks=checks,
        llm_judge=llm_judge,
        judge_status=dict(judge_status or {}),
        latency={k: v for k, v in (latency or {}).items() if v.count},
        counts=run_counts(records, judgments),
        judges=judges
        if judges is not None
        else sorted({f"{j.judge}@{j.judge_version}" for j in judgments}),
        undecided_turns=undecided,
        undecided_limit=undecided_limit,
        too_many_undecided=undecided_limit is not None and share > undecided_limit,
    )


__all__ = [
    "DEFAULT_UNDECIDED_LIMIT",
    "wilson_interval",
    "build_scorecard",
    "decided",
    "dimension_score",
    "run_counts",
    "strict_outcomes",
    "tool_use_rate",
    "undecided_turns",
]
