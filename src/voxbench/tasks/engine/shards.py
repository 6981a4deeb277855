"""A task run cut into disjoint shards, each answered by its own worker (``tasks run
--executor ray``; the executor is ``scale.task_shards``).

A record belongs to shard ``i`` of ``n`` when the SHA-256 of its ``(task, model, record)``
key is ``i`` modulo ``n``: every worker computes the same cut from the run directory alone.
A shard's worker rebuilds the run's plan from ``run.json``, answers its own records that are
done neither in ``records.jsonl`` nor in its shard file, and appends their rows to its shard
file (``TaskRunDirectory.shard_file``), with the response cache beside the run as usual. A shard
retried after its worker died thus redoes only the records it had not written; the driver
merges the shard files into ``records.jsonl`` and scores the run as ``run_tasks`` always does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from voxbench.core.taskrun import TaskRunDirectory
from voxbench.tasks.judge import make_judge_client
from voxbench.tasks.plan import build_plan
from voxbench.tasks.run import Answered, answer_records, config_of_run

RecordKey = tuple[str, str, str]
"""(task, model, record id)."""


def shard_of(key: RecordKey, count: int) -> int:
    """The shard (of ``count``) the record ``key`` belongs to."""
    digest = hashlib.sha256("\0".join(key).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def run_shard(run_path: Path, index: int, count: int) -> Answered:
    """Answer shard ``index`` of ``count`` of the run at ``run_path`` (a worker's body)."""
    run = TaskRunDirectory.open(run_path)
    config, _, _, base_dir, tasks_dirs = config_of_run(run.info(), run_path)
    plan = build_plan(config, base_dir=base_dir, tasks_dirs=tasks_dirs)
    finished = [*run.rows(), *run.shard_rows(index, count)]
    done = {(r["task"], r["model"], r["id"]) for r in finished if r.get("error") is None}
    done |= {
        key
        for job in plan.jobs
        for key in ((job.task.name, job.model.name, r.id) for r in job.records)
        if shard_of(key, count) != index
    }
    judge_client = (
        make_judge_client(config.judge)
        if config.judge is not None and any(j.text_judged for j in plan.jobs)
        else None
    )
    run.open_records(shard=(index, count))
    try:
        use_cache = not run.info().get("no_cache", False)
        return answer_records(
            plan, config, run, run.append, done, judge_client, use_cache=use_cache
        )
    finally:
        run.close_records()
