"""The Ray executor: each cell a Ray task; one actor paces requests for the whole cluster.

``address``: ``auto`` joins the cluster this machine belongs to (``ray start --head``),
``ray://host:10001`` a remote cluster through Ray Client; none starts a local Ray on demand
(and stops it after the cells are done).

Cells that compute on their CPU (audio runs with local speech) are tasks that ask for a whole
CPU; the others, which mostly wait on a provider, go to a pool of async actors (one per CPU
of the cluster) that run many of them at once on one event loop each.

Artifacts: with ``artifacts="shared"`` (default) workers write the run directories straight
into the runs directory, which must then be the same path on every node (a cluster
filesystem); a worker killed mid-cell is retried by Ray and the retry resumes the run from its
last checkpoint. With ``artifacts="return"`` a worker runs the cell in a scratch directory of
its own node and returns the files, which the driver writes into the runs directory; a
retried cell then starts again from the beginning, and only a finished cell's files are
written, so nothing is duplicated either way.

Request pacing: ``PacerActor`` holds the same ``LocalPacer`` the local executor uses; a
worker installs ``RayPacer``, which asks the actor for a reservation before each request and
tells it each 429's Retry-After, so every worker on every node shares one limit per endpoint
and key.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from voxbench.core.errors import ConfigError
from voxbench.providers.ratelimit import LocalPacer, RateLimit, install_pacer, normalise_origin
from voxbench.scale.cells import Cell, CellResult, failed_cell, finished, run_cell_async
from voxbench.scale.limits import CellCallback, Limits

T = TypeVar("T")
RAY_HINT = "pip install 'voxbench[ray]'"
CELL_RETRIES = 3
"""A cell whose worker dies is retried this many times (each retry resumes the run)."""
CPU_BOUND_CPUS = 1.0
WAITING_CPUS = 0.25
"""A cell that mostly waits on a remote provider needs a quarter of a CPU."""


def import_ray() -> Any:
    """The ``ray`` module, or a user error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "the Ray executor needs Ray, which is not installed",
            field="--executor ray",
            expected=RAY_HINT,
        ) from None
    return ray


class PacerActor:
    """The cluster's request buckets (wrapped by ``ray.remote`` when a run starts)."""

    def __init__(self, limits: Mapping[str, tuple[float, int]]) -> None:
        self._pacer = LocalPacer({k: RateLimit(rps, burst) for k, (rps, burst) in limits.items()})

    def reserve(self, bucket: str) -> float:
        return self._pacer.reserve(bucket)

    def retry_after(self, bucket: str, seconds: float) -> None:
        self._pacer.retry_after(bucket, seconds)


class RayPacer:
    """A worker's pacer: reservations come from the ``PacerActor``."""

    def __init__(self, actor: Any, limits: Mapping[str, tuple[float, int]]) -> None:
        self.actor = actor
        self.limits = {
            normalise_origin(k): RateLimit(rps, burst) for k, (rps, burst) in limits.items()
        }

    def limit_for(self, origin: str) -> RateLimit | None:
        return self.limits.get(origin)

    async def wait_async(self, bucket: str) -> None:
        delay = await self.actor.reserve.remote(bucket)
        if delay > 0:
            await asyncio.sleep(delay)

    def wait_blocking(self, bucket: str) -> None:
        import ray

        delay = ray.get(self.actor.reserve.remote(bucket))
        if delay > 0:
            time.sleep(delay)

    def retry_after(self, bucket: str, seconds: float) -> None:
        self.actor.retry_after.remote(bucket, seconds)


def ray_cell(
    cell: Cell, pacer: Any, limits: Mapping[str, tuple[float, int]], returned: bool
) -> tuple[CellResult, dict[str, bytes] | None]:
    """The body of a CPU-bound cell's Ray task (a process of its own)."""
    install_pacer(RayPacer(pacer, limits) if pacer is not None else None)
    return asyncio.run(_cell_here(cell, returned))


class CellRunner:
    """Runs the cells that mostly wait on a provider, many at once on one event loop: an
    async actor (wrapped by ``ray.remote`` when a run starts), one per CPU of the cluster, so
    eight such cells in flight cost two worker processes, not eight."""

    def __init__(self, pacer: Any, limits: Mapping[str, tuple[float, int]]) -> None:
        install_pacer(RayPacer(pacer, limits) if pacer is not None else None)

    async def run(self, cell: Cell, returned: bool) -> tuple[CellResult, dict[str, bytes] | None]:
        return await _cell_here(cell, returned)


async def _cell_here(cell: Cell, returned: bool) -> tuple[CellResult, dict[str, bytes] | None]:
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


class RayExecutor:
    """Cells as Ray tasks (see the module's docstring)."""

    name = "ray"

    def __init__(
        self, address: str | None = None, *, artifacts: str = "shared", num_cpus: int | None = None
    ) -> None:
        if artifacts not in ("shared", "return"):
            raise ConfigError(
                f"unknown artifacts mode {artifacts!r}",
                field="--ray-artifacts",
                expected="shared or return",
            )
        import_ray()  # a missing extra is said before anything is planned or written
        self.address = address
        self.artifacts = artifacts
        self.num_cpus = num_cpus

    def run(
        self, cells: Sequence[Cell], limits: Limits, on_done: CellCallback | None = None
    ) -> list[CellResult]:
        ray = import_ray()
        started_here = not ray.is_initialized()
        if started_here:
            self._init(ray)
        plain = {k: (v.requests_per_second, v.burst) for k, v in limits.rate_limits.items()}
        actor = None
        try:
            if plain:
                actor = (
                    ray.remote(num_cpus=0)(PacerActor)
                    .options(name=f"voxbench-pacer-{secrets.token_hex(4)}")
                    .remote(plain)
                )
            return self._drive(ray, cells, limits, actor, plain, on_done)
        finally:
            if actor is not None:
                with contextlib.suppress(Exception):
                    ray.kill(actor)
            if started_here:
                ray.shutdown()

    def map_shards(
        self, function: Callable[..., T], arguments: Sequence[tuple[Any, ...]], *, cpus: float
    ) -> list[T | BaseException]:
        """``function(*args)`` for each args as a Ray task (retried when its worker dies);
        results in order, an exception where a shard failed past its retries."""
        ray = import_ray()
        started_here = not ray.is_initialized()
        if started_here:
            self._init(ray)
        try:
            task = ray.remote(function).options(
                num_cpus=cpus, max_retries=CELL_RETRIES, retry_exceptions=False
            )
            refs = [task.remote(*args) for args in arguments]
            out: list[T | BaseException] = []
            for ref in refs:
                try:
                    out.append(ray.get(ref))
                except Exception as exc:  # a shard lost past its retries, a bug in it
                    out.append(exc)
            return out
        finally:
            if started_here:
                ray.shutdown()

    def cluster_cpus(self) -> int:
        """CPUs of the cluster (starting a local Ray to count them if none is running)."""
        ray = import_ray()
        if not ray.is_initialized():
            self._init(ray)
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def _init(self, ray: Any) -> None:
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if self.address:
            options["address"] = self.address
        elif self.num_cpus is not None:
            options["num_cpus"] = self.num_cpus
        ray.init(**options)

    def _drive(
        self,
        ray: Any,
        cells: Sequence[Cell],
        limits: Limits,
        actor: Any,
        plain: Mapping[str, tuple[float, int]],
        on_done: CellCallback | None,
    ) -> list[CellResult]:
        task = ray.remote(ray_cell)
        returned = self.artifacts == "return"
        runners: list[Any] = []
        runner_load: Counter[int] = Counter()
        if any(not c.cpu_bound for c in cells):
            count = max(1, int(ray.cluster_resources().get("CPU", 1)))
            runner_class = ray.remote(CellRunner).options(
                num_cpus=WAITING_CPUS,
                max_restarts=CELL_RETRIES,
                max_task_retries=CELL_RETRIES,
                max_concurrency=max(1, limits.max_concurrency),
            )
            runners = [runner_class.remote(actor, plain) for _ in range(count)]
        placed: dict[Any, int] = {}
        waiting = list(range(len(cells)))
        in_flight: dict[Any, int] = {}
        busy: Counter[str] = Counter()
        results: dict[int, CellResult] = {}
        for i in list(waiting):  # finished cells are not sent anywhere
            reused = finished(cells[i])
            if reused is not None:
                results[i] = reused
                waiting.remove(i)
                if on_done is not None:
                    on_done(cells[i], reused)
        while waiting or in_flight:
            # Submit what the limits allow, in the cells' order (per provider).
            for i in list(waiting):
                cell = cells[i]
                if len(in_flight) >= limits.max_concurrency:
                    break
                if busy[cell.provider] >= limits.slots(cell.provider):
                    continue
                if cell.cpu_bound:
                    ref = task.options(
                        num_cpus=CPU_BOUND_CPUS, max_retries=CELL_RETRIES, retry_exceptions=False
                    ).remote(cell, actor, plain, returned)
                else:  # the least busy runner
                    r = min(range(len(runners)), key=lambda k: runner_load[k])
                    ref = runners[r].run.remote(cell, returned)
                    runner_load[r] += 1
                    placed[ref] = r
                in_flight[ref] = i
                busy[cell.provider] += 1
                waiting.remove(i)
            if not in_flight:
                break
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                i = in_flight.pop(ref)
                cell = cells[i]
                busy[cell.provider] -= 1
                if ref in placed:
                    runner_load[placed.pop(ref)] -= 1
                try:
                    result, files = ray.get(ref)
                except Exception as exc:  # a worker lost past its retries, a bug in a cell
                    result, files = failed_cell(cell, exc), None
                if files is not None:
                    _write_returned(cell.path, files)
                results[i] = result
                if on_done is not None:
                    on_done(cell, result)
        for runner in runners:
            with contextlib.suppress(Exception):
                ray.kill(runner)
        return [results[i] for i in range(len(cells))]


def _write_returned(path: Path, files: Mapping[str, bytes]) -> None:
    """Write a returned cell's files over what an interrupted attempt left there (a reused
    cell returns none and keeps its own)."""
    if path.exists():
        shutil.rmtree(path)
    for name, data in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
