"""``voxbench analyze RUN_DIR``: latency and turn-taking of a run, measured once from its artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from voxbench.cli.console import make_console
from voxbench.core.measures import RunAnalysis
from voxbench.core.rundir import RunDirectory


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1000:.0f}"


def analyze_command(
    run_dir: Path = typer.Argument(..., help="A run directory (audio runs add turn-taking)."),
    as_json: bool = typer.Option(False, "--json", help="Print the full analysis as JSON."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="A per-turn table."),
    write: bool = typer.Option(
        False, "--write", help="Save the measurement as analysis.json in the run directory."
    ),
) -> None:
    """Latency per turn (TTFB, TTFT, first audio) and, for audio runs, turn-taking:
    voice-to-voice, silent padding, overlaps."""
    from voxbench.analysis import load_or_analyse

    console = make_console()
    run = RunDirectory.open_existing(run_dir)
    if write:
        with run.lock("voxbench analyze --write"):
            analysis = load_or_analyse(run, write=True)
    else:
        analysis = load_or_analyse(run)
    if as_json:
        print(json.dumps(analysis.model_dump(mode="json"), indent=2))
        return
    if verbose:
        _per_turn_table(analysis, console)
    table = Table(title="Latency (ms)", title_justify="left")
    for col in ("metric", "p50", "p90", "p95", "p99", "mean", "n"):
        table.add_column(col, justify="right" if col != "metric" else "left")
    for metric, s in analysis.latency.items():
        table.add_row(metric, *(_ms(v) for v in (s.p50, s.p90, s.p95, s.p99, s.mean)), str(s.count))
    console.print(table)
    for warning in analysis.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    if not analysis.turn_taking:
        console.print("turn-taking: not measured (a text run has no conversation.wav)")
        return
    scored = [t for t in analysis.turns if t.scored]
    failed = [t for t in scored if t.issues]
    console.print(
        f"turn-taking: {len(scored) - len(failed)}/{len(scored)} turns clean; "
        f"{len(analysis.unprompted)} unprompted agent segment(s)"
    )
    for t in failed:
        console.print(f"  turn {escape(t.turn)}: {escape(', '.join(t.issues))}")


def _per_turn_table(analysis: RunAnalysis, console: Console) -> None:
    table = Table(title="Per turn (ms)", title_justify="left")
    columns = ["turn", "ttfb", "ttft", "audio"]
    if analysis.turn_taking:
        columns += ["pipeline", "v2v", "pad vad", "pad rms", "issues"]
    for col in columns:
        table.add_column(col, justify="left" if col in ("turn", "issues") else "right")
    for t in analysis.turns:
        row = [escape(t.turn), _ms(t.ttfb), _ms(t.ttft), _ms(t.first_audio_latency)]
        if analysis.turn_taking:
            row += [
                _ms(t.pipeline_ttfa),
                _ms(t.voice_to_voice),
                _ms(t.silent_pad_vad),
                _ms(t.silent_pad_rms),
                ", ".join(t.issues) or ("" if t.scored else "not run"),
            ]
        table.add_row(*row)
    console.print(table)
