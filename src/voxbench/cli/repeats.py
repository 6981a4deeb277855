"""``voxbench run … --repeats K``, and repeat groups in ``show`` and ``compare``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.cli.gates import exit_on_failures
from voxbench.core.errors import ConfigError, RunIncompleteError
from voxbench.evaluation import EvaluationOptions, evaluate_run
from voxbench.evaluation.gates import PassRateGate, failed_mean_gates
from voxbench.report.repeats import (
    repeat_comparison_table,
    repeat_summary_table,
    unstable_turns_table,
)
from voxbench.runner.config import RunConfig
from voxbench.scale.cells import Cell, CellResult
from voxbench.scale.executors import make_executor
from voxbench.scale.limits import Limits
from voxbench.scale.repeats import (
    RepeatGroup,
    group_outcomes,
    new_group_path,
    plan_group,
    read_group,
    run_group,
    summarise_group,
    write_group,
)
from voxbench.scoring.repeats import (
    RepeatComparison,
    RepeatSummary,
    compare_repeats,
    summarise_repeats,
)


def cell_progress(progress_console: Console) -> Callable[[Cell, CellResult], None]:
    """A line on ``progress_console`` (stderr: stdout carries the summary alone) per cell
    done: a repeat's run or a matrix cell."""

    def done(cell: Cell, result: CellResult) -> None:
        mark = "" if result.status == "success" else f" — {result.error or result.status}"
        progress_console.print(
            f"  {escape(cell.label)}: {result.action}, {result.turns} turns{escape(mark)}",
            highlight=False,
        )

    return done


def run_repeats(
    config: RunConfig | None,
    repeats: int | None,
    *,
    executor: str,
    ray_address: str | None,
    resume: Path | None = None,
    judge: str | None = None,
    judge_base_url: str | None = None,
    gates: list[PassRateGate] | None = None,
    progress_console: Console | None = None,
) -> Path:
    """Run (or finish, with ``resume``) a repeat group, judge it, print its summary.

    Progress lines go to ``progress_console`` (the command's stderr console; a new one if
    none is given)."""
    progress_console = progress_console or make_console(stderr=True)
    chosen = make_executor(executor, ray_address=ray_address)
    if resume is not None:
        path, group = resume, read_group(resume)
    else:
        assert config is not None and repeats is not None
        path = new_group_path(config, repeats)
        group = plan_group(config, repeats, path, chosen.name)
    progress_console.print(
        f"{len(group.runs)} runs of {escape(group.target)} on {escape(group.benchmark)} "
        f"({chosen.name} executor) → {escape(str(path))}",
        highlight=False,
    )
    group = run_group(path, group, chosen, Limits(), cell_progress(progress_console))
    if group.status != "success":
        failed = ", ".join(f"{k}: {v}" for k, v in group.errors.items())
        raise RunIncompleteError(
            f"{path}: {len(group.errors)} of {len(group.runs)} runs did not finish ({failed}); "
            f"continue with voxbench run --resume {path}"
        )
    if judge:
        options = EvaluationOptions(judge=judge, judge_base_url=judge_base_url)
        for name in group.runs:
            evaluate_run(path / name, options)
        group = group.model_copy(update={"summary": summarise_group(path, group)})
        write_group(path, group)
    assert group.summary is not None
    console = make_console()
    print_group(path, group, group.summary, console)
    enforce_mean_gates(group.summary, gates or [], console)
    return path


def print_group(path: Path, group: RepeatGroup, summary: RepeatSummary, console: Console) -> None:
    """The summary table, the unstable turns, and where the runs are."""
    title = f"{group.benchmark} · {group.target} · {group.mode} · seeds {group.seeds}"
    console.print(repeat_summary_table(summary, title))
    if summary.unstable:
        console.print(unstable_turns_table(summary))
    else:
        console.print("no turn changed outcome between runs")
    where = escape(str(path))
    first = escape(str(path / group.runs[0]))
    console.print(f"repeat group: [b]{where}[/b]  (one run: voxbench show {first})")


def show_group(path: Path) -> None:
    """``voxbench show GROUP``: the summary of the group as its runs are judged now."""
    group = read_group(path)
    print_group(path, group, summarise_group(path, group), make_console())


def compare_groups(path_a: Path, path_b: Path, *, table: bool = True) -> RepeatComparison:
    """``voxbench compare GROUP_A GROUP_B``: runs as the unit, paired by turn (the table
    printed unless ``table`` is false: ``--json`` keeps stdout for the document)."""
    group_a, group_b = read_group(path_a), read_group(path_b)
    if group_a.benchmark != group_b.benchmark:
        raise ConfigError(
            f"cannot compare groups of different benchmarks ({group_a.benchmark} vs "
            f"{group_b.benchmark})",
            file=path_b,
        )
    outcomes_a, outcomes_b = group_outcomes(path_a, group_a), group_outcomes(path_b, group_b)
    comparison = compare_repeats(
        summarise_repeats(group_a.runs, outcomes_a),
        outcomes_a,
        summarise_repeats(group_b.runs, outcomes_b),
        outcomes_b,
    )
    title = f"{group_a.benchmark}: {group_a.target} (A) vs {group_b.target} (B)"
    if table:
        make_console().print(repeat_comparison_table(comparison, title))
    if group_a.benchmark_hash != group_b.benchmark_hash:
        make_console(stderr=not table).print(
            "[yellow]note:[/yellow] the groups ran different versions of the benchmark"
        )
    return comparison


def enforce_mean_gates(summary: RepeatSummary, gates: list[PassRateGate], console: Console) -> None:
    """``--fail-under`` on a repeat group: each dimension's mean pass rate over the runs."""
    exit_on_failures(failed_mean_gates(summary, gates), gates, console)
