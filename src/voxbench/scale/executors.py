"""Executors: who runs a list of cells, and how many at once.

The executor decides only *where* a cell runs; what a cell writes is the cell's business
(``scale.cells``), so the same cells give the same artifacts whichever executor runs them.

- ``LocalExecutor`` (default): asyncio in this process for cells that mostly wait on a
  provider, plus a process pool for CPU-bound cells (local speech, in-process agents in
  audio mode), so they use the machine's cores instead of taking turns on one.
- ``RayExecutor`` (``scale.ray_executor``): cells that wait on warm async actors kept for
  the Ray session, CPU-bound cells as Ray tasks of one CPU; a cell is retried from its last
  checkpoint when its worker dies.

Both honour the same ``Limits``: at most ``max_concurrency`` cells in flight, at most
``per_provider[p]`` cells of provider ``p``, and request pacing per endpoint and key
(``providers.ratelimit``): in process with ``LocalPacer``, cluster-wide through one actor.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Protocol

from voxbench.core.errors import ConfigError
from voxbench.providers.ratelimit import LocalPacer, RateLimit, install_pacer
from voxbench.scale.cells import Cell, CellResult, failed_cell, run_cell, run_cell_async
from voxbench.scale.limits import CellCallback, Limits

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """Runs cells; returns their results in the cells' order."""

    name: str

    def run(
        self, cells: Sequence[Cell], limits: Limits, on_done: CellCallback | None = None
    ) -> list[CellResult]:
        """Run every cell (each runs, resumes or is reused; see ``scale.cells``)."""


def _install_local_pacer(rate_limits: Mapping[str, RateLimit]) -> None:
    """Process-pool initializer: the worker paces its own requests (see LocalExecutor)."""
    install_pacer(LocalPacer(rate_limits) if rate_limits else None)


class LocalExecutor:
    """Cells as coroutines of one event loop, CPU-bound cells in a process pool."""

    name = "local"

    def __init__(self, processes: int | None = None) -> None:
        self.processes = processes or os.cpu_count() or 1

    def run(
        self, cells: Sequence[Cell], limits: Limits, on_done: CellCallback | None = None
    ) -> list[CellResult]:
        previous = install_pacer(LocalPacer(limits.rate_limits) if limits.rate_limits else None)
        try:
            return asyncio.run(self._run_all(cells, limits, on_done))
        finally:
            install_pacer(previous)

    async def _run_all(
        self, cells: Sequence[Cell], limits: Limits, on_done: CellCallback | None
    ) -> list[CellResult]:
        total = asyncio.Semaphore(limits.max_concurrency)
        providers = {c.provider: asyncio.Semaphore(limits.slots(c.provider)) for c in cells}
        pool: ProcessPoolExecutor | None = None
        if any(c.cpu_bound for c in cells):
            # Each pool process paces its own requests: a CPU-bound cell that also calls a
            # rate-limited provider (a cascade with a remote LLM) shares the limit only with
            # the cells of its own process. On Ray one actor holds every bucket.
            # Spawned, never forked: a parent that already ran local Whisper (CTranslate2's
            # OpenMP threads) would leave a forked child hanging on its first transcription.
            pool = ProcessPoolExecutor(
                max_workers=min(self.processes, limits.max_concurrency),
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_install_local_pacer,
                initargs=(dict(limits.rate_limits),),
            )
        loop = asyncio.get_running_loop()

        async def one(cell: Cell) -> CellResult:
            async with providers[cell.provider], total:
                try:
                    if cell.cpu_bound and pool is not None:
                        result = await loop.run_in_executor(pool, run_cell, cell)
                    else:
                        result = await run_cell_async(cell)
                except Exception as exc:  # one broken cell must not stop the others
                    result = failed_cell(cell, exc)
            if on_done is not None:
                on_done(cell, result)
            return result

        try:
            return list(await asyncio.gather(*(one(c) for c in cells)))
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)


def make_executor(
    name: str, *, ray_address: str | None = None, ray_artifacts: str | None = None
) -> Executor:
    """The executor called ``name`` (``local`` or ``ray``)."""
    if name == "local":
        for flag, value in (("--ray-address", ray_address), ("--ray-artifacts", ray_artifacts)):
            if value:
                raise ConfigError(
                    f"{flag} needs the Ray executor",
                    field=flag,
                    expected=f"--executor ray, or no {flag}",
                )
        return LocalExecutor()
    if name == "ray":
        from voxbench.scale.ray_executor import RayExecutor

        return RayExecutor(address=ray_address, artifacts=ray_artifacts or "shared")
    raise ConfigError(
        f"unknown executor {name!r}", field="--executor", expected=" or ".join(EXECUTORS)
    )
