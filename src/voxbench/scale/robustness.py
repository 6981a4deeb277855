"""``voxbench robustness``: a benchmark clean and under a ladder of perturbations, run as an
evaluation matrix with a ``perturbations`` axis (resumable by content), then every perturbed
group paired with its clean group (``scoring.robustness``) — issue 31.

The offline default: ``cascade/local/baseline`` on ``smoke`` in audio mode under pink noise at
20, 10, 5 and 0 dB SNR; ``tasks`` configs (``local/whisper-tiny.en`` on a built-in task) are
run and paired record by record the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from voxbench.core.errors import ConfigError
from voxbench.core.measures import RunAnalysis
from voxbench.core.rundir import RunDirectory
from voxbench.core.taskrun import TaskRunDirectory
from voxbench.runner.config import canonical_perturbations
from voxbench.scale.executors import Executor
from voxbench.scale.limits import CellCallback
from voxbench.scale.matrix import Leaderboard, MatrixGroup, MatrixPlan, plan_groups, run_matrix
from voxbench.scoring.robustness import (
    CLEAN,
    ConversationRun,
    RobustnessReport,
    conversation_robustness,
    task_robustness,
)

DEFAULT_LADDER = ("noise:pink@20dB", "noise:pink@10dB", "noise:pink@5dB", "noise:pink@0dB")
DEFAULT_TARGET = "cascade/local/baseline"
DEFAULT_BENCHMARK = "smoke"
WHISPER_TASKS = """\
# voxbench robustness --tasks builtin: local Whisper tiny.en on the built-in English ASR task.
models:
  - {name: whisper-tiny.en, model: local/whisper-tiny.en, max_concurrency: 2}
tasks: [builtin_en_asr]
"""


@dataclass
class Robustness:
    """What a robustness pass produced: the matrix's leaderboard and one report per clean
    group (target × benchmark × mode) or task config."""

    board: Leaderboard
    reports: list[tuple[str, RobustnessReport]]
    """(a name for the report's folder, the report)."""


def with_ladder(plan: MatrixPlan, ladder: Sequence[str] = ()) -> MatrixPlan:
    """The plan with ``clean`` first and the ladder (``ladder``, else the plan's own
    perturbations, else ``DEFAULT_LADDER``) after it, audio mode only for benchmarks."""
    given = list(ladder) or [p for p in plan.perturbations if p != CLEAN] or list(DEFAULT_LADDER)
    rungs = [canonical_perturbations(spec) for spec in given]  # a bad one names itself
    specs = list(dict.fromkeys([CLEAN, *(r for r in rungs if r is not None)]))
    if len(specs) < 2:
        raise ConfigError("the ladder has no perturbation", field="--perturb", expected="a spec")
    if plan.benchmarks and "audio" not in plan.modes:
        raise ConfigError("perturbations need audio mode", field="modes", expected="modes: [audio]")
    return plan.model_copy(update={"perturbations": specs, "modes": ["audio"]})


def default_plan(
    *,
    target: str = DEFAULT_TARGET,
    benchmark: str | None = DEFAULT_BENCHMARK,
    tasks: Path | None = None,
    repeats: int = 1,
    seed: int = 0,
    runs_dir: Path = Path("runs/robustness"),
    ladder: Sequence[str] = (),
) -> MatrixPlan:
    """One target on one benchmark (and/or one task config) under the ladder."""
    plan = MatrixPlan(
        targets=[target],
        benchmarks=[benchmark] if benchmark else [],
        tasks=[tasks] if tasks else [],
        modes=["audio"],
        repeats=repeats,
        seed=seed,
        runs_dir=runs_dir,
    )
    return with_ladder(plan, ladder)


def builtin_tasks_config(runs_dir: Path) -> Path:
    """``runs_dir/whisper-builtin.yaml``: ``WHISPER_TASKS`` (``--tasks builtin``)."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    path = (runs_dir / "whisper-builtin.yaml").resolve()
    if not path.is_file() or path.read_text(encoding="utf-8") != WHISPER_TASKS:
        path.write_text(WHISPER_TASKS, encoding="utf-8")
    return path


def run_robustness(
    plan: MatrixPlan,
    executor: Executor,
    *,
    source: Path | None = None,
    on_done: CellCallback | None = None,
) -> Robustness:
    """Run the plan (clean and every rung; what is done is reused), then pair each rung with
    the clean runs."""
    if CLEAN not in plan.perturbations or len(plan.perturbations) < 2:
        raise ConfigError(
            "a robustness plan needs clean and at least one perturbation",
            field="perturbations",
            expected="[clean, noise:pink@10dB, ...]",
        )
    board = run_matrix(plan, executor, source=source, on_done=on_done)
    reports = conversation_reports(plan_groups(plan, source=source))
    reports += task_reports(board, plan.seed)
    return Robustness(board, reports)


def read_conversation_runs(group: MatrixGroup) -> list[ConversationRun]:
    """The finished, judged runs of a matrix group, one per seed."""
    out = []
    for seed, name in zip(group.group.seeds, group.group.runs, strict=True):
        path = group.path / name
        if not (path / RunDirectory.RUN).is_file():
            continue
        run = RunDirectory.open_existing(path)
        judgments = run.judgments()
        if judgments is None:
            continue
        data = run.read_json(run.analysis_file)
        analysis = RunAnalysis.model_validate(data) if data else None
        out.append(ConversationRun(run.info().run_id, seed, run.turns(), judgments, analysis))
    return out


def conversation_reports(groups: list[MatrixGroup]) -> list[tuple[str, RobustnessReport]]:
    """Each clean group (target × benchmark × mode) against its perturbed groups."""
    reports = []
    clean = [g for g in groups if g.perturbations is None and g.mode == "audio"]
    for base in clean:
        ladder = {
            g.perturbations: read_conversation_runs(g)
            for g in groups
            if g.perturbations is not None
            and (g.target, g.mode, g.group.benchmark)
            == (base.target, base.mode, base.group.benchmark)
        }
        if not ladder:
            continue
        report = conversation_robustness(
            base.group.benchmark, base.target, read_conversation_runs(base), ladder
        )
        reports.append((f"{base.group.benchmark}_{_slug(base.target)}", report))
    return reports


def task_reports(board: Leaderboard, seed: int) -> list[tuple[str, RobustnessReport]]:
    """Each task config's clean run against its perturbed runs, record by record."""
    reports = []
    for config in dict.fromkeys(r.config for r in board.tasks):
        runs = {r.perturbations: r.run for r in board.tasks if r.config == config}
        if None not in runs or len(runs) < 2:
            continue
        clean = TaskRunDirectory.open(Path(runs[None]))
        ladder = {
            spec: (Path(path).name, TaskRunDirectory.open(Path(path)).rows())
            for spec, path in runs.items()
            if spec is not None
        }
        report = task_robustness(clean.path.name, clean.rows(), ladder, seed=seed)
        reports.append((f"tasks_{_slug(Path(config).stem)}", report))
    return reports


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-")[:48]
