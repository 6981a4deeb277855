"""``voxbench store index|ls``: the results store of finished runs."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from voxbench.cli.console import escape, make_console
from voxbench.cli.tables import Column, Listing, print_listings
from voxbench.core.errors import ConfigError
from voxbench.store import UNDECIDED_LIMIT, RunFilters, RunRow, open_store

app = typer.Typer(help="The results store: index runs, list them.", no_args_is_help=True)

STORE_HELP = "postgresql://… or an SQLite file (default: $VOXBENCH_STORE, else DIR/voxbench.db)."


def _runs_dir(path: Path) -> Path:
    if not path.is_dir():
        raise ConfigError("no such directory", file=path, field="DIR", expected="a runs directory")
    return path


@app.command("index")
def index_command(
    runs_dir: Path = typer.Argument(Path("runs"), help="Directory of run directories."),
    store: str = typer.Option(None, "--store", help=STORE_HELP),
    force: bool = typer.Option(False, "--force", help="Re-read runs whose files did not change."),
) -> None:
    """(Re)index every run directory under DIR; broken run directories are listed and skipped."""
    with open_store(store, _runs_dir(runs_dir)) as db:
        report = db.index_tree(runs_dir, force=force)
        where = db.where
    for skipped in report.skipped:
        make_console(stderr=True).print(
            f"[yellow]skipped[/yellow] {escape(skipped.reason)}", soft_wrap=True
        )
    make_console().print(
        f"{len(report.indexed)} indexed, {len(report.unchanged)} unchanged, "
        f"{len(report.skipped)} skipped · store: {escape(where)}"
    )


@app.command("ls")
def ls_command(
    runs_dir: Path = typer.Argument(Path("runs"), help="Directory of run directories."),
    benchmark: str = typer.Option(None, "--benchmark", "-b", help="Only this benchmark."),
    target: str = typer.Option(None, "--target", "-t", help="Only this target."),
    store: str = typer.Option(None, "--store", help=STORE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the runs as JSON."),
) -> None:
    """Indexed runs, newest first, with their headline score and interval."""
    with open_store(store, runs_dir) as db:
        runs = db.runs(RunFilters(benchmark=benchmark, target=target))
    if json_out:
        print(json.dumps([r.model_dump(mode="json") for r in runs], indent=2, ensure_ascii=False))
        return
    listing = Listing(
        "runs",
        f"{len(runs)} run(s)",
        [
            Column("run", name=True),
            Column("kind", name=True),
            Column("benchmark", name=True),
            Column("target", name=True),
            Column("mode"),
            Column("status"),
            Column("started", name=True),
            Column("score"),
        ],
    )
    for run in runs:
        listing.add(
            run=run.run_id,
            kind=run.kind,
            benchmark=run.benchmark,
            target=run.target,
            mode=run.mode,
            status=run.status,
            started=run.started_at,
            score=headline_text(run),
        )
    print_listings([listing], console=make_console())


def headline_text(run: RunRow) -> str:
    """``strict_pass 80.0% [49.0, 94.3]``, or ``not scored``."""
    head = run.headline()
    if head is None or head.value is None:
        return "not scored"
    text = f"{head.dimension} {head.value:.1f}{head.unit}"
    if head.ci_low is not None and head.ci_high is not None:
        text += f" [{head.ci_low:.1f}, {head.ci_high:.1f}]"
    if head.undecided and head.n is not None:
        text += f", decided {head.n}/{head.n + head.undecided}"
        share = head.decided_share
        if share is not None and 1.0 - share > UNDECIDED_LIMIT:
            text += " (not ranked)"
    return text
