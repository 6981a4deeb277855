"""``voxbench show RUN_DIR``: a readable per-turn table of a run."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.cli.repeats import show_group
from voxbench.cli.tables import print_table
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import load_or_evaluate
from voxbench.report.terminal import scorecards_table, turns_table
from voxbench.scale.repeats import is_repeat_group


def show_command(
    run_dir: Path = typer.Argument(..., help="A run directory."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show full texts."),
    failures: bool = typer.Option(False, "--failures", help="Only turns that failed a check."),
) -> None:
    """Show each turn of a run: user, agent, tool calls and verdicts (or a repeat group's
    summary)."""
    console = make_console()
    if is_repeat_group(run_dir):
        show_group(run_dir)
        return
    run = RunDirectory.open_existing(run_dir)
    info = run.info()
    evaluation = load_or_evaluate(run_dir)
    card, judgments = evaluation.card, evaluation.judgments
    records = run.turns()
    if failures:
        failed = {j.turn for j in judgments if j.passed is False} | {
            r.turn for r in records if r.status != "ok"
        }
        records = [r for r in records if r.turn in failed]
    console.print(
        f"[b]{escape(info.benchmark)}[/b] v{escape(info.benchmark_version)} · "
        f"[b]{escape(info.target.name)}[/b] · {info.status} · started {info.started_at}"
    )
    print_table(console, turns_table(records, judgments, verbose=verbose))
    print_table(console, scorecards_table([card]))
