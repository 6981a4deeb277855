"""``voxbench analyze RUN_DIR``: turn-taking and latency of an audio run, from its artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from voxbench.analysis.turn_taking import TurnTakingReport, analyse_recorded_run
from voxbench.scoring.scorecard import percentiles

console = Console()
METRICS = ("server_ttfb", "pipeline_ttfa", "voice_to_voice", "silent_pad_vad", "silent_pad_rms")


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1000:.0f}"


def summary(report: TurnTakingReport) -> dict[str, dict[str, float]]:
    """p50/p90/p95/p99, mean and count of every timing (values ≤ 0 included)."""
    scored = [t for t in report.turns if t.scored]
    return {m: percentiles(getattr(t, m) for t in scored) for m in METRICS}


def analyze_command(
    run_dir: Path = typer.Argument(..., help="An audio run directory (holds conversation.wav)."),
    as_json: bool = typer.Option(False, "--json", help="Print the full analysis as JSON."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="A per-turn table."),
) -> None:
    """Turn-taking and latency per turn: TTFB, voice-to-voice, silent padding, overlaps."""
    report = analyse_recorded_run(run_dir)
    stats = summary(report)
    if as_json:
        print(json.dumps({"summary": stats, **report.to_dict()}, indent=2))
        return
    if verbose:
        table = Table(title="Per turn (ms)", title_justify="left")
        for col in ("turn", "ttfb", "pipeline", "v2v", "pad vad", "pad rms", "issues"):
            table.add_column(col, justify="right" if col not in ("turn", "issues") else "left")
        for t in report.turns:
            table.add_row(
                t.turn,
                _ms(t.server_ttfb),
                _ms(t.pipeline_ttfa),
                _ms(t.voice_to_voice),
                _ms(t.silent_pad_vad),
                _ms(t.silent_pad_rms),
                ", ".join(t.issues) or ("" if t.scored else "not run"),
            )
        console.print(table)
    table = Table(title="Latency (ms)", title_justify="left")
    for col in ("metric", "p50", "p90", "p95", "p99", "mean", "n"):
        table.add_column(col, justify="right" if col != "metric" else "left")
    for metric, s in stats.items():
        if s.get("count"):
            table.add_row(
                metric, *(_ms(s[k]) for k in ("p50", "p90", "p95", "p99", "mean")), str(s["count"])
            )
    console.print(table)
    failed = [t for t in report.turns if t.scored and t.issues]
    console.print(
        f"turn-taking: {sum(t.scored for t in report.turns) - len(failed)}/"
        f"{sum(t.scored for t in report.turns)} turns clean; "
        f"{len(report.unprompted)} unprompted agent segment(s)"
    )
    for t in failed:
        console.print(f"  turn {t.turn}: {', '.join(t.issues)}")
