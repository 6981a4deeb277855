"""``voxbench show RUN_DIR``: a readable per-turn table of a run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.cli.repeats import show_group
from voxbench.cli.tables import print_table
from voxbench.core.errors import ConfigError
from voxbench.core.records import Judgment, TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import load_or_evaluate
from voxbench.report.terminal import scorecards_table, turns_table
from voxbench.scale.repeats import is_repeat_group


def show_command(
    run_dir: Path = typer.Argument(..., help="A run directory."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show full texts."),
    failures: bool = typer.Option(False, "--failures", help="Only turns that failed a check."),
    as_json: bool = typer.Option(
        False, "--json", help="Print the run, its scorecard and its turns as JSON on stdout."
    ),
) -> None:
    """Show each turn of a run: user, agent, tool calls and verdicts (or a repeat group's
    summary)."""
    console = make_console()
    if is_repeat_group(run_dir):
        if as_json:
            raise ConfigError(
                "a repeat group has no single scorecard",
                file=run_dir,
                field="--json",
                expected="one run directory of the group",
            )
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
    if as_json:
        sys.stdout.write(json.dumps(run_json(info, card, records, judgments), indent=2) + "\n")
        return
    console.print(
        f"[b]{escape(info.benchmark)}[/b] v{escape(info.benchmark_version)} · "
        f"[b]{escape(info.target.name)}[/b] · {info.status} · started {info.started_at}"
    )
    print_table(console, turns_table(records, judgments, verbose=verbose))
    print_table(console, scorecards_table([card]))


def run_json(
    info: Any, card: Any, records: list[TurnRecord], judgments: list[Judgment]
) -> dict[str, Any]:
    """What ``show --json`` prints: ``run.json``, the scorecard, and each turn with its
    verdicts (the files' own fields, secrets already redacted in them)."""
    by_turn: dict[str, list[dict[str, Any]]] = {}
    for j in judgments:
        by_turn.setdefault(j.turn, []).append(j.model_dump(mode="json"))
    return {
        "run": info.model_dump(mode="json"),
        "scorecard": card.model_dump(mode="json") if card is not None else None,
        "turns": [
            {**r.model_dump(mode="json"), "verdicts": by_turn.get(r.turn, [])} for r in records
        ],
    }
