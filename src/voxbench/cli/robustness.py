"""``voxbench robustness [PLAN]``: a benchmark clean and under a ladder of perturbations, each
rung paired with the clean run; drops with exact paired tests, latency shifts, curves."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.cli.repeats import cell_progress
from voxbench.cli.tables import Column, Listing, print_listings
from voxbench.report.robustness import TABLE_HEAD, table_rows, write_report
from voxbench.scale.executors import make_executor
from voxbench.scale.matrix import load_plan
from voxbench.scale.robustness import (
    DEFAULT_BENCHMARK,
    DEFAULT_LADDER,
    DEFAULT_TARGET,
    builtin_tasks_config,
    default_plan,
    run_robustness,
    with_ladder,
)
from voxbench.scoring.robustness import RobustnessReport


def listing(name: str, report: RobustnessReport) -> Listing:
    """The drops of one report as a terminal listing."""
    columns = [Column(f"c{i}", header=h, name=i < 2) for i, h in enumerate(TABLE_HEAD)]
    out = Listing(f"robustness_{name}", f"{report.benchmark} · {report.target}", columns)
    for row in table_rows(report):
        out.add(**{f"c{i}": v for i, v in enumerate(row)})
    shifts = [(c, s) for c in report.conditions for s in c.latency]
    if shifts:
        for c, s in shifts:
            shift = "—" if s.median_shift is None else f"{s.median_shift * 1000:+.0f} ms"
            if s.shift_ci:
                shift += f" [{s.shift_ci[0] * 1000:+.0f}, {s.shift_ci[1] * 1000:+.0f}]"
            out.add(c0=c.spec, c1=f"{s.metric} (median shift)", c4=shift, c5=str(s.paired),
                    c6=f"{s.slower}/{s.faster}", c7=f"{s.p_value:.3g}")  # fmt: skip
    return out


def robustness_command(
    plan_file: Path = typer.Argument(
        None,
        help="A matrix plan (plan.yaml); its perturbations are the ladder. Without one: "
        f"--target on --benchmark (default {DEFAULT_TARGET} on {DEFAULT_BENCHMARK}).",
    ),
    target: str = typer.Option(DEFAULT_TARGET, "--target", "-t", help="System under test."),
    benchmark: str = typer.Option(
        DEFAULT_BENCHMARK, "--benchmark", "-b", help="Conversation benchmark ('none': tasks only)."
    ),
    tasks: str = typer.Option(
        None,
        "--tasks",
        help="An eval.yaml run under the ladder too ('builtin': local Whisper tiny.en on "
        "builtin_en_asr).",
    ),
    perturb: list[str] = typer.Option(
        [],
        "--perturb",
        metavar="SPEC",
        help="A rung of the ladder, repeatable (default: " + ", ".join(DEFAULT_LADDER) + ").",
    ),
    repeats: int = typer.Option(1, "--repeats", help="Runs per condition (seeds seed..seed+K-1)."),
    seed: int = typer.Option(0, "--seed", help="First seed (seeds the perturbations too)."),
    runs_dir: Path = typer.Option(
        Path("runs/robustness"), "--runs-dir", help="Where the runs go (reused by content)."
    ),
    out: Path = typer.Option(
        None, "--out", help="Where the reports go (default: RUNS_DIR/robustness)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the reports as JSON (stdout)."),
) -> None:
    """Run a benchmark clean and under a ladder of perturbations; report each dimension's drop
    (exact paired test, 95% interval), latency shifts and degradation curves (HTML)."""
    console, progress = make_console(), make_console(stderr=True)
    if plan_file is not None:
        plan = with_ladder(load_plan(plan_file), perturb)
    else:
        config = None
        if tasks == "builtin":
            config = builtin_tasks_config(runs_dir)
        elif tasks:
            config = Path(tasks).resolve()
        plan = default_plan(
            target=target,
            benchmark=None if benchmark == "none" else benchmark,
            tasks=config,
            repeats=repeats,
            seed=seed,
            runs_dir=runs_dir.resolve(),
            ladder=perturb,
        )
    progress.print(
        "robustness: clean + " + ", ".join(p for p in plan.perturbations if p != "clean")
        + f" → {escape(str(plan.runs_dir))}",
        highlight=False,
        soft_wrap=True,
    )  # fmt: skip
    result = run_robustness(
        plan, make_executor("local"), source=plan_file, on_done=cell_progress(progress)
    )
    folder = out or plan.runs_dir / "robustness"
    pages = [write_report(report, folder / name) for name, report in result.reports]
    if json_out:
        print(json.dumps([r.model_dump(mode="json") for _, r in result.reports], indent=2))
        return
    print_listings([listing(name, r) for name, r in result.reports], console=console)
    for page in pages:
        console.print(f"report: {escape(str(page))}", highlight=False, soft_wrap=True)
