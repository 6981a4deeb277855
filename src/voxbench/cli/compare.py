"""``voxbench compare RUN_A RUN_B``: two judged runs side by side, with a paired test per dimension."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from voxbench.cli._evaluate import load_or_evaluate
from voxbench.core.rundir import RunDirectory
from voxbench.report.terminal import comparison_table
from voxbench.scoring.compare import compare_runs

console = Console()


def compare_command(
    run_a: Path = typer.Argument(..., help="The reference run directory (A)."),
    run_b: Path = typer.Argument(..., help="The run to compare with it (B)."),
    json_out: Path = typer.Option(
        None, "--json", help="Also write the comparison as JSON to this file."
    ),
) -> None:
    """Per-dimension pass rates of B against A, paired by turn (exact McNemar test).

    Runs that were never judged are judged deterministically first; to compare LLM-judged
    dimensions, judge both runs with the same --judge before comparing.
    """
    card_a, judgments_a = load_or_evaluate(run_a)
    card_b, judgments_b = load_or_evaluate(run_b)
    records_a = [
        r
        for r in RunDirectory.open_existing(run_a).turns()
        if r.turn in {j.turn for j in judgments_a}
    ]
    records_b = [
        r
        for r in RunDirectory.open_existing(run_b).turns()
        if r.turn in {j.turn for j in judgments_b}
    ]
    comparison = compare_runs(card_a, records_a, judgments_a, card_b, records_b, judgments_b)
    console.print(comparison_table(comparison))
    judges_a = sorted(set(card_a.judges))
    judges_b = sorted(set(card_b.judges))
    if judges_a != judges_b:
        console.print(
            "[yellow]note:[/yellow] the runs were judged by different judges "
            f"({', '.join(judges_a)} vs {', '.join(judges_b)})"
        )
    if json_out is not None:
        json_out.write_text(
            json.dumps(comparison.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
        )
