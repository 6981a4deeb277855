"""``voxbench compare RUN_A RUN_B``: two judged runs side by side, with a paired test per dimension."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.cli.repeats import compare_groups
from voxbench.cli.tables import print_table
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import RunDirectory, write_text_atomic
from voxbench.evaluation import load_or_evaluate
from voxbench.report.html import render_compare_html
from voxbench.report.terminal import comparison_table
from voxbench.scale.repeats import is_repeat_group
from voxbench.scoring.compare import compare_runs


def compare_command(
    run_a: Path = typer.Argument(..., help="The reference run directory (A)."),
    run_b: Path = typer.Argument(..., help="The run to compare with it (B)."),
    as_json: bool = typer.Option(
        False, "--json", help="Print the comparison as JSON on stdout instead of the table."
    ),
    out: Path = typer.Option(None, "--out", help="Also write the comparison as JSON to this file."),
    html_out: Path = typer.Option(
        None,
        "--html",
        help="Also write the comparison as one self-contained HTML page to this file "
        "(side-by-side turns with players, deltas, latency distributions).",
    ),
    embed_audio: bool = typer.Option(
        False, "--embed-audio", help="With --html: put the audio into the page."
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
        if html_out is not None:
            raise ConfigError(
                "--html compares two runs, not repeat groups",
                field="--html",
                expected="two run directories (a group's seed-N_… runs), or leave out --html",
            )
        grouped = compare_groups(run_a, run_b, table=not as_json)
        document = grouped.model_dump_json(indent=2) + "\n"
        if as_json:
            print(document, end="")
        if out is not None:
            out.write_text(document, encoding="utf-8")
        return
    a, b = load_or_evaluate(run_a), load_or_evaluate(run_b)
    versions = (
        RunDirectory.open_existing(run_a).info().versions,
        RunDirectory.open_existing(run_b).info().versions,
    )
    comparison = compare_runs(
        a.card, a.records, a.judgments, b.card, b.records, b.judgments, versions=versions
    )
    document = json.dumps(comparison.model_dump(mode="json"), indent=2) + "\n"
    if as_json:
        print(document, end="")
    else:
        print_table(make_console(), comparison_table(comparison))
    judges_a = sorted(set(a.card.judges))
    judges_b = sorted(set(b.card.judges))
    if judges_a != judges_b:
        # With --json, stdout carries only the JSON document.
        make_console(stderr=as_json).print(
            "[yellow]note:[/yellow] the runs were judged by different judges "
            f"({escape(', '.join(judges_a))} vs {escape(', '.join(judges_b))})"
        )
    if comparison.version_differences:
        changed = ", ".join(f"{d.package} {d.a} → {d.b}" for d in comparison.version_differences)
        make_console(stderr=as_json).print(
            "[yellow]warning:[/yellow] the runs were computed with different versions of "
            f"packages that change numbers ({escape(changed)}): part of a difference may "
            "come from them",
            soft_wrap=True,
        )
    if html_out is not None:
        page = render_compare_html(
            run_a,
            run_b,
            embed_audio=embed_audio,
            out_dir=html_out.parent,
            judged=((a.card, a.judgments), (b.card, b.judgments)),
        )
        write_text_atomic(html_out, page)
        make_console(stderr=as_json).print(f"compare page: {escape(str(html_out))}", soft_wrap=True)
    if out is not None:
        out.write_text(document, encoding="utf-8")
