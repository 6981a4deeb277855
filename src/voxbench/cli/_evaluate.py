"""Judge a run's artifacts and write judged.jsonl, scorecard.json and report.md.

Shared by ``run``, ``judge``, ``show``, ``compare``, ``demo`` and ``bench check``.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voxbench.analysis import load_or_analyse
from voxbench.benchmarks.loader import load_run_benchmark
from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ConfigError
from voxbench.core.records import Judgment, Scorecard, TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.judging.run import JudgeOptions, judge_run
from voxbench.judging.turn_taking import TurnTakingAnalyser
from voxbench.report.markdown import render_report
from voxbench.runner.config import RunConfig, parse_turn_selection
from voxbench.runner.launch import run_conversation
from voxbench.scoring.compat import COMPAT_NAMES, conversation_bench_summary
from voxbench.scoring.scorecard import build_scorecard


@dataclass
class Evaluation:
    """A judged run: its scorecard, judgments and the turns they are about."""

    card: Scorecard
    judgments: list[Judgment]
    records: list[TurnRecord]
    compat: dict[str, Any] | None = None


def turn_taking_analyser() -> TurnTakingAnalyser:
    """Turn-taking judgments from the run's analysis (measured once, kept in analysis.json)."""

    def analyse(run_path: Path, records: list[TurnRecord]) -> list[Judgment]:
        from voxbench.analysis import load_or_analyse

        analysis = load_or_analyse(run_path, write=True)
        return [
            Judgment(
                turn=t.turn,
                dimension="turn_taking",
                passed=(not t.issues) if t.scored else None,
                reasoning=("clean turn-taking" if not t.issues else "; ".join(t.issues))
                if t.scored
                else "turn not run",
                evidence=[
                    f"{name}={value * 1000:.0f} ms"
                    for name, value in (
                        ("voice_to_voice", t.voice_to_voice),
                        ("pipeline_ttfa", t.pipeline_ttfa),
                        ("silent_pad_vad", t.silent_pad_vad),
                    )
                    if value is not None
                ]
                + t.issues,
                judge="turn-taking",
                judge_version="turn-taking-1",
            )
            for t in analysis.turns
        ]

    return analyse


async def evaluate_run_async(
    path: str | Path,
    *,
    judge: str | None = None,
    judge_base_url: str | None = None,
    only_turns: str | list[int] | None = None,
    skip_turn_taking: bool = False,
    deterministic_only: bool = False,
    compat: str | None = None,
    use_cache: bool = True,
) -> Evaluation:
    """Judge the run at ``path`` and write its judgments, scorecard and report."""
    if compat is not None and compat not in COMPAT_NAMES:
        raise ConfigError(
            f"unknown compatibility summary {compat!r}",
            field="--compat",
            expected=", ".join(COMPAT_NAMES),
        )
    run_dir = RunDirectory.open_existing(path)
    info = run_dir.info()
    benchmark = load_run_benchmark(info, run_dir.path)
    turns = parse_turn_selection(only_turns) if isinstance(only_turns, str) else only_turns
    options = JudgeOptions(
        judge=judge,
        base_url=judge_base_url,
        only_turns=turns,
        skip_turn_taking=skip_turn_taking,
        deterministic_only=deterministic_only,
        use_cache=use_cache,
    )
    judged = await judge_run(
        benchmark,
        run_dir.turns(),
        run_path=run_dir.path,
        options=options,
        turn_taking=turn_taking_analyser(),
    )
    run_dir.write_judgments(judged.judgments)
    checks = dict(judged.totals) | {"turn_taking": judged.turn_taking}
    if judged.llm:
        checks["llm_judge"] = judged.llm
    card = build_scorecard(
        run_id=info.run_id,
        benchmark=info.benchmark,
        target=info.target.name,
        records=judged.records,
        judgments=judged.judgments,
        checks=checks,
        seed=info.seed,
        judges=judged.judges,
        latency={
            name: summary.model_dump(exclude_none=True)
            for name, summary in load_or_analyse(run_dir, write=True).latency.items()
        },
    )
    run_dir.write_scorecard(card)
    summary = None
    if compat is not None:
        summary = conversation_bench_summary(benchmark, card, judged.records, judged.judgments)
        run_dir.write_json(run_dir.compat_file(compat), summary)
    report = render_report(card, judged.records, judged.judgments, summary)
    run_dir.write_text(run_dir.report_file, report)
    return Evaluation(card=card, judgments=judged.judgments, records=judged.records, compat=summary)


def evaluate_run(path: str | Path, **options: Any) -> tuple[Scorecard, list[Judgment]]:
    """Judge the run at ``path`` (deterministically unless a judge is given); see
    ``evaluate_run_async`` for the options."""
    result = asyncio.run(evaluate_run_async(path, **options))
    return result.card, result.judgments


def load_or_evaluate(path: str | Path) -> tuple[Scorecard, list[Judgment]]:
    """The run's saved scorecard and judgments, or a deterministic judging when it has none
    (so showing a run never throws away an LLM judge's verdicts)."""
    run_dir = RunDirectory.open_existing(path)
    card_file, transcript = run_dir.scorecard_file, run_dir.transcript_file
    judgments = run_dir.judgments()
    fresh = (
        judgments is not None
        and card_file.is_file()
        and (not transcript.is_file() or card_file.stat().st_mtime >= transcript.stat().st_mtime)
    )
    card = run_dir.scorecard() if fresh else None  # an older-format scorecard: judge again
    if card is not None and judgments is not None:
        return card, judgments
    return evaluate_run(path)


def oracle_check(benchmark: Benchmark) -> list[str]:
    """Run the oracle on ``benchmark`` in a temporary directory; list every check it fails."""
    with tempfile.TemporaryDirectory(prefix="voxbench-oracle-") as tmp:
        config = RunConfig(benchmark=str(benchmark.root), target="local/oracle", runs_dir=Path(tmp))
        path = asyncio.run(run_conversation(config))
        card, judgments = evaluate_run(path, deterministic_only=True, skip_turn_taking=True)
    problems = [
        f"oracle fails {j.dimension} on turn {j.turn}: {'; '.join(j.evidence) or j.reasoning}"
        for j in judgments
        if j.passed is not True or j.absorbed_by
    ]
    end = card.checks.get("end_state")
    if end is not None and not end["passed"]:
        problems.append("oracle's final backend state differs: " + "; ".join(end["diff"]))
    if card.counts.get("ok") != card.turns:
        problems.append(f"oracle completed {card.counts.get('ok')} of {card.turns} turns")
    return problems
