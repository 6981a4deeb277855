"""The one retry policy: capped exponential backoff with jitter, never shorter than ``Retry-After``.

``RetryPolicy`` owns every retry in voxbench: how many attempts, how long to wait before
each retry (``delay``, the pure rule ``backoff_delay``) and which failures are worth another
attempt (``is_retryable``: a ``ProviderError`` classified retryable by ``providers.http``,
never a rejected key or an unknown model). ``call`` runs an async call under the policy and
tells the caller about each retry (to log or record it); ``call_blocking`` does the same for
blocking callers through ``stamina``, so that no caller needs a retry loop of its own.

Presets, for the roles whose numbers differ:

- ``PROVIDER_CALL``: one request to a provider on a judge's behalf (the LLM judge, the audio
  judge, the full-duplex judge): three attempts, because a judgment that still fails is
  recorded undecided, never lost, and the next judgment tries again anyway.
- ``TURN``: a whole conversation turn of a run, retried on a fresh session; its attempts are
  the run's ``max_retries`` + 1 (``TURN.with_retries``), since a lost turn costs the run.

Both wait 1 s before the first retry, doubling up to 30 s. A task run's model and judge
build theirs from their config (``RetryPolicy(retries + 1, backoff_base_s)``): the user sets
those numbers. Tests turn our own waiting off
with ``WAIT = False`` (a provider's ``Retry-After`` is still honoured).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import stamina

from voxbench.core.errors import ErrorCategory, ProviderError

T = TypeVar("T")

BACKOFF_BASE = 1.0
"""Seconds before the first retry; doubles on each later one."""
BACKOFF_CAP = 30.0
"""The longest wait the exponential part may reach."""
NEVER_RETRIED = frozenset({ErrorCategory.AUTHENTICATION, ErrorCategory.NOT_FOUND})
"""Failures that would fail every attempt alike (a rejected key, an unknown model)."""
WAIT = True
"""False turns the policies' own waiting off (tests); a ``Retry-After`` is still waited."""


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
    always a floor: it asked for that wait. ``base <= 0`` turns our own waiting off.
    """
    delay = 0.0
    if base > 0:
        delay = min(cap, base * 2 ** max(0, attempt - 1)) * (0.5 + jitter() / 2)
    return max(delay, retry_after or 0.0)


def is_retryable(exc: BaseException) -> bool:
    """A ``ProviderError`` classified retryable, and not of a category that never is."""
    return isinstance(exc, ProviderError) and exc.retryable and exc.category not in NEVER_RETRIED


OnRetry = Callable[[int, Any, float], None]
"""``on_retry(attempt, error, delay)``: attempt ``attempt`` failed with ``error``; the next
one starts after ``delay`` seconds."""


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts a call gets and how long to wait between them.

    ``attempts`` counts the first call too (1: never retried). ``base`` is the wait before
    the first retry, doubling on each later one up to ``cap``, jittered, never shorter than
    the ``Retry-After`` the provider sent; ``base <= 0`` waits only that.
    """

    attempts: int = 3
    base: float = BACKOFF_BASE
    cap: float = BACKOFF_CAP

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"a retry policy needs at least one attempt, not {self.attempts}")

    @property
    def retries(self) -> int:
        """Attempts after the first."""
        return self.attempts - 1

    def with_retries(self, retries: int) -> RetryPolicy:
        """This policy with ``retries`` attempts after the first (a user's setting)."""
        return replace(self, attempts=max(0, retries) + 1)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based) before the next one."""
        return backoff_delay(attempt, retry_after, base=self.base if WAIT else 0.0, cap=self.cap)

    def retries_after(
        self,
        error: BaseException,
        attempt: int,
        retry_if: Callable[[BaseException], bool] = is_retryable,
    ) -> bool:
        """Whether failed attempt ``attempt`` (1-based) gets another: attempts are left and
        ``retry_if(error)`` (by default: a retryable ``ProviderError``)."""
        return attempt < self.attempts and retry_if(error)

    async def call(
        self,
        fn: Callable[[], Awaitable[T]],
        *,
        on_retry: OnRetry | None = None,
        retry_if: Callable[[BaseException], bool] = is_retryable,
    ) -> T:
        """``await fn()``, retried while ``retry_if`` says the failure is worth it and
        attempts are left; the last failure (or one not retried) is raised.

        Before each wait ``on_retry(attempt, error, delay)`` reports the failed attempt, so
        the caller logs or records it; the call itself logs nothing. ``retry_if`` may accept
        other exceptions than ``ProviderError`` (a runner's failed turn): an exception's
        ``retry_after`` attribute, when it has one, is the wait's floor.
        """
        attempt = 1
        while True:
            try:
                return await fn()
            except Exception as error:
                if not self.retries_after(error, attempt, retry_if):
                    raise
                delay = self.delay(attempt, getattr(error, "retry_after", None))
                if on_retry is not None:
                    on_retry(attempt, error, delay)
                await asyncio.sleep(delay)
                attempt += 1

    def call_blocking(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a blocking caller, retried by this policy (``stamina``
        runs the loop; its waits are this policy's ``delay``)."""
        failures = 0

        def hook(error: Exception) -> bool | float:
            nonlocal failures
            if not is_retryable(error):
                return False
            failures += 1
            assert isinstance(error, ProviderError)
            # A float tells stamina exactly how long to wait: this policy's delay.
            return float(self.delay(failures, error.retry_after))

        for attempt in stamina.retry_context(on=hook, attempts=self.attempts, timeout=None):
            with attempt:
                return fn(*args, **kwargs)
        raise AssertionError("unreachable: stamina re-raises the last failure")


PROVIDER_CALL = RetryPolicy(attempts=3)
"""One request to a provider for a judge: a judgment that still fails is undecided, not lost."""
TURN = RetryPolicy(attempts=4)
"""A conversation turn on a fresh session (``TURN.with_retries(config.max_retries)``)."""


def retrying(
    attempts: int = 3, *, base: float | None = None, cap: float | None = None
) -> Callable[..., Any]:
    """A blocking caller with this policy: ``retrying()(func, *args)`` runs ``func`` with
    retries (``RetryPolicy(attempts, base, cap).call_blocking``)."""
    policy = RetryPolicy(
        attempts,
        BACKOFF_BASE if base is None else base,
        BACKOFF_CAP if cap is None else cap,
    )
    return policy.call_blocking
