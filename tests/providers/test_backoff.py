"""The one backoff policy."""

from __future__ import annotations

import pytest

from voxbench.core.errors import ProviderError
from voxbench.providers.backoff import backoff_delay, retrying


def test_delays_grow_exponentially_with_jitter_and_are_capped() -> None:
    low = [backoff_delay(n, base=1.0, cap=8.0, jitter=lambda: 0.0) for n in range(1, 7)]
    high = [backoff_delay(n, base=1.0, cap=8.0, jitter=lambda: 1.0) for n in range(1, 7)]
    assert low == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert high == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert all(0.5 <= backoff_delay(3, base=1.0) / 4 <= 1.0 for _ in range(50))


def test_retry_after_is_a_floor_even_when_waiting_is_off() -> None:
    assert backoff_delay(1, retry_after=12.0, base=1.0) == 12.0
    assert backoff_delay(5, retry_after=0.5, base=1.0, jitter=lambda: 0.0) == 8.0
    assert backoff_delay(3, base=0.0) == 0.0
    assert backoff_delay(3, retry_after=0.05, base=0.0) == 0.05


def test_the_stamina_caller_retries_only_retryable_provider_errors() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ProviderError("busy", category="server", retryable=True)
        return "ok"

    assert retrying(3, base=0.0)(flaky) == "ok" and len(calls) == 3

    def broken() -> str:
        calls.append(1)
        raise ProviderError("bad key", category="authentication", retryable=False)

    calls.clear()
    with pytest.raises(ProviderError):
        retrying(3, base=0.0)(broken)
    assert len(calls) == 1
