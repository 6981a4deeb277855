"""Judge a run's artifacts and write judged.jsonl + scorecard.json (shared by run/judge/demo)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import RunError
from voxbench.core.records import Judgment, Scorecard
from voxbench.judging.run import judge_records, write_judgments
from voxbench.runner.artifacts import RunDirectory, write_json_atomic
from voxbench.runner.config import RunConfig
from voxbench.runner.conversation import run_conversation
from voxbench.scoring.scorecard import build_scorecard

SCORECARD_FILE = "scorecard.json"


def evaluate_run(path: str | Path) -> tuple[Scorecard, list[Judgment]]:
    """Judge the run at ``path`` deterministically and write its judgments and scorecard."""
    run_dir = RunDirectory.open_existing(path)
    info = run_dir.info()
    benchmark = load_benchmark(info.benchmark_path or info.benchmark)
    if benchmark.content_hash != info.benchmark_hash:
        raise RunError(
            f"{run_dir.path}: benchmark {benchmark.id} changed since this run "
            f"(hash {info.benchmark_hash} → {benchmark.content_hash})"
        )
    records = run_dir.turns()
    judgments, totals = judge_records(benchmark, records)
    write_judgments(run_dir.path, judgments)
    card = build_scorecard(
        run_id=info.run_id,
        benchmark=info.benchmark,
        target=info.target.name,
        records=records,
        judgments=judgments,
        checks=totals,
        seed=info.seed,
    )
    write_json_atomic(run_dir.path / SCORECARD_FILE, card.model_dump(mode="json"))
    return card, judgments


def oracle_check(benchmark: Benchmark) -> list[str]:
    """Run the oracle on ``benchmark`` in a temporary directory; list every check it fails."""
    with tempfile.TemporaryDirectory(prefix="voxbench-oracle-") as tmp:
        config = RunConfig(benchmark=str(benchmark.root), target="local/oracle", runs_dir=Path(tmp))
        path = asyncio.run(run_conversation(config))
        card, judgments = evaluate_run(path)
    problems = [
        f"oracle fails {j.dimension} on turn {j.turn}: {'; '.join(j.evidence) or j.reasoning}"
        for j in judgments
        if j.passed is False
    ]
    if card.counts.get("ok") != card.turns:
        problems.append(f"oracle completed {card.counts.get('ok')} of {card.turns} turns")
    return problems
