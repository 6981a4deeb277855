"""The ``turn_taking`` dimension, read from the run's analysis (``analysis.json``).

Turn-taking is measured once, from a run's recording and timeline, by ``voxbench.analysis``
(``RunAnalysis``: per-turn measures and the ``issues`` found); this judge never measures and
never guesses. A turn passes when no issue was found on it. Nothing is faked: without a
recording, or with ``--skip-turn-taking``, the dimension is absent from the scorecard and the
judge's status says why; an analysis that failed, or that has no measures for a turn, makes
that turn a recorded judge failure (undecided), never a pass.
"""

from __future__ import annotations

from voxbench.core.measures import RunAnalysis, TurnMeasures
from voxbench.core.records import Judgment, TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.judging.base import JudgeContext, JudgeFindings

DIMENSION = "turn_taking"
JUDGE_NAME = "turn-taking"
JUDGE_VERSION = "turn-taking-1"
"""Bump whenever what counts as an issue, or how issues become verdicts, changes."""


def _failed(turn: str, reason: str) -> Judgment:
    return Judgment(
        turn=turn,
        dimension=DIMENSION,
        passed=None,
        judge_failed=True,
        reasoning=reason,
        judge=JUDGE_NAME,
        judge_version=JUDGE_VERSION,
    )


def _judgment(t: TurnMeasures) -> Judgment:
    if not t.scored:
        return Judgment(
            turn=t.turn,
            dimension=DIMENSION,
            passed=None,
            reasoning="turn not run",
            evidence=list(t.issues),
            judge=JUDGE_NAME,
            judge_version=JUDGE_VERSION,
        )
    evidence = [
        f"{name}={value * 1000:.0f} ms"
        for name, value in (
            ("voice_to_voice", t.voice_to_voice),
            ("pipeline_ttfa", t.pipeline_ttfa),
            ("silent_pad_vad", t.silent_pad_vad),
        )
        if value is not None
    ]
    return Judgment(
        turn=t.turn,
        dimension=DIMENSION,
        passed=not t.issues,
        reasoning="clean turn-taking" if not t.issues else "; ".join(t.issues),
        evidence=evidence + t.issues,
        judge=JUDGE_NAME,
        judge_version=JUDGE_VERSION,
    )


def turn_taking_judgments(analysis: RunAnalysis, records: list[TurnRecord]) -> list[Judgment]:
    """One ``turn_taking`` judgment per record, from the analysis' per-turn issues."""
    out = []
    for record in records:
        measured = analysis.turn(record.turn)
        if measured is None:
            out.append(
                _failed(record.turn, "the turn-taking analysis returned no verdict for this turn")
            )
        else:
            out.append(_judgment(measured))
    return out


def turn_taking_issues(context: JudgeContext) -> dict[str, list[str]]:
    """Per measured turn, its turn-taking issues (empty: clean); empty when the run has no
    usable turn-taking analysis (a text run, skipped, or a failed analysis)."""
    if TurnTakingJudge().skip_reason(context) is not None:
        return {}
    analysis = context.analysis
    if analysis is None or not analysis.turn_taking:
        return {}
    out: dict[str, list[str]] = {}
    for record in context.records:
        measured = analysis.turn(record.turn)
        if measured is not None and measured.scored:
            out[record.turn] = list(measured.issues)
    return out


class TurnTakingJudge:
    """Turn-taking of audio runs, from the measures of ``analysis.json`` (as a ``RunJudge``)."""

    name = JUDGE_NAME
    version = JUDGE_VERSION

    def skip_reason(self, context: JudgeContext) -> str | None:
        """Applies to runs with a recording, unless skipped."""
        if context.options.skip_turn_taking:
            return "skipped (--skip-turn-taking)"
        if context.run_dir is None or not context.run_dir.has_recording:
            return f"not analysed: the run has no {RunDirectory.RECORDING} (text run)"
        return None

    async def judge(self, context: JudgeContext) -> JudgeFindings:
        """Read the verdicts off the analysis; a failed analysis leaves every turn undecided."""
        records = context.selected_records
        analysis = context.analysis
        if analysis is None or not analysis.turn_taking:
            reason = "turn-taking analysis failed: " + (
                context.analysis_error or "the analysis did not measure turn-taking"
            )
            judgments = [_failed(r.turn, reason) for r in records]
            return JudgeFindings(judgments=judgments, status=reason, labels=[self._label])
        return JudgeFindings(
            judgments=turn_taking_judgments(analysis, records),
            status="analysed",
            labels=[self._label],
        )

    @property
    def _label(self) -> str:
        return f"{JUDGE_NAME}@{JUDGE_VERSION}"
