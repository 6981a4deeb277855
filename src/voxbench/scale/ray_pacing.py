"""One request limit for a whole Ray cluster: the buckets in one actor, asked by every worker.

``PacerActor`` holds the same ``LocalPacer`` the local executor uses; a worker installs
``RayPacer``, which asks the actor for a reservation before each request to a limited
endpoint and tells it each 429's Retry-After, so every worker on every node shares one limit
per endpoint and key. An endpoint without a limit is never asked about (``limit_for`` is
answered in the worker), and with no limits at all no actor is started: requests then cost
no round trip.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Mapping
from typing import Any

from voxbench.providers.ratelimit import LocalPacer, RateLimit, install_pacer, normalise_origin

PlainLimits = Mapping[str, tuple[float, int]]
"""Endpoint origin → (requests per second, burst): what travels to workers."""


def plain_limits(limits: Mapping[str, RateLimit]) -> dict[str, tuple[float, int]]:
    """``limits`` as plain tuples (cheap to send with every task)."""
    return {k: (v.requests_per_second, v.burst) for k, v in limits.items()}


class PacerActor:
    """The cluster's request buckets (wrapped by ``ray.remote`` in ``start_pacer``)."""

    def __init__(self, limits: PlainLimits) -> None:
        self._pacer = LocalPacer({k: RateLimit(rps, burst) for k, (rps, burst) in limits.items()})

    def reserve(self, bucket: str) -> float:
        return self._pacer.reserve(bucket)

    def retry_after(self, bucket: str, seconds: float) -> None:
        self._pacer.retry_after(bucket, seconds)


def start_pacer(ray: Any, limits: PlainLimits) -> Any:
    """A ``PacerActor`` for ``limits``, or None when there are none (nothing to ask)."""
    if not limits:
        return None
    actor = ray.remote(num_cpus=0)(PacerActor)
    return actor.options(name=f"voxbench-pacer-{secrets.token_hex(4)}").remote(limits)


class RayPacer:
    """A worker's pacer: reservations come from the ``PacerActor``."""

    def __init__(self, actor: Any, limits: PlainLimits) -> None:
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


def install_ray_pacer(actor: Any, limits: PlainLimits) -> None:
    """In a worker: pace this process's requests through ``actor`` (None: unpaced)."""
    install_pacer(RayPacer(actor, limits) if actor is not None else None)
