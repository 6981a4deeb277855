"""``voxbench synth``: speak a benchmark's user turns into cached WAV files."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from voxbench.benchmarks.audio import synthesize_benchmark_audio
from voxbench.benchmarks.loader import load_benchmark
from voxbench.cli.console import make_console
from voxbench.core.benchmark import Turn


def synth_command(
    benchmark: str = typer.Argument(..., help="Benchmark name or directory."),
    tts: str = typer.Option(
        "local/espeak",
        "--tts",
        help="TTS engine: local/espeak, openai/tts-1, openai/gpt-4o-mini-tts.",
    ),
    voice: str | None = typer.Option(None, "--voice", help="Voice (engine default when omitted)."),
    out: Path | None = typer.Option(
        None, "--out", help="Output directory (default: the voxbench audio cache)."
    ),
    force: bool = typer.Option(False, "--force", help="Synthesize every turn again."),
) -> None:
    """Write each turn's audio (24 kHz mono WAV) and manifest.json; only changed turns are redone."""
    b = load_benchmark(benchmark)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[last]}"),
        console=make_console(stderr=True),
    ) as progress:
        task = progress.add_task(f"{b.id} with {tts}", total=len(b.turns), last="")

        def on_turn(turn: Turn, synthesized: bool) -> None:
            what = "synthesized" if synthesized else "cached"
            progress.update(task, advance=1, last=f"turn {turn.id} {what}")

        report = synthesize_benchmark_audio(
            b, tts=tts, voice=voice, out_dir=out, force=force, progress=on_turn
        )
    removed = f", {len(report.removed)} stale removed" if report.removed else ""
    make_console().print(
        f"{len(report.synthesized)} synthesized, {len(report.reused)} reused{removed}: "
        f"{escape(str(report.out_dir))}",
        highlight=False,
    )
