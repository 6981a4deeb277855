"""Where a cell runs on Ray: warm async actors for cells that wait, tasks for CPU-bound ones.

Cells that mostly wait on a provider go to ``CellRunner`` actors, one per CPU of the cluster,
each running many cells at once on one event loop. The runners are made once per Ray session
(``warm_runners``) and kept for the driver's later runs: an actor is a process of its own, and
starting one and importing voxbench in it cost about a second on a small machine, which a run
of a few seconds would otherwise pay every time. They reserve no CPU (the driver limits the
cells in flight), so a warm pool never keeps a CPU-bound cell from being scheduled; Ray spreads
them over the nodes. Non-detached, they end with the driver's job (or ``forget_runners`` after
the driver shut down the Ray it started).

A CPU-bound cell (audio runs with local speech) is a Ray task asking for a whole CPU
(``ray_cell``); Ray keeps its worker processes between tasks, so a second run finds its
imports and loaded models.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

from voxbench.scale.cells import Cell, CellResult, run_cell_async
from voxbench.scale.ray_pacing import PlainLimits, install_ray_pacer

CELL_RETRIES = 3
"""A cell whose worker dies is retried this many times (each retry resumes the run)."""
RUNNER_CONCURRENCY = 1000
"""Cells one runner may hold at once: no limit of its own (the driver's ``Limits`` hold)."""

Returned = tuple[CellResult, dict[str, bytes] | None]
"""A cell's result and, when its files go back to the driver, its run directory's files."""

_pool: dict[str, list[Any]] = {}
"""Ray session name → this driver's runners in that session."""


def ray_cell(cell: Cell, pacer: Any, limits: PlainLimits, returned: bool) -> Returned:
    """The body of a CPU-bound cell's Ray task (a process of its own)."""
    install_ray_pacer(pacer, limits)
    return asyncio.run(cell_here(cell, returned))


class CellRunner:
    """Runs waiting cells, many at once on one event loop (wrapped by ``ray.remote`` in
    ``warm_runners``): eight such cells in flight cost two worker processes, not eight."""

    def __init__(self) -> None:
        # Import every built-in target provider now, while the runner starts, not in the
        # first cell it is given.
        from voxbench.targets.registry import providers

        providers()

    async def run(self, cell: Cell, returned: bool, pacer: Any, limits: PlainLimits) -> Returned:
        # The pacer of the run this cell belongs to: a warm runner serves run after run.
        install_ray_pacer(pacer, limits)
        return await cell_here(cell, returned)


def warm_runners(ray: Any) -> list[Any]:
    """This session's runners, started on first use (one per CPU of the cluster then)."""
    session = ray.get_runtime_context().get_session_name()
    runners = _pool.get(session)
    if runners is None:
        count = max(1, int(ray.cluster_resources().get("CPU", 1)))
        runner = ray.remote(CellRunner).options(
            num_cpus=0,
            scheduling_strategy="SPREAD",
            max_restarts=-1,  # a runner killed mid-cell comes back for the cells it holds...
            max_task_retries=CELL_RETRIES,  # ...each of which is retried this many times
            max_concurrency=RUNNER_CONCURRENCY,
        )
        runners = [runner.remote() for _ in range(count)]
        _pool.clear()  # an earlier session's actors ended with it
        _pool[session] = runners
    return runners


def forget_runners() -> None:
    """Drop the runners' handles (their Ray was shut down)."""
    _pool.clear()


async def cell_here(cell: Cell, returned: bool) -> Returned:
    """Run the cell where its files are; with ``returned``, in a scratch directory whose
    files go back to the driver."""
    if not returned:
        return await run_cell_async(cell), None
    scratch = Path(tempfile.mkdtemp(prefix="voxbench-cell-"))
    try:
        local = cell.model_copy(update={"path": scratch / cell.path.name})
        result = await run_cell_async(local)
        files = {
            str(p.relative_to(local.path)): p.read_bytes()
            for p in sorted(local.path.rglob("*"))
            if p.is_file() and p.name != ".writer.lock"
        }
        return result.model_copy(update={"path": cell.path}), files
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
