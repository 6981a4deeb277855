"""``voxbench judge RUN_DIR``: (re)judge a recorded run without calling the target."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from voxbench.cli._evaluate import evaluate_run
from voxbench.report.terminal import scorecards_table

console = Console()


def judge_command(run_dir: Path = typer.Argument(..., help="A run directory.")) -> None:
    """Judge a run: writes judged.jsonl and scorecard.json, prints the scorecard."""
    card, _ = evaluate_run(run_dir)
    console.print(scorecards_table([card], title=f"{card.benchmark} · {card.target}"))
