"""``voxbench tasks run --executor ray``: a task run's records answered in shards on Ray.

The run is planned, created and scored by ``tasks.run.run_tasks`` as on the local executor;
only the answering moves: one Ray task per shard (default: one per CPU of the cluster) runs
``tasks.engine.shards.run_shard`` on its disjoint share of the records, writing into the run
directory (so the runs directory must be a path every node sees). Ray retries a shard whose
worker died, and the retry redoes only the records its shard file lacks; the driver merges
the shard files into ``records.jsonl`` and computes ``scores.json`` from them. The config's
``rate_limits`` hold for all shards together: one ``PacerActor`` keeps the buckets, and each
shard's HTTP clients ask it before each request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from voxbench.core.errors import RunError
from voxbench.core.taskrun import TaskRunDirectory
from voxbench.scale.ray_executor import CPU_BOUND_CPUS, RayExecutor, import_ray
from voxbench.scale.ray_pacing import PlainLimits, install_ray_pacer, plain_limits, start_pacer
from voxbench.tasks.engine.shards import run_shard
from voxbench.tasks.run import Answered, config_of_run, merged_inference


def ray_shards(
    executor: RayExecutor, shards: int | None = None
) -> Callable[[TaskRunDirectory], Answered]:
    """What ``run_tasks(sharded=...)`` calls to answer a run's records on Ray."""

    def answer(run: TaskRunDirectory) -> Answered:
        count = shards or executor.cluster_cpus()  # (starts a local Ray when none runs)
        config = config_of_run(run.info(), run.path)[0]
        plain = plain_limits(config.pacing())
        ray = import_ray()
        actor = start_pacer(ray, plain)
        try:
            results = executor.map_shards(
                paced_shard,
                [(run.path, i, count, actor, plain) for i in range(count)],
                cpus=CPU_BOUND_CPUS,
            )
        finally:
            if actor is not None:
                with contextlib.suppress(Exception):
                    ray.kill(actor)
        failed = [(i, r) for i, r in enumerate(results) if isinstance(r, BaseException)]
        if failed:
            i, error = failed[0]
            error = getattr(error, "cause", None) or error  # a RayTaskError's own exception
            first = f"{type(error).__name__}: {error}".splitlines()[0]
            raise RunError(
                f"{len(failed)} of {count} shards failed (shard {i + 1}: {first}); "
                f"`voxbench tasks run --resume {run.path}` answers only the missing records"
            )
        answered = [r for r in results if isinstance(r, Answered)]
        return Answered(
            sum(a.requests for a in answered),
            _summed_judges(answered),
            sum(a.cached for a in answered),
            merged_inference([a.inference for a in answered]),
        )

    return answer


def paced_shard(
    run_path: Path, index: int, count: int, pacer: Any, limits: PlainLimits
) -> Answered:
    """The body of a shard's Ray task: its requests paced by the cluster's ``PacerActor``."""
    install_ray_pacer(pacer, limits)
    return run_shard(run_path, index, count)


def _summed_judges(answered: list[Answered]) -> dict[str, Any]:
    """The shards' judge entries as one: the model, counts added up."""
    out: dict[str, dict[str, Any]] = {}
    for a in answered:
        for name, entry in a.judges.items():
            total = out.setdefault(name, {"model": entry["model"]})
            for field, value in entry.items():
                if field != "model" and isinstance(value, int | float):
                    total[field] = total.get(field, 0) + value
    return out
