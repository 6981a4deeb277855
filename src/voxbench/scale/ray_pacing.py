"""One request limit for a whole Ray cluster: the buckets in one actor, asked by every worker.

``PacerActor`` holds the same ``TokenBucket`` objects the local executor's ``LocalPacer``
does; a worker installs ``RayPacer``, which asks the actor for a reservation before each
request to a limited endpoint and tells it each 429's Retry-After, so every worker on every
node shares one limit per endpoint and key. An endpoint without a limit is never asked about
(``limit_for`` is answered in the worker), and with no limits at all no actor is started:
requests then cost no round trip.

What the actor guarantees is its grants: the times it lets requests go (GCRA), at most
``burst`` at once and ``requests_per_second`` on average, so no window of ``w`` seconds holds
more than ``floor(requests_per_second * w) + burst`` of them. A worker sends no earlier than
its grant (it sleeps the returned delay after the answer arrives), but how much later depends
on its node's load and the round trip, so what an endpoint receives can bunch a little
where workers wake late. ``start_pacer(..., record=True)`` keeps the grants for ``grants()``.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Mapping
from typing import Any

from voxbench.providers.ratelimit import RateLimit, TokenBucket, install_pacer, normalise_origin

PlainLimits = Mapping[str, tuple[float, int]]
"""Endpoint origin → (requests per second, burst): what travels to workers."""


def plain_limits(limits: Mapping[str, RateLimit]) -> dict[str, tuple[float, int]]:
    """``limits`` as plain tuples (cheap to send with every task)."""
    return {k: (v.requests_per_second, v.burst) for k, v in limits.items()}


class PacerActor:
    """The cluster's request buckets (wrapped by ``ray.remote`` in ``start_pacer``).

    Its methods run one at a time (a threaded actor would need ``LocalPacer``'s lock).
    With ``record``, each grant is kept: ``grants()`` gives them per bucket."""

    def __init__(self, limits: PlainLimits, *, record: bool = False) -> None:
        self._limits = {
            normalise_origin(k): RateLimit(rps, burst) for k, (rps, burst) in limits.items()
        }
        self._buckets: dict[str, TokenBucket] = {}
        self._grants: dict[str, list[float]] | None = {} if record else None

    def reserve(self, bucket: str) -> float:
        """Seconds to wait before a request to ``bucket`` (``origin|fingerprint``)."""
        now = time.monotonic()
        delay = self._bucket(bucket, now).reserve(now)
        if self._grants is not None:
            self._grants.setdefault(bucket, []).append(now + delay)
        return delay

    def retry_after(self, bucket: str, seconds: float) -> None:
        self._bucket(bucket, time.monotonic()).defer(seconds)

    def grants(self) -> dict[str, list[float]]:
        """Bucket → the ``time.monotonic()`` (on the actor's node) at which each request was
        allowed to go, in the order granted; empty unless started with ``record``."""
        return {bucket: list(times) for bucket, times in (self._grants or {}).items()}

    def _bucket(self, bucket: str, now: float) -> TokenBucket:
        if bucket not in self._buckets:
            self._buckets[bucket] = TokenBucket(self._limits[bucket.split("|", 1)[0]], now=now)
        return self._buckets[bucket]


def start_pacer(ray: Any, limits: PlainLimits, *, record: bool = False) -> Any:
    """A ``PacerActor`` for ``limits``, or None when there are none (nothing to ask);
    ``record`` keeps its grants (for ``grants()``: tests, diagnostics)."""
    if not limits:
        return None
    actor = ray.remote(num_cpus=0)(PacerActor)
    name = f"voxbench-pacer-{secrets.token_hex(4)}"
    return actor.options(name=name).remote(limits, record=record)


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
