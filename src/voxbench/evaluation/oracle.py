"""``voxbench bench check``'s oracle run: the benchmark's own answers must pass every check."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from voxbench.core.benchmark import Benchmark
from voxbench.evaluation.evaluate import EvaluationOptions, evaluate_run
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation


def oracle_check(benchmark: Benchmark) -> list[str]:
    """Run the oracle on ``benchmark`` in a temporary directory; list every check it fails."""
    with tempfile.TemporaryDirectory(prefix="voxbench-oracle-") as tmp:
        config = RunConfig(benchmark=str(benchmark.root), target="local/oracle", runs_dir=Path(tmp))
        path = asyncio.run(run_conversation(config))
        result = evaluate_run(
            path, EvaluationOptions(deterministic_only=True, skip_turn_taking=True)
        )
    card = result.card
    problems = [
        f"oracle fails {j.dimension} on turn {j.turn}: {'; '.join(j.evidence) or j.reasoning}"
        for j in result.judgments
        if j.passed is not True or j.absorbed_by
    ]
    end = card.checks.end_state if card.checks is not None else None
    if end is not None and not end.passed:
        problems.append("oracle's final backend state differs: " + "; ".join(end.diff))
    if card.counts.ok != card.turns:
        problems.append(f"oracle completed {card.counts.ok} of {card.turns} turns")
    return problems
