"""``voxbench compare RUN_A RUN_B``: two judged runs side by side, with a paired test per dimension."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.cli.repeats import compare_groups
from voxbench.core.errors import ConfigError
from voxbench.evaluation import load_or_evaluate
from voxbench.report.terminal import comparison_table
from voxbench.scale.repeats import is_repeat_group
from voxbench.scoring.compare import compare_runs

console = make_console()


def compare_command(
    run_a: Path = typer.Argument(..., help="The reference run directory (A)."),
    run_b: Path = typer.Argument(..., help="The run to compare with it (B)."),
    json_out: Path = typer.Option(
        None, "--json", help="Also write the comparison as JSON to this file."
    ),
) -> None:
    """Per-dimension pass rates of B against A, paired by turn (exact McNemar test).

    Two repeat groups (``run --repeats``) are compared with their runs as the unit: a
    permutation test of which runs belong to A and which to B, paired by turn.

    Runs that were never judged are judged deterministically first; to compare LLM-judged
    dimensions, judge both runs with the same --judge before comparing.
    """
    if is_repeat_group(run_a) or is_repeat_group(run_b):
        if not (is_repeat_group(run_a) and is_repeat_group(run_b)):
            raise ConfigError(
                "compare a repeat group with another repeat group, or a run with a run",
                file=run_b if is_repeat_group(run_a) else run_a,
                expected="two run directories or two repeat groups (--repeats)",
            )
        grouped = compare_groups(run_a, run_b)
        if json_out is not None:
            json_out.write_text(grouped.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return
    a, b = load_or_evaluate(run_a), load_or_evaluate(run_b)
    comparison = compare_runs(a.card, a.records, a.judgments, b.card, b.records, b.judgments)
    console.print(comparison_table(comparison))
    judges_a = sorted(set(a.card.judges))
    judges_b = sorted(set(b.card.judges))
    if judges_a != judges_b:
        console.print(
            "[yellow]note:[/yellow] the runs were judged by different judges "
            f"({escape(', '.join(judges_a))} vs {escape(', '.join(judges_b))})"
        )
    if json_out is not None:
        json_out.write_text(
            json.dumps(comparison.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
        )
