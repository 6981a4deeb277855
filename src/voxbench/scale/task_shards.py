"""``voxbench tasks run --executor ray``: a task run's records answered in shards on Ray.

The run is planned, created and scored by ``tasks.run.run_tasks`` as on the local executor;
only the answering moves: one Ray task per shard (default: one per CPU of the cluster) runs
``tasks.shards.run_shard`` on its disjoint share of the records, writing into the run
directory (so the runs directory must be a path every node sees). Ray retries a shard whose
worker died, and the retry redoes only the records its shard file lacks; the driver merges
the shard files into ``records.jsonl`` and computes ``scores.json`` from them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from voxbench.core.errors import RunError
from voxbench.scale.ray_executor import CPU_BOUND_CPUS, RayExecutor
from voxbench.tasks.run import Answered
from voxbench.tasks.rundir import TaskRunDir
from voxbench.tasks.shards import run_shard


def ray_shards(
    executor: RayExecutor, shards: int | None = None
) -> Callable[[TaskRunDir], Answered]:
    """What ``run_tasks(sharded=...)`` calls to answer a run's records on Ray."""

    def answer(run: TaskRunDir) -> Answered:
        count = shards or executor.cluster_cpus()
        results = executor.map_shards(
            run_shard, [(run.path, i, count) for i in range(count)], cpus=CPU_BOUND_CPUS
        )
        failed = [(i, r) for i, r in enumerate(results) if isinstance(r, BaseException)]
        if failed:
            i, error = failed[0]
            first = f"{type(error).__name__}: {error}".splitlines()[0]
            raise RunError(
                f"{len(failed)} of {count} shards failed (shard {i + 1}: {first}); "
                f"`voxbench tasks run --resume {run.path}` answers only the missing records"
            )
        answered = [r for r in results if isinstance(r, Answered)]
        return Answered(sum(a.requests for a in answered), _summed_judges(answered))

    return answer


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
