"""The one retry policy."""

from __future__ import annotations

import pytest

from voxbench.core.errors import ProviderError
from voxbench.providers import backoff
from voxbench.providers.backoff import PROVIDER_CALL, TURN, RetryPolicy, backoff_delay, retrying


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


async def test_a_policy_call_retries_retryable_errors_and_reports_each_retry() -> None:
    calls: list[int] = []
    retried: list[tuple[int, str, float]] = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ProviderError(
                "slow down", category="rate_limit", retryable=True, retry_after=0.01
            )
        return "ok"

    policy = RetryPolicy(attempts=3)
    result = await policy.call(flaky, on_retry=lambda n, e, d: retried.append((n, str(e), d)))
    assert result == "ok" and len(calls) == 3
    # Waiting is off in tests, the provider's Retry-After is still the floor.
    assert retried == [(1, "slow down", 0.01), (2, "slow down", 0.01)]


@pytest.mark.parametrize(
    "error",
    [
        ProviderError("bad request", category="bad_request", retryable=False),
        # A rejected key fails every attempt alike, whatever its flag says.
        ProviderError("bad key", category="authentication", retryable=True),
        ValueError("a bug"),
    ],
)
async def test_a_policy_call_does_not_retry_what_cannot_succeed(error: Exception) -> None:
    calls: list[int] = []

    async def failing() -> None:
        calls.append(1)
        raise error

    with pytest.raises(type(error)):
        await RetryPolicy(attempts=5).call(failing)
    assert len(calls) == 1


async def test_a_policy_call_raises_the_last_failure_when_attempts_run_out() -> None:
    calls: list[int] = []

    async def down() -> None:
        calls.append(1)
        raise ProviderError(f"down {len(calls)}", category="server", retryable=True)

    with pytest.raises(ProviderError, match="down 2"):
        await PROVIDER_CALL.with_retries(1).call(down)
    assert len(calls) == 2


def test_policy_delays_follow_the_one_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backoff, "WAIT", True)
    policy = RetryPolicy(attempts=9, base=1.0, cap=8.0)
    assert all(0.5 <= policy.delay(3) / 4 <= 1.0 for _ in range(50))
    assert all(4.0 <= policy.delay(9) <= 8.0 for _ in range(50))
    assert policy.delay(1, retry_after=12.0) == 12.0
    assert (TURN.with_retries(0).attempts, TURN.with_retries(5).retries) == (1, 5)
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)
