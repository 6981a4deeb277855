"""Judge a recorded run from its artifacts alone (the target is never called again).

The registered judges run in order (``registered_judges``: deterministic on
every recorded turn — realignment and cascades need the whole conversation — then the LLM
judge on the selected turns, then turn-taking from the run's analysis), each seeing the
findings of those before it. Then one absorption pass over all their judgments counts each
failure once. The result is one judgment per (selected turn, applicable dimension), in
conversation order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from voxbench.core.benchmark import Benchmark
from voxbench.core.measures import RunAnalysis
from voxbench.core.records import CheckTotals, Judgment, LLMJudgeStats, TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.judging.absorption import absorption_pass
from voxbench.judging.audio.quality_judge import AudioQualityRunJudge
from voxbench.judging.audio.run_judge import AudioRubricRunJudge
from voxbench.judging.base import (
    JudgeContext,
    JudgeFindings,
    JudgeOptions,
    RunJudge,
    plugin_judges,
)
from voxbench.judging.deterministic import JUDGE_NAME as DETERMINISTIC
from voxbench.judging.deterministic import DeterministicJudge, DeterministicResult
from voxbench.judging.llm_run import NAME as LLM
from voxbench.judging.llm_run import LLMRunJudge, LLMRunOutcomes
from voxbench.judging.turn_taking import TurnTakingJudge

T = TypeVar("T")


@dataclass
class JudgedRun:
    """Everything judging produced."""

    judgments: list[Judgment]
    records: list[TurnRecord]
    """The judged turns."""
    judges: list[str]
    """``name@version`` of every judge that ran."""
    status: dict[str, str] = field(default_factory=dict)
    """One line per judge that did not simply run: why it was skipped, or how it went."""
    checks: CheckTotals | None = None
    tool_turns: list[str] = field(default_factory=list)
    llm: LLMJudgeStats | None = None


def registered_judges() -> tuple[RunJudge, ...]:
    """The built-in judges in the order they run (each sees the findings of those before
    it), then the plug-ins added with ``register_judge``."""
    return (
        DeterministicJudge(),
        LLMRunJudge(),
        TurnTakingJudge(),
        AudioRubricRunJudge(),
        AudioQualityRunJudge(),
        *plugin_judges(),
    )


def _selected(records: list[TurnRecord], options: JudgeOptions) -> set[str]:
    if options.only_turns is None:
        return {r.turn for r in records}
    wanted = set(options.only_turns)
    return {r.turn for r in records if r.index in wanted}


def _in_conversation_order(
    records: list[TurnRecord], findings: Sequence[JudgeFindings]
) -> list[Judgment]:
    by_turn: dict[str, list[Judgment]] = {}
    for found in findings:
        for j in found.judgments:
            by_turn.setdefault(j.turn, []).append(j)
    return [j for r in records for j in by_turn.get(r.turn, [])]


def _details(context: JudgeContext, judge: str, kind: type[T]) -> T | None:
    found = context.findings.get(judge)
    return found.details if found is not None and isinstance(found.details, kind) else None


async def judge_run(
    benchmark: Benchmark,
    records: list[TurnRecord],
    *,
    run_dir: RunDirectory | None = None,
    analysis: RunAnalysis | None = None,
    analysis_error: str | None = None,
    options: JudgeOptions | None = None,
    judges: Sequence[RunJudge] | None = None,
) -> JudgedRun:
    """Judge ``records`` of ``benchmark`` with ``judges`` (default: the registered ones)."""
    options = options or JudgeOptions()
    context = JudgeContext(
        benchmark=benchmark,
        records=records,
        selected=_selected(records, options),
        options=options,
        run_dir=run_dir,
        analysis=analysis,
        analysis_error=analysis_error,
    )
    labels: list[str] = []
    status: dict[str, str] = {}
    for judge in registered_judges() if judges is None else judges:
        reason = judge.skip_reason(context)
        if reason is not None:
            status[judge.name] = reason
            continue
        found = await judge.judge(context)
        context.findings[judge.name] = found
        labels += found.labels
        if found.status is not None:
            status[judge.name] = found.status

    judgments = _in_conversation_order(records, list(context.findings.values()))
    deterministic = _details(context, DETERMINISTIC, DeterministicResult)
    asked = _details(context, LLM, LLMRunOutcomes)
    judgments = absorption_pass(
        judgments,
        deterministic.checks if deterministic else {},
        asked.outcomes if asked else [],
        asked.judge_name if asked else "",
    )
    llm = context.findings.get(LLM)
    return JudgedRun(
        judgments=[j for j in judgments if j.turn in context.selected],
        records=context.selected_records,
        judges=labels,
        status=status,
        checks=deterministic.totals if deterministic else None,
        tool_turns=deterministic.tool_turns if deterministic else [],
        llm=llm.stats if llm is not None and isinstance(llm.stats, LLMJudgeStats) else None,
    )
