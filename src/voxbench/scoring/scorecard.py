"""Scorecards: per-dimension pass rates with fixed denominators, strict per-turn pass,
95% Wilson intervals, the latency percentiles of the run's analysis and counts of what went wrong.

Denominators come from the judgments, and the judges emit exactly one judgment per (turn,
dimension the benchmark's rule table applies to that turn), whatever a model answered: a
turn the judge could not decide is *undecided*: neither passed nor failed, left out of the
denominator, counted and listed. A judge that could not answer says nothing about the agent,
so it must not lower (or raise) its rate; the count keeps the loss visible, and
``too_many_undecided`` says when so much is undecided that the rates should not be trusted.
An absorbed failure (a failure caused only by an earlier one, counted on that root cause)
is never shown as a pass: it is counted apart (``absorbed``, "40 caused by earlier misses"),
out of ``passed``; the strict per-turn pass still charges it once, to its root turn.

The scorecard records which dimensions were judged and by what (code, an LLM judge, the
audio analysis) and which the benchmark's rule table names but nothing judged. When the LLM
dimensions were not judged on a benchmark with no fact or state checks, the strict per-turn
pass rests on tool use alone and is marked "tool use only — not comparable".

Strict per-turn pass: a turn fails when it did not complete or any dimension failed on it; it
passes when it completed and every dimension passed; otherwise (its only problem is an
undecided judgment) it is undecided too, and left out of the strict denominator.
"""

from __future__ import annotations

from collections import defaultdict

from voxbench.core.benchmark import Benchmark
from voxbench.core.measures import LatencySummary
from voxbench.core.records import (
    NOT_COMPARABLE_TOOL_USE,
    CheckTotals,
    DimensionScore,
    JudgedDimensions,
    Judgment,
    LLMJudgeStats,
    Rate,
    RunCounts,
    Scorecard,
    TurnRecord,
)
from voxbench.scoring.stats import wilson_interval

STRICT = "strict_pass"
CODE_DIMENSIONS = ("tool_use", "facts", "state")
ANALYSIS_DIMENSIONS = ("turn_taking",)
LLM_CORE_DIMENSIONS = ("instruction_following", "kb_grounding")
"""The dimensions a published conversation benchmark's pass needs that only a model judges."""


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
    absorbed = [j.turn for j in counted if j.passed and j.absorbed_by]
    passed = sum(bool(j.passed) and not j.absorbed_by for j in counted)
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
        absorbed_turns=absorbed,
        absorbed=len(absorbed),
    )


def judged_dimensions(
    judgments: list[Judgment], benchmark: Benchmark | None, records: list[TurnRecord]
) -> JudgedDimensions:
    """Which dimensions were judged and by what; which the rule table names but nothing
    judged."""
    present = list(dict.fromkeys(j.dimension for j in scored(judgments)))
    named: list[str] = []
    if benchmark is not None:
        by_id = {t.id: t for t in benchmark.turns}
        for r in records:
            turn = by_id.get(r.turn)
            for dim in benchmark.dimensions.for_turn(turn) if turn is not None else ():
                if dim not in named:
                    named.append(dim)
    return JudgedDimensions(
        deterministic=[d for d in present if d in CODE_DIMENSIONS],
        analysis=[d for d in present if d in ANALYSIS_DIMENSIONS],
        llm=[d for d in present if d not in CODE_DIMENSIONS and d not in ANALYSIS_DIMENSIONS],
        not_judged=[d for d in named if d not in present],
    )


def strict_pass_note(judged: JudgedDimensions) -> str | None:
    """``"tool use only — not comparable"`` when strict pass rests on tool use alone because
    the LLM dimensions were not judged; another "not comparable" line when they were not
    judged but code checked more than tool use; None when they were judged."""
    unjudged = [d for d in LLM_CORE_DIMENSIONS if d in judged.not_judged]
    if not unjudged:
        return None
    if set(judged.deterministic) <= {"tool_use"} and not judged.llm:
        return NOT_COMPARABLE_TOOL_USE
    return (
        f"{', '.join(judged.deterministic + judged.llm)} only, without "
        f"{' and '.join(unjudged)} (no LLM judge) — not comparable"
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
    rule_table: Benchmark | None = None,
    scoring_rules: str = "voxbench",
) -> Scorecard:
    """Aggregate judgments and records into a scorecard.

    ``tool_turns`` (the turns involving tools) adds tool-use rates over them and over all
    turns to ``checks``; ``latency`` is the run analysis' summary, measured once; more than
    ``undecided_limit`` of the turns undecided sets ``too_many_undecided``; ``rule_table``
    (the loaded benchmark) tells which dimensions should have been judged; ``scoring_rules`` names
    the rules the judges applied.
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
    judged = judged_dimensions(judgments, rule_table, records)
    return Scorecard(
        judged=judged,
        scoring_rules=scoring_rules,
        strict_pass_covers=judged.deterministic + judged.llm + judged.analysis,
        strict_pass_note=strict_pass_note(judged),
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
    "judged_dimensions",
    "run_counts",
    "strict_pass_note",
    "strict_outcomes",
    "tool_use_rate",
    "undecided_turns",
]
