"""Evaluate a recorded run: measure it, judge it, score it, write what a reader needs.

``evaluate_run`` composes the stages on a run directory's artifacts alone (the target is
never called again): the run's analysis (latency and turn-taking, measured once), the
registered judges and their absorption pass (``judging.run``), the scorecard
(``scoring``), the optional compatibility summary and ``report.md``. It holds the run's
writer lock while it does, so two judges never write the same run.

Judging a subset (``only_turns``) merges into the run's judgments: the selected turns'
judgments replace their old ones, every other judged turn keeps its own, and the scorecard
and report cover them all. A selection naming a turn the run did not record is refused
before anything is written.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voxbench.analysis import load_or_analyse
from voxbench.benchmarks.compat import load_compat_profile
from voxbench.benchmarks.loader import load_run_benchmark
from voxbench.core.benchmark import Benchmark, CompatProfile, ScoringRules
from voxbench.core.errors import ConfigError, RunLockedError
from voxbench.core.measures import RunAnalysis
from voxbench.core.records import Judgment, Scorecard, TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.judging.base import JudgeOptions
from voxbench.judging.run import judge_run
from voxbench.report.markdown import render_report
from voxbench.runner.config import parse_turn_selection
from voxbench.scoring.compat import compat_summary, missing_llm_dimensions
from voxbench.scoring.compat_files import conversation_bench_files
from voxbench.scoring.scorecard import DEFAULT_UNDECIDED_LIMIT, build_scorecard
from voxbench.store import index_finished_run

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
    """Judge by a public benchmark's rules and write its summary
    (``benchmarks.compat.compat_names``); needs an LLM judge."""
    use_cache: bool = True
    cache_dir: Path | None = None
    concurrency: int | None = None
    judge_client: TextCompletionClient | None = None
    """An LLM judge client to use instead of building one from ``judge`` (tests)."""
    audio_rubric: str | None = None
    """Judge the agent's audio with this rubric (built-in name or file), one dimension per
    criterion; needs ``audio_judge``."""
    audio_judge: str | None = None
    audio_judge_base_url: str | None = None
    audio_rubric_options: dict[str, str] = field(default_factory=dict)
    audio_samples: int = 1
    audio_client: Any = None
    """An audio judge client instead of one built from ``audio_judge`` (tests)."""
    audio_quality: bool = False
    """Score the agent's audio per turn with DNSMOS P.835 (dimension ``audio_quality``)."""
    max_undecided_share: float | None = DEFAULT_UNDECIDED_LIMIT
    """Above this share of undecided turns the evaluation reports ``too_many_undecided``
    (None: never)."""

    @property
    def llm_judge_asked(self) -> bool:
        """An LLM judge will run (a model or a client is given, code-only was not asked)."""
        return (self.judge is not None or self.judge_client is not None) and (
            not self.deterministic_only
        )

    def judge_options(self, scoring: ScoringRules | None = None) -> JudgeOptions:
        """The options of the judging stage (``scoring``: a compat profile's rules)."""
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
            scoring=scoring,
            audio_rubric=self.audio_rubric,
            audio_judge=self.audio_judge,
            audio_judge_base_url=self.audio_judge_base_url,
            audio_rubric_options=dict(self.audio_rubric_options),
            audio_samples=self.audio_samples,
            audio_client=self.audio_client,
            audio_quality=self.audio_quality,
        )


def compat_profile(options: EvaluationOptions) -> CompatProfile | None:
    """The compat profile ``options`` ask for; refused (exit code 2) without an LLM judge.

    Without one, instruction following and grounding are not judged, and on a benchmark with
    no fact or state checks the numbers would measure tool use alone while sitting inside the
    published range: no summary is better than a misleading one."""
    if options.compat is None:
        return None
    profile = load_compat_profile(options.compat)
    if not options.llm_judge_asked:
        raise ConfigError(
            f"a {profile.title}-compatible summary needs an LLM judge: its pass counts "
            f"{' and '.join(profile.llm_dimensions)}, which only a model judges; without one "
            "the numbers would measure tool use alone and are not comparable with published "
            "ones",
            field="--compat",
            expected="--judge PROVIDER:MODEL (without --deterministic-only), or leave out "
            "--compat for voxbench's own scorecard",
        )
    return profile


@dataclass
class Evaluation:
    """A judged run: its scorecard, judgments and the turns they are about."""

    card: Scorecard
    judgments: list[Judgment]
    records: list[TurnRecord]
    """The judged turns, in conversation order."""
    compat: dict[str, Any] | None = None
    analysis: RunAnalysis | None = field(default=None, repr=False)

    @property
    def too_many_undecided(self) -> bool:
        """More turns are undecided than the options allow: the scores are not the run's
        result (``voxbench judge`` exits with its own code)."""
        return self.card.too_many_undecided

    @property
    def undecided_summary(self) -> str | None:
        """One line on the undecided turns, or None when every judgment was decided."""
        return self.card.undecided_summary()


def _ranges(positions: list[int]) -> str:
    """``[0, 1, 2, 5]`` → ``"0-2,5"``."""
    out: list[str] = []
    start = prev = None
    for p in [*positions, None]:
        if p is not None and prev is not None and p == prev + 1:
            prev = p
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = p
    return ",".join(out)


def _check_selection(selection: list[int] | None, records: list[TurnRecord]) -> None:
    """Refuse a turn selection that names turns the run did not record."""
    if selection is None:
        return
    recorded = sorted({r.index for r in records})
    if not selection:
        raise ConfigError(
            "selects no turn", field="--only-turns", expected="turn positions like 0,3-5"
        )
    outside = [i for i in selection if i not in set(recorded)]
    if not outside:
        return
    have = f"turns {_ranges(recorded)}" if recorded else "no recorded turn"
    raise ConfigError(
        f"turn(s) {_ranges(outside)} are not in this run, which has {have}",
        field="--only-turns",
        expected=f"turn positions within {_ranges(recorded)}" if recorded else "a recorded run",
    )


@dataclass
class _Merged:
    judgments: list[Judgment]
    records: list[TurnRecord]
    judges: list[str]


def _merge(
    run_dir: RunDirectory,
    records: list[TurnRecord],
    judged: list[Judgment],
    judged_records: list[TurnRecord],
    labels: list[str],
) -> _Merged:
    """The re-judged turns' judgments in place of their old ones; other judged turns kept."""
    previous = run_dir.judgments() or []
    redone = {r.turn for r in judged_records}
    kept = [j for j in previous if j.turn not in redone]
    if not kept:
        return _Merged(judged, judged_records, labels)
    by_turn: dict[str, list[Judgment]] = {}
    for j in kept + judged:
        by_turn.setdefault(j.turn, []).append(j)
    union = [r for r in records if r.turn in by_turn]
    old_card = run_dir.scorecard()
    kept_judges = {j.judge for j in kept}
    old_labels = [
        label
        for label in (old_card.judges if old_card is not None else [])
        if label.split("@", 1)[0] in kept_judges and label not in labels
    ]
    return _Merged(
        judgments=[j for r in union for j in by_turn[r.turn]],
        records=union,
        judges=labels + old_labels,
    )


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
    profile = compat_profile(options)
    limit = options.max_undecided_share
    if limit is not None and not 0 <= limit <= 1:
        raise ConfigError(
            f"{limit} is not a share",
            field="max_undecided_share",
            expected="a number from 0 to 1 (0.2: more than 20% of turns undecided is too many)",
        )
    judge_options = options.judge_options(profile.scoring if profile is not None else None)
    run_dir = RunDirectory.open_existing(path)
    # Checked before the lock is taken or anything is measured: a wrong selection changes
    # nothing.
    _check_selection(judge_options.only_turns, run_dir.turns())
    with run_dir.lock(LOCK_PURPOSE) if write else contextlib.nullcontext():
        info = run_dir.info()
        benchmark = load_run_benchmark(info, run_dir.path)
        records = run_dir.turns()
        _check_selection(judge_options.only_turns, records)
        analysis, analysis_error = _measure(run_dir, write=write)
        judged = await judge_run(
            benchmark,
            records,
            run_dir=run_dir,
            analysis=analysis,
            analysis_error=analysis_error,
            options=judge_options,
        )
        merged = _Merged(judged.judgments, judged.records, judged.judges)
        if judge_options.only_turns is not None:
            merged = _merge(run_dir, records, judged.judgments, judged.records, judged.judges)
        card = build_scorecard(
            run_id=info.run_id,
            benchmark=info.benchmark,
            target=info.target.name,
            records=merged.records,
            judgments=merged.judgments,
            checks=judged.checks,
            tool_turns=judged.tool_turns,
            llm_judge=judged.llm,
            judge_status=judged.status,
            latency=analysis.latency if analysis is not None else None,
            judges=merged.judges,
            undecided_limit=limit,
            rule_table=benchmark,
            scoring_rules=_rules_name(profile, benchmark.scoring),
        )
        summary = None
        if profile is not None:
            missing = missing_llm_dimensions(profile, merged.judgments)
            if missing:  # the benchmark's rule table never asks the judge for them
                raise ConfigError(
                    f"no judgment of {', '.join(missing)} on this run: a "
                    f"{profile.title}-compatible summary cannot be counted",
                    field="--compat",
                    expected="a benchmark whose rule table scores "
                    + ", ".join(profile.llm_dimensions),
                )
            summary = compat_summary(profile, benchmark, card, merged.records, merged.judgments)
        if write:
            run_dir.write_judgments(merged.judgments)
            run_dir.write_scorecard(card)
            if summary is not None and profile is not None:
                run_dir.write_json(run_dir.compat_file(profile.name), summary)
                if profile.name == "conversation-bench":
                    _write_upstream_files(run_dir, benchmark, merged, summary, analysis)
            report = render_report(
                card,
                merged.records,
                merged.judgments,
                summary,
                perturbations=info.perturbations,
                seed=info.seed,
            )
            run_dir.write_text(run_dir.report_file, report)
    if write:  # the judged run joins the results store (a failure there is only a warning)
        index_finished_run(run_dir.path)
    return Evaluation(
        card=card,
        judgments=merged.judgments,
        records=merged.records,
        compat=summary,
        analysis=analysis,
    )


def _rules_name(profile: CompatProfile | None, own: ScoringRules) -> str:
    """What the scorecard says the run was judged by."""
    if profile is not None:
        return profile.name
    return "voxbench" if own == ScoringRules() else "benchmark"


def _write_upstream_files(
    run_dir: RunDirectory,
    benchmark: Benchmark,
    merged: _Merged,
    summary: dict[str, Any],
    analysis: RunAnalysis | None,
) -> None:
    """ConversationBench's own file names and layout, so its scripts read this run."""
    rows, upstream_summary, markdown = conversation_bench_files(
        benchmark, merged.records, merged.judgments, summary, analysis
    )
    run_dir.write_jsonl(run_dir.path / RunDirectory.CB_JUDGED, rows)
    run_dir.write_json(run_dir.path / RunDirectory.CB_SUMMARY, upstream_summary)
    run_dir.write_text(run_dir.path / RunDirectory.CB_ANALYSIS, markdown)


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
