"""``voxbench matrix plan.yaml``: targets × benchmarks × modes × repeats, then one leaderboard."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from voxbench.cli.console import make_console
from voxbench.cli.repeats import cell_progress
from voxbench.cli.tables import Column, Listing, print_listings
from voxbench.core.errors import RunIncompleteError
from voxbench.scale.executors import make_executor
from voxbench.scale.matrix import LEADERBOARD_MD, Leaderboard, load_plan, run_matrix


def leaderboard_table(board: Leaderboard) -> Table:
    """The leaderboard for the terminal (best strict pass first within each benchmark/mode)."""
    k = board.repeats
    dims = list(dict.fromkeys(d for r in board.rows for d in r.dimensions))
    table = Table(
        title=f"leaderboard ({k} run{'s' if k > 1 else ''} per cell, {board.executor} executor)",
        title_justify="left",
        caption=(
            "strict pass: mean over runs and turns with a 95% interval (runs and turns as "
            f"clusters); pass^{k}: turns passed in every run; "
            + ", ".join(f"{v} {n}" for n, v in board.cells.items())
        ),
    )
    for col in ("benchmark", "mode", "target", "strict pass", f"pass^{k}", *dims, "flips", "runs"):
        named = col in ("benchmark", "mode", "target")
        # fold: a long target name wraps onto a second line, never cut to "openai/gpt-4…"
        # (a pipe gives rich 80 columns).
        table.add_column(col, justify="left" if named else "right", overflow="fold")
    for r in board.rows:
        strict = "—" if r.strict_mean is None else f"{r.strict_mean:.1%}"
        if r.strict_ci95 is not None:
            strict += f" [{r.strict_ci95[0]:.0%}–{r.strict_ci95[1]:.0%}]"
        pct = lambda v: "—" if v is None else f"{v:.0%}"  # noqa: E731
        table.add_row(
            escape(r.benchmark),
            r.mode,
            escape(r.target),
            strict,
            pct(r.strict_pass_hat),
            *(pct(r.dimensions.get(d)) for d in dims),
            str(r.unstable_turns),
            f"{r.finished}/{r.runs}"
            if r.finished == r.runs
            else f"[red]{r.finished}/{r.runs}[/red]",
        )
    return table


def fdb_listings(board: Leaderboard) -> list[Listing]:
    """One listing per FDB corpus and category: each target's metric means."""
    listings = []
    for corpus, category in dict.fromkeys((r.corpus, r.category) for r in board.fdb):
        mine = [r for r in board.fdb if (r.corpus, r.category) == (corpus, category)]
        metrics = list(dict.fromkeys(m for r in mine for m in r.metrics))
        columns = [Column("target", name=True), Column("subset", name=True)]
        columns += [Column("samples"), Column("errors")]
        columns += [Column(f"metric_{i}", header=m) for i, m in enumerate(metrics)]
        listing = Listing(f"fdb_{corpus}_{category}", f"FDB {corpus} · {category}", columns)
        for r in mine:
            values = {
                f"metric_{i}": None if r.metrics.get(m) is None else f"{r.metrics[m]:.3f}"
                for i, m in enumerate(metrics)
            }
            listing.add(
                target=r.target, subset=r.subset, samples=r.samples, errors=r.errors, **values
            )
        listings.append(listing)
    return listings


def task_listings(board: Leaderboard) -> list[Listing]:
    """One listing per task config: each task × model's metrics (0–100) with intervals."""
    listings = []
    for config in dict.fromkeys(r.config for r in board.tasks):
        mine = [r for r in board.tasks if r.config == config]
        metrics = list(dict.fromkeys(m for r in mine for m in r.metrics))
        columns = [Column("task", name=True), Column("model", name=True)]
        columns += [Column("answered"), Column("errors")]
        columns += [Column(f"metric_{i}", header=m) for i, m in enumerate(metrics)]
        listing = Listing(f"tasks_{config}", f"tasks {config} ({mine[0].action})", columns)
        for r in mine:
            values = {}
            for i, m in enumerate(metrics):
                v, ci = r.metrics.get(m), r.ci95.get(m)
                text = None if v is None else f"{v:.1f}"
                if ci and v is not None:
                    text = f"{text} [{ci[0]:.1f}–{ci[1]:.1f}]"
                values[f"metric_{i}"] = text
            listing.add(task=r.task, model=r.model, answered=r.answered, errors=r.errors, **values)
        listings.append(listing)
    return listings


def matrix_command(
    plan_file: Path = typer.Argument(..., help="plan.yaml: targets, benchmarks, modes, repeats."),
    executor: str = typer.Option(None, "--executor", help="local (default) or ray."),
    ray_address: str = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: auto, ray://HOST:PORT, or none for a local Ray started now.",
    ),
    ray_artifacts: str = typer.Option(
        None,
        "--ray-artifacts",
        help="With --executor ray: shared (workers write to runs_dir on a cluster filesystem, "
        "the default) or return (workers send the files back; the driver writes them).",
    ),
) -> None:
    """Run an evaluation matrix; finished runs are reused, interrupted ones resumed."""
    console, progress_console = make_console(), make_console(stderr=True)
    plan = load_plan(plan_file)
    chosen = make_executor(
        executor or "local", ray_address=ray_address, ray_artifacts=ray_artifacts
    )
    progress_console.print(
        f"matrix {escape(str(plan_file))} → {escape(str(plan.runs_dir))}", highlight=False
    )
    board = run_matrix(plan, chosen, source=plan_file, on_done=cell_progress(progress_console))
    if board.rows:
        console.print(leaderboard_table(board))
    tables = [*fdb_listings(board), *task_listings(board)]
    if tables:
        print_listings(tables, console=console)
    console.print(f"leaderboard: {escape(str(plan.runs_dir / LEADERBOARD_MD))}", highlight=False)
    failed = [r for r in board.rows if r.finished < r.runs]
    if board.fdb_failed:
        raise RunIncompleteError(
            f"{len(board.fdb_failed)} FDB samples could not be driven or scored; run the same "
            "plan again to resume them: "
            + "; ".join(f"{k}: {v}" for k, v in list(board.fdb_failed.items())[:5])
        )
    if failed:
        raise RunIncompleteError(
            f"{sum(r.runs - r.finished for r in failed)} runs did not finish; run the same "
            "plan again to resume them: "
            + "; ".join(f"{r.group}: {', '.join(r.errors.values())}" for r in failed)
        )
