"""Scorecards: per-dimension pass rates with fixed denominators, strict per-turn pass,
95% bootstrap intervals, the latency percentiles of the run's analysis and counts of what went wrong.

Denominators come from the judgments, and the judges emit exactly one judgment per (turn,
dimension the benchmark's rule table applies to that turn), whatever a model answered: a
turn the judge could not decide is *undecided*, counted as scored and not passed, and
listed. An absorbed failure (counted on its root cause) is counted as passed here and
listed, so every failure is counted once.
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
from voxbench.scoring.stats import BOOTSTRAP_SAMPLES, bootstrap_ci

STRICT = "strict_pass"


def scored(judgments: list[Judgment]) -> list[Judgment]:
    """The judgments that count: decided ones and judge failures (not 'does not apply')."""
    return [j for j in judgments if j.passed is not None or j.judge_failed]


def dimension_score(dimension: str, judgments: list[Judgment], seed: int = 0) -> DimensionScore:
    """Passes over scored turns for one dimension."""
    counted = scored(judgments)
    outcomes = [bool(j.passed) for j in counted]
    passed = sum(outcomes)
    return DimensionScore(
        dimension=dimension,
        passed=passed,
        scored=len(counted),
        rate=round(passed / len(counted), 4) if counted else None,
        ci95=bootstrap_ci(outcomes, seed=seed),
        failed_turns=[j.turn for j in counted if j.passed is False],
        undecided_turns=[j.turn for j in counted if j.judge_failed],
        absorbed_turns=[j.turn for j in counted if j.passed and j.absorbed_by],
    )


def strict_outcomes(records: list[TurnRecord], judgments: list[Judgment]) -> dict[str, bool]:
    """Per turn: completed, and every scored dimension passed (undecided is not a pass)."""
    by_turn: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_turn[j.turn].append(j)
    return {
        r.turn: r.status == "ok" and all(j.passed is True for j in scored(by_turn[r.turn]))
        for r in records
    }


def tool_use_rate(judgments: list[Judgment], turns: list[str]) -> Rate:
    """``tool_use`` passes over the given turns (after absorption)."""
    wanted = set(turns)
    counted = [j for j in scored(judgments) if j.dimension == "tool_use" and j.turn in wanted]
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
    seed: int = 0,
    judges: list[str] | None = None,
) -> Scorecard:
    """Aggregate judgments and records into a scorecard.

    ``tool_turns`` (the turns involving tools) adds tool-use rates over them and over all
    turns to ``checks``; ``latency`` is the run analysis' summary, measured once.
    """
    by_dim: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_dim[j.dimension].append(j)
    dimensions = [dimension_score(d, js, seed) for d, js in by_dim.items()]
    strict = strict_outcomes(records, judgments)
    strict_judgments = [
        Judgment(turn=turn, dimension=STRICT, passed=ok) for turn, ok in strict.items()
    ]
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
        strict_pass=dimension_score(STRICT, strict_judgments, seed),
        checks=checks,
        llm_judge=llm_judge,
        judge_status=dict(judge_status or {}),
        latency={k: v for k, v in (latency or {}).items() if v.count},
        counts=run_counts(records, judgments),
        judges=judges
        if judges is not None
        else sorted({f"{j.judge}@{j.judge_version}" for j in judgments}),
    )


__all__ = [
    "BOOTSTRAP_SAMPLES",
    "bootstrap_ci",
    "build_scorecard",
    "dimension_score",
    "run_counts",
    "strict_outcomes",
    "tool_use_rate",
]
