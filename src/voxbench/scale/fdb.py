"""``voxbench fdb run --executor ray``: a Full-Duplex-Bench corpus driven in shards on Ray.

The corpus (after ``--category`` / ``--limit``) is cut into disjoint shards, every n-th
sample from the i-th in corpus order, and each shard is a Ray task that drives its samples
with the usual driver into the same output directory (so it must be on a filesystem every
node sees). The driver skips samples whose record says completed, so a shard retried after
its worker died drives only what it had not finished, and a second ``fdb run`` resumes.
The outputs are the same files ``--executor local`` writes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from voxbench.fullduplex.driver import DriveReport, drive_corpus, fdb_session_factory
from voxbench.fullduplex.run import FdbJob
from voxbench.scale.executors import Executor
from voxbench.scale.ray_executor import CPU_BOUND_CPUS, WAITING_CPUS, RayExecutor


def drive_shard(job: FdbJob, index: int, count: int) -> DriveReport:
    """The body of one shard's Ray task."""
    make = fdb_session_factory(job.target, job.base_url, job.options, job.benchmark)
    return asyncio.run(
        drive_corpus(
            job.corpus, make, job.name, out_dir=job.out_dir, concurrency=job.concurrency,
            opts=job.opts, with_clean=job.with_clean, categories=job.categories,
            limit=job.limit, shard=(index, count),
        )
    )  # fmt: skip


def drive_on_ray(job: FdbJob, executor: RayExecutor, shards: int | None = None) -> DriveReport:
    """Drive the corpus in ``shards`` Ray tasks (default: one per CPU of the cluster)."""
    count = shards or executor.cluster_cpus()
    results = executor.map_shards(
        drive_shard,
        [(job, i, count) for i in range(count)],
        cpus=CPU_BOUND_CPUS if job.in_process else WAITING_CPUS,
    )
    merged = DriveReport()
    skipped: dict[Path, Any] = {}
    for i, result in enumerate(results):
        if isinstance(result, BaseException):
            merged.failed[job.corpus / f"(shard {i + 1} of {count})"] = (
                f"{type(result).__name__}: {result}".splitlines()[0]
            )
            continue
        merged.completed.extend(result.completed)
        merged.resumed.extend(result.resumed)
        merged.failed.update(result.failed)
        for item in result.skipped:  # every shard scans the whole corpus: list each once
            skipped.setdefault(item.path, item)
    merged.skipped = list(skipped.values())
    return merged


def drive_fdb(job: FdbJob, executor: Executor) -> DriveReport:
    """Drive ``job`` with ``executor``: in shards on Ray, else in this process."""
    if isinstance(executor, RayExecutor):
        return drive_on_ray(job, executor)
    make = fdb_session_factory(job.target, job.base_url, job.options, job.benchmark)
    return asyncio.run(
        drive_corpus(
            job.corpus, make, job.name, out_dir=job.out_dir, concurrency=job.concurrency,
            opts=job.opts, with_clean=job.with_clean, categories=job.categories,
            limit=job.limit,
        )
    )  # fmt: skip
