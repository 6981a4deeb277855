"""``voxbench report DIR``: the reports of a conversation run (``report.md``, and with
``--html`` its ``report.html``), of an audio-task run or of an FDB scoring (their pages)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import RunDirectory


def _written(label: str, path: Path) -> None:
    size = path.stat().st_size / 1e6
    make_console().print(f"{label}: {escape(str(path))} ({size:.1f} MB)", soft_wrap=True)


def _is_task_run(path: Path) -> bool:
    from voxbench.core.taskrun import RUN_JSON, SCHEMA

    try:
        info = json.loads((path / RUN_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and info.get("schema") == SCHEMA


def _fdb_modes(path: Path) -> list[str]:
    from voxbench.fullduplex.sample_context import MODES
    from voxbench.fullduplex.scoring import summary_file

    return [mode for mode in MODES if summary_file(path, mode).is_file()]


def report_command(
    run_dir: Path = typer.Argument(
        ..., help="A run directory, an audio-task run, or a directory scored by fdb score."
    ),
    html: bool = typer.Option(
        False, "--html", help="Write report.html: one self-contained page with players."
    ),
    embed_audio: bool = typer.Option(
        False,
        "--embed-audio",
        help="Put the audio into the page (a page to mail; larger) instead of linking to the "
        "recordings beside it. Implies --html.",
    ),
) -> None:
    """Write a run's reports (judging a conversation run deterministically first if it was
    never judged); task runs and FDB scorings get their HTML page."""
    html = html or embed_audio
    if run_dir.is_dir() and _is_task_run(run_dir):
        from voxbench.report.tasks_html import write_tasks_html

        page = write_tasks_html(run_dir, embed_audio=embed_audio)
        _written(page.name, page)
        return
    modes = _fdb_modes(run_dir) if run_dir.is_dir() else []
    if modes and not (run_dir / RunDirectory.RUN).is_file():
        from voxbench.fullduplex.html import write_fdb_html

        for mode in modes:
            _written(f"FDB {mode}", write_fdb_html(run_dir, mode=mode, embed_audio=embed_audio))
        return
    if not (run_dir / RunDirectory.RUN).is_file():
        raise ConfigError(
            "not a run directory",
            file=run_dir,
            field="RUN_DIR",
            expected="a run directory (run.json), an audio-task run, or a directory scored "
            "by voxbench fdb score",
        )
    _conversation_reports(run_dir, html=html, embed_audio=embed_audio)


def _conversation_reports(run_dir: Path, *, html: bool, embed_audio: bool) -> None:
    from voxbench.evaluation import load_or_evaluate
    from voxbench.report.html import write_run_html
    from voxbench.report.markdown import render_report

    run = RunDirectory.open_existing(run_dir)
    evaluation = load_or_evaluate(run_dir)
    if not run.report_file.is_file():
        info = run.info()
        report = render_report(
            evaluation.card,
            evaluation.records,
            evaluation.judgments,
            evaluation.compat,
            perturbations=info.perturbations,
            seed=info.seed,
        )
        run.write_text(run.report_file, report)
    _written(run.report_file.name, run.report_file)
    if html:
        path = write_run_html(
            run.path,
            embed_audio=embed_audio,
            card=evaluation.card,
            judgments=evaluation.judgments,
            analysis=evaluation.analysis,
        )
        _written(path.name, path)
