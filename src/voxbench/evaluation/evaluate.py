"""Evaluate a recorded run: measure it, judge it, score it, write what a reader needs.

``evaluate_run`` composes the stages on a run directory's artifacts alone (the target is
never called again): the run's analysis (latency and turn-taking, measured once), the
registered judges and their absorption pass (``judging.run``), the scorecard
(``scoring``), the optional compatibility summary and ``report.md``. It holds the run's
writer lock while it does, so two judges never write the same run.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voxbench.analysis import load_or_analyse
from voxbench.benchmarks.loader import load_run_benchmark
from voxbench.core.errors import ConfigError, RunLockedError
from voxbench.core.measures import RunAnalysis
from voxbench.core.records import Judgment, Scorecard, TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.judging.base import JudgeOptions
from voxbench.judging.run import judge_run
from voxbench.report.markdown import render_report
from voxbench.runner.config import parse_turn_selection
from voxbench.scoring.compat import COMPAT_NAMES, conversation_bench_summary
from voxbench.scoring.scorecard import build_scorecard

if TYPE_CHECKING:
    from voxbench.providers.completion import TextCompletionClient

LOCK_PURPOSE = "voxbench judge"


@dataclass
class EvaluationOptions:
    """How to evaluate a run (the flags of ``voxbench judge``)."""

    judge: str | None = None
    """LLM judge as ``provider/model``; None judges with code only."""
    judge_base_url: str | None = None
    only_turns: str | list[int] | None = None
    """Turn positions to judge (``"0,3-5"`` or 0-based positions); None judges every turn."""
    skip_turn_taking: bool = False
    deterministic_only: bool = False
    compat: str | None = None
    """Also write a summary with another benchmark's counting rules (``COMPAT_NAMES``)."""
    use_cache: bool = True
    cache_dir: Path | None = None
    concurrency: int | None = None
    judge_client: TextCompletionClient | None = None
    """An LLM judge client to use instead of building one from ``judge`` (tests)."""

    def judge_options(self) -> JudgeOptions:
        """The options of the judging stage."""
        turns = (
            parse_turn_selection(self.only_turns)
            if isinstance(self.only_turns, str)
            else self.only_turns
        )
        return JudgeOptions(
            judge=self.judge,
            base_url=self.judge_base_url,
            only_turns=turns,
            skip_turn_taking=self.skip_turn_taking,
            deterministic_only=self.deterministic_only,
            use_cache=self.use_cache,
            cache_dir=self.cache_dir,
            concurrency=self.concurrency,
            client=self.judge_client,
        )


@dataclass
class Evaluation:
    """A judged run: its scorecard, judgments and the turns they are about."""

    card: Scorecard
    judgments: list[Judgment]
    records: list[TurnRecord]
    """The judged turns, in conversation order."""
    compat: dict[str, Any] | None = None
    analysis: RunAnalysis | None = field(default=None, repr=False)


def _measure(run_dir: RunDirectory, *, write: bool) -> tuple[RunAnalysis | None, str | None]:
    """The run's analysis (``analysis.json`` while it is current; a writer holds the lock)."""
    try:
        return load_or_analyse(run_dir, write=write), None
    except Exception as exc:  # a broken measurement is reported by the judges, never hidden
        return None, f"{type(exc).__name__}: {exc}"


async def evaluate_run_async(
    path: str | Path, options: EvaluationOptions | None = None, *, write: bool = True
) -> Evaluation:
    """Judge the run at ``path`` and write its judgments, scorecard and report.

    With ``write=False`` nothing is written and no lock is taken: a run still being
    recorded (or judged) elsewhere can be looked at."""
    options = options or EvaluationOptions()
    if options.compat is not None and options.compat not in COMPAT_NAMES:
        raise ConfigError(
            f"unknown compatibility summary {options.compat!r}",
            field="--compat",
            expected=", ".join(COMPAT_NAMES),
        )
    judge_options = options.judge_options()
    run_dir = RunDirectory.open_existing(path)
    with run_dir.lock(LOCK_PURPOSE) if write else contextlib.nullcontext():
        info = run_dir.info()
        benchmark = load_run_benchmark(info, run_dir.path)
        analysis, analysis_error = _measure(run_dir, write=write)
        judged = await judge_run(
            benchmark,
            run_dir.turns(),
            run_dir=run_dir,
            analysis=analysis,
            analysis_error=analysis_error,
            options=judge_options,
        )
        card = build_scorecard(
            run_id=info.run_id,
            benchmark=info.benchmark,
            target=info.target.name,
            records=judged.records,
            judgments=judged.judgments,
            checks=judged.checks,
            tool_turns=judged.tool_turns,
            llm_judge=judged.llm,
            judge_status=judged.status,
            latency=analysis.latency if analysis is not None else None,
            seed=info.seed,
            judges=judged.judges,
        )
        summary = None
        if options.compat is not None:
            summary = conversation_bench_summary(benchmark, card, judged.records, judged.judgments)
        if write:
            run_dir.write_judgments(judged.judgments)
            run_dir.write_scorecard(card)
            if summary is not None and options.compat is not None:
                run_dir.write_json(run_dir.compat_file(options.compat), summary)
            report = render_report(card, judged.records, judged.judgments, summary)
            run_dir.write_text(run_dir.report_file, report)
    return Evaluation(
        card=card,
        judgments=judged.judgments,
        records=judged.records,
        compat=summary,
        analysis=analysis,
    )


def evaluate_run(
    path: str | Path, options: EvaluationOptions | None = None, *, write: bool = True
) -> Evaluation:
    """Judge the run at ``path`` (deterministically unless ``options`` name a judge)."""
    return asyncio.run(evaluate_run_async(path, options, write=write))


def load_or_evaluate(path: str | Path) -> Evaluation:
    """The run's saved scorecard and judgments, or a deterministic judging when it has none,
    when they are older than its transcript, or when its scorecard is in an older format (so
    showing a run never throws away an LLM judge's current verdicts)."""
    run_dir = RunDirectory.open_existing(path)
    card_file, transcript = run_dir.scorecard_file, run_dir.transcript_file
    judgments = run_dir.judgments()
    fresh = (
        judgments is not None
        and card_file.is_file()
        and (not transcript.is_file() or card_file.stat().st_mtime >= transcript.stat().st_mtime)
    )
    card = run_dir.scorecard() if fresh else None
    if card is None or judgments is None:
        try:
            return evaluate_run(path)
        except RunLockedError:  # being recorded or judged right now: look without writing
            return evaluate_run(path, write=False)
    judged = {j.turn for j in judgments}
    records = [r for r in run_dir.turns() if r.turn in judged]
    return Evaluation(card=card, judgments=judgments, records=records)
