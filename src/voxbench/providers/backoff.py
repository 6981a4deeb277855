"""The one backoff policy: capped exponential with jitter, never shorter than ``Retry-After``.

``backoff_delay`` is the pure rule every retry loop uses (the runner's turn retries, the
LLM judge, the full-duplex judge). ``retrying`` wraps a call in ``stamina`` with the same
rule for clients that retry inside one call (ASR/TTS): it retries only retryable
``ProviderError``s and sleeps what the provider asked for when it asked.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import stamina

from voxbench.core.errors import ProviderError

BACKOFF_BASE = 1.0
"""Seconds before the first retry; doubles on each later one."""
BACKOFF_CAP = 30.0
"""The longest wait the exponential part may reach."""


def backoff_delay(
    attempt: int,
    retry_after: float | None = None,
    *,
    base: float = BACKOFF_BASE,
    cap: float = BACKOFF_CAP,
    jitter: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before retry number ``attempt`` (1 for the first retry).

    ``min(cap, base · 2^(attempt-1))`` scaled by a jitter factor in [0.5, 1) so that many
    clients hit by the same outage do not retry in lockstep. A provider's ``retry_after`` is
    always a floor: it asked for that wait. ``base <= 0`` turns our own waiting off (tests).
    """
    delay = 0.0
    if base > 0:
        delay = min(cap, base * 2 ** max(0, attempt - 1)) * (0.5 + jitter() / 2)
    return max(delay, retry_after or 0.0)


def is_retryable(exc: Exception) -> bool | float:
    """stamina's retry hook: retry a retryable ``ProviderError``, waiting its ``Retry-After``."""
    if not isinstance(exc, ProviderError) or not exc.retryable:
        return False
    # A float tells stamina exactly how long to wait: that is how Retry-After is honoured.
    return exc.retry_after if exc.retry_after else True


def retrying(
    attempts: int = 3, *, base: float | None = None, cap: float | None = None
) -> stamina.BoundRetryingCaller:
    """Our policy as a stamina caller: ``retrying()(func, *args)`` runs ``func`` with retries.

    ``base`` defaults to ``BACKOFF_BASE``; ``base <= 0`` retries without waiting at all.
    """
    base = BACKOFF_BASE if base is None else base
    waits = base > 0

    def hook(exc: Exception) -> bool | float:
        decision = is_retryable(exc)
        return decision if waits else bool(decision)

    return stamina.RetryingCaller(
        attempts=attempts,
        timeout=None,
        wait_initial=max(base, 0.0),
        wait_max=BACKOFF_CAP if cap is None else cap,
        wait_jitter=max(base, 0.0) / 2,
        wait_exp_base=2,
    ).on(hook)
