"""Request pacing per provider endpoint and key: a token bucket plus the provider's Retry-After.

Every HTTP client made by ``providers.http.make_http_client`` asks the process's pacer before
each request and tells it about each 429. The pacer is installed by whoever runs many cells at
once (``voxbench.scale``): in process, ``LocalPacer`` holds the buckets; on a Ray cluster a
pacer that forwards to one actor holding the same ``TokenBucket`` objects, so 50 workers share
one limit. Without a pacer (a single ``voxbench run``) requests go out unpaced.

A bucket is keyed by the request's origin (scheme, host, port) and a fingerprint of the key it
carries (a hash, never the key): two keys on one endpoint are two limits, as providers count
them.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import httpx

KEY_HEADERS = ("authorization", "api-key", "x-api-key", "x-goog-api-key")
"""Headers that carry a provider key (their value is hashed into the bucket's name)."""


@dataclass(frozen=True)
class RateLimit:
    """At most ``requests_per_second`` on average, ``burst`` at once, per endpoint and key."""

    requests_per_second: float
    burst: int = 1


class TokenBucket:
    """A token bucket that hands out *reservations*: each request learns when it may go.

    Kept as its theoretical arrival time (GCRA, the token bucket's equivalent): a request may
    go ``burst - 1`` intervals before that time, and each one moves it one interval on.
    Reserving instead of polling lets a remote holder (a Ray actor) answer in one call: the
    caller sleeps the returned delay itself. A 429's Retry-After closes the bucket until then;
    the requests queued behind it then leave one interval apart, not all at once.
    """

    def __init__(self, limit: RateLimit, *, now: float | None = None) -> None:
        if limit.requests_per_second <= 0 or limit.burst < 1:
            raise ValueError("a rate limit needs requests_per_second > 0 and burst >= 1")
        self.limit = limit
        self._interval = 1.0 / limit.requests_per_second
        self._tolerance = (limit.burst - 1) * self._interval
        self._arrival = time.monotonic() if now is None else now
        self._closed_until = 0.0

    def reserve(self, now: float | None = None) -> float:
        """Take one token; returns how many seconds the caller must wait before sending."""
        now = time.monotonic() if now is None else now
        send_at = max(now, self._arrival - self._tolerance, self._closed_until)
        self._arrival = max(self._arrival, send_at) + self._interval
        return send_at - now

    def defer(self, seconds: float, now: float | None = None) -> None:
        """The provider said Retry-After ``seconds``: nothing goes out before then."""
        now = time.monotonic() if now is None else now
        self._closed_until = max(self._closed_until, now + seconds)
        self._arrival = max(self._arrival, self._closed_until)


class Pacer(Protocol):
    """Where clients ask before a request and report a 429."""

    def limit_for(self, origin: str) -> RateLimit | None:
        """The limit of ``origin`` (None: unpaced)."""

    async def wait_async(self, bucket: str) -> None:
        """Sleep until a request to ``bucket`` may go."""

    def wait_blocking(self, bucket: str) -> None:
        """The same, for blocking clients."""

    def retry_after(self, bucket: str, seconds: float) -> None:
        """Close ``bucket`` for ``seconds``."""


class LocalPacer:
    """The buckets in this process (thread-safe: blocking clients run on threads)."""

    def __init__(self, limits: Mapping[str, RateLimit]) -> None:
        self.limits = {normalise_origin(k): v for k, v in limits.items()}
        self._buckets: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    def limit_for(self, origin: str) -> RateLimit | None:
        return self.limits.get(origin)

    def reserve(self, bucket: str) -> float:
        """Seconds to wait before a request to ``bucket`` (``origin|fingerprint``)."""
        with self._lock:
            if bucket not in self._buckets:
                self._buckets[bucket] = TokenBucket(self.limits[bucket.split("|", 1)[0]])
            return self._buckets[bucket].reserve()

    async def wait_async(self, bucket: str) -> None:
        delay = self.reserve(bucket)
        if delay > 0:
            await asyncio.sleep(delay)

    def wait_blocking(self, bucket: str) -> None:
        delay = self.reserve(bucket)
        if delay > 0:
            time.sleep(delay)

    def retry_after(self, bucket: str, seconds: float) -> None:
        with self._lock:
            if bucket not in self._buckets:
                self._buckets[bucket] = TokenBucket(self.limits[bucket.split("|", 1)[0]])
            self._buckets[bucket].defer(seconds)


_pacer: Pacer | None = None


def install_pacer(pacer: Pacer | None) -> Pacer | None:
    """Make ``pacer`` pace every client of this process; returns the one it replaces."""
    global _pacer
    previous, _pacer = _pacer, pacer
    return previous


def current_pacer() -> Pacer | None:
    """The pacer requests of this process go through (None: unpaced)."""
    return _pacer


def normalise_origin(url: str | httpx.URL) -> str:
    """``https://API.openai.com/v1/`` → ``https://api.openai.com:443``."""
    u = url if isinstance(url, httpx.URL) else httpx.URL(url if "://" in url else f"https://{url}")
    port = u.port or {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(u.scheme, 0)
    return f"{u.scheme}://{u.host.lower()}:{port}"


def bucket_name(origin: str, headers: Mapping[str, str]) -> str:
    """``origin|fingerprint`` of the key in ``headers`` (``-`` when none is sent)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    key = next((lowered[h] for h in KEY_HEADERS if lowered.get(h)), None)
    fingerprint = hashlib.sha256(key.encode()).hexdigest()[:12] if key else "-"
    return f"{origin}|{fingerprint}"
