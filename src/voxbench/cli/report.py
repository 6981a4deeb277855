"""``voxbench report RUN``: a run's ``report.md``, and with ``--html`` its ``report.html``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import load_or_evaluate
from voxbench.report.html import write_run_html
from voxbench.report.markdown import render_report

console = make_console()


def report_command(
    run_dir: Path = typer.Argument(..., help="A run directory."),
    html: bool = typer.Option(
        False, "--html", help="Also write report.html: one self-contained page with players."
    ),
    embed_audio: bool = typer.Option(
        False,
        "--embed-audio",
        help="Put each turn's audio into report.html (a page to mail; larger) instead of "
        "linking to conversation.wav beside it.",
    ),
) -> None:
    """Write a run's reports (judging it deterministically first if it was never judged)."""
    run = RunDirectory.open_existing(run_dir)
    evaluation = load_or_evaluate(run_dir)
    if not run.report_file.is_file():
        report = render_report(
            evaluation.card, evaluation.records, evaluation.judgments, evaluation.compat
        )
        run.write_text(run.report_file, report)
    console.print(f"report.md: {escape(str(run.report_file))}", soft_wrap=True)
    if html or embed_audio:
        path = write_run_html(
            run.path,
            embed_audio=embed_audio,
            card=evaluation.card,
            judgments=evaluation.judgments,
            analysis=evaluation.analysis,
        )
        size = path.stat().st_size / 1e6
        console.print(f"report.html: {escape(str(path))} ({size:.1f} MB)", soft_wrap=True)
