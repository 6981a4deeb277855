"""The Ray executor: each cell on a Ray worker; one actor paces requests for the whole cluster.

``address``: ``auto`` joins the cluster this machine belongs to (``ray start --head``),
``ray://host:10001`` a remote cluster through Ray Client; none starts a local Ray on demand
(and stops it after the cells are done).

Cells that compute on their CPU (audio runs with local speech) are tasks that ask for a whole
CPU; the others, which mostly wait on a provider, go to warm async actors (one per CPU of the
cluster, kept between runs) that run many of them at once on one event loop each
(``scale.ray_runners``).

Artifacts: with ``artifacts="shared"`` (default) workers write the run directories straight
into the runs directory, which must then be the same path on every node (a cluster
filesystem); a worker killed mid-cell is retried by Ray and the retry resumes the run from its
last checkpoint. With ``artifacts="return"`` a worker runs the cell in a scratch directory of
its own node and returns the files, which the driver writes into the runs directory; a
retried cell then starts again from the beginning, and only a finished cell's files are
written, so nothing is duplicated either way.

Request pacing: ``scale.ray_pacing`` (one actor holds every bucket; none without limits).
"""

from __future__ import annotations

import contextlib
import shutil
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from voxbench.core.errors import ConfigError
from voxbench.scale.cells import Cell, CellResult, failed_cell, finished
from voxbench.scale.limits import CellCallback, Limits
from voxbench.scale.ray_pacing import PlainLimits, plain_limits, start_pacer
from voxbench.scale.ray_runners import CELL_RETRIES, forget_runners, ray_cell, warm_runners

T = TypeVar("T")
RAY_HINT = "pip install 'voxbench[ray]'"
CPU_BOUND_CPUS = 1.0
WAITING_CPUS = 0.25
"""A shard that mostly waits on a remote provider needs a quarter of a CPU."""


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
        plain = plain_limits(limits.rate_limits)
        actor = start_pacer(ray, plain)
        try:
            return self._drive(ray, cells, limits, actor, plain, on_done)
        finally:
            if actor is not None:
                with contextlib.suppress(Exception):
                    ray.kill(actor)
            if started_here:
                _shutdown(ray)

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
                _shutdown(ray)

    def cluster_cpus(self) -> int:
        """CPUs of the cluster (starting a local Ray to count them if none is running)."""
        ray = import_ray()
        if not ray.is_initialized():
            self._init(ray)
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def _init(self, ray: Any) -> None:
        if self.address:
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(**local_ray_options(self.num_cpus))

    def _drive(
        self,
        ray: Any,
        cells: Sequence[Cell],
        limits: Limits,
        actor: Any,
        plain: PlainLimits,
        on_done: CellCallback | None,
    ) -> list[CellResult]:
        task = ray.remote(ray_cell).options(
            num_cpus=CPU_BOUND_CPUS, max_retries=CELL_RETRIES, retry_exceptions=False
        )
        returned = self.artifacts == "return"
        runners = warm_runners(ray) if any(not c.cpu_bound for c in cells) else []
        runner_load: Counter[int] = Counter()
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
                    ref = task.remote(cell, actor, plain, returned)
                else:  # the least busy runner
                    r = min(range(len(runners)), key=lambda k: runner_load[k])
                    ref = runners[r].run.remote(cell, returned, actor, plain)
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
        return [results[i] for i in range(len(cells))]


def local_ray_options(num_cpus: int | None = None) -> dict[str, Any]:
    """``ray.init`` options for the local Ray the executor starts on demand.

    No dashboard, no worker logs copied to the terminal (the cells write their own logs),
    and workers at the driver's priority: they run the cells, as the local executor's pool
    processes do, while Ray's default (nice 15) lets any other process on the machine take
    their cores first."""
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "_system_config": {"worker_niceness": 0},
    }
    if num_cpus is not None:
        options["num_cpus"] = num_cpus
    return options


def _shutdown(ray: Any) -> None:
    """Stop the Ray this executor started (its warm runners go with it)."""
    ray.shutdown()
    forget_runners()


def _write_returned(path: Path, files: Mapping[str, bytes]) -> None:
    """Write a returned cell's files over what an interrupted attempt left there (a reused
    cell returns none and keeps its own)."""
    if path.exists():
        shutil.rmtree(path)
    for name, data in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
