"""Repeat groups: K runs of one config, each in a fresh session with its own recorded seed.

A repeat group is a directory holding the K run directories (``seed-<n>_<group id>``, ordinary run
directories that ``show``, ``judge`` and ``analyze`` read as usual) and ``repeats.json``:
what was repeated (the run config, the benchmark's content hash), the seeds, the executor, and
once the runs are judged their summary (``scoring.repeats.RepeatSummary``).

``voxbench run B -t T --repeats K`` makes a new group; ``voxbench matrix`` makes one group per
cell of its plan, at a path derived from the cell's content, so a second ``matrix`` run
finds the finished runs and reuses them.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.errors import ConfigError, RunError
from voxbench.core.rundir import REPEAT_GROUP_FILE, write_json_atomic
from voxbench.evaluation import load_or_evaluate
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import check_run_credentials, new_run_path
from voxbench.scale.cells import Cell, CellResult
from voxbench.scale.executors import Executor
from voxbench.scale.limits import CellCallback, Limits
from voxbench.scoring.compare import TurnOutcomes, turn_outcomes
from voxbench.scoring.repeats import RepeatSummary, summarise_repeats

REPEATS_FILE = REPEAT_GROUP_FILE
SCHEMA_VERSION = 1


class RepeatGroup(BaseModel):
    """``repeats.json``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    benchmark: str
    benchmark_hash: str
    target: str
    mode: str
    config: RunConfig
    """The repeated config (its ``seed`` is the first run's)."""
    seeds: list[int]
    runs: list[str]
    """The run directories, relative to the group, in seed order."""
    executor: str = "local"
    status: Literal["started", "success", "error"] = "started"
    errors: dict[str, str] = {}
    """Run directory → why it did not finish."""
    started_at: str
    ended_at: str | None = None
    summary: RepeatSummary | None = None


def is_repeat_group(path: str | Path) -> bool:
    """Whether ``path`` is a repeat group directory."""
    return (Path(path) / REPEATS_FILE).is_file()


def read_group(path: str | Path) -> RepeatGroup:
    """The group's ``repeats.json``."""
    file = Path(path) / REPEATS_FILE
    try:
        return RepeatGroup.model_validate_json(file.read_bytes())
    except FileNotFoundError:
        raise RunError(f"{path}: not a repeat group (no {REPEATS_FILE})") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(
            err["msg"], file=file, field=".".join(str(p) for p in err["loc"])
        ) from None


def write_group(path: Path, group: RepeatGroup) -> None:
    """Write ``repeats.json`` atomically."""
    write_json_atomic(path / REPEATS_FILE, group.model_dump(mode="json"))


def plan_group(config: RunConfig, repeats: int, path: Path, executor: str) -> RepeatGroup:
    """Describe a group of ``repeats`` runs of ``config`` at ``path`` (seeds seed, seed+1…)."""
    if repeats < 1:
        raise ConfigError(f"{repeats} repeats", field="--repeats", expected="1 or more")
    benchmark = load_benchmark(config.benchmark)
    if Path(config.benchmark).is_dir():  # a package directory: the same for every worker
        config = config.model_copy(update={"benchmark": str(Path(config.benchmark).resolve())})
    seeds = [config.seed + i for i in range(repeats)]
    return RepeatGroup(
        benchmark=benchmark.id,
        benchmark_hash=benchmark.content_hash,
        target=config.target,
        mode=config.mode,
        config=config,
        seeds=seeds,
        runs=[run_name(path, s) for s in seeds],
        executor=executor,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def run_name(group_path: Path, seed: int) -> str:
    """``seed-<n>_<group id>``: a run's id is its directory's name, and the results store
    keys runs by id, so each group's runs carry the group's id (its last ``_`` part: a
    random id, or a matrix group's content key)."""
    return f"seed-{seed}_{group_path.name.rsplit('_', 1)[-1]}"


def new_group_path(config: RunConfig, repeats: int) -> Path:
    """``runs/<benchmark>/<UTC timestamp>_<target>_x<K>_<short id>``."""
    single = new_run_path(config, load_benchmark(config.benchmark))
    stamp_target = single.name.rsplit("_", 1)[0]
    return single.parent / f"{stamp_target}_x{repeats}_{secrets.token_hex(3)}"


def group_cells(path: Path, group: RepeatGroup) -> list[Cell]:
    """One cell per seed: a fresh session each (a run of its own, in its own directory).

    Paths are absolute: a worker (a pool process, a Ray task) need not share our cwd."""
    return [
        Cell(
            config=group.config.model_copy(update={"seed": seed}),
            path=path.resolve() / name,
            label=f"{group.target} · {group.benchmark} · {group.mode} · seed {seed}",
        )
        for seed, name in zip(group.seeds, group.runs, strict=True)
    ]


def finish_group(path: Path, group: RepeatGroup, results: list[CellResult]) -> RepeatGroup:
    """Record how the runs ended and, when they all succeeded, their summary."""
    errors = {
        name: r.error or r.status
        for name, r in zip(group.runs, results, strict=True)
        if r.status != "success"
    }
    summary = summarise_group(path, group) if not errors else None
    done = group.model_copy(
        update={
            "status": "error" if errors else "success",
            "errors": errors,
            "summary": summary,
            "ended_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    write_group(path, done)
    return done


def run_group(
    path: Path,
    group: RepeatGroup,
    executor: Executor,
    limits: Limits,
    on_done: CellCallback | None = None,
) -> RepeatGroup:
    """Run (or finish) every run of the group, then summarise it."""
    check_run_credentials(group.config)  # before the first run, not once per failed run
    path.mkdir(parents=True, exist_ok=True)
    write_group(path, group.model_copy(update={"status": "started", "executor": executor.name}))
    results = executor.run(group_cells(path, group), limits, on_done)
    return finish_group(path, group.model_copy(update={"executor": executor.name}), results)


def group_outcomes(path: Path, group: RepeatGroup) -> list[TurnOutcomes]:
    """Each run's outcomes per dimension and turn (judged deterministically if never judged)."""
    out = []
    for name in group.runs:
        evaluation = load_or_evaluate(path / name)
        out.append(turn_outcomes(evaluation.records, evaluation.judgments))
    return out


def summarise_group(path: Path, group: RepeatGroup) -> RepeatSummary:
    """The repeat summary of the group's runs as they are judged now."""
    return summarise_repeats(group.runs, group_outcomes(path, group))
