"""Request pacing: the token bucket's reservations and every HTTP client honouring them."""

from __future__ import annotations

import asyncio

import pytest

from voxbench.providers.http import make_http_client
from voxbench.providers.ratelimit import (
    LocalPacer,
    RateLimit,
    TokenBucket,
    bucket_name,
    install_pacer,
    normalise_origin,
)
from voxbench.testing.openai_http import FakeOpenAIServer
from voxbench.testing.scripts import ListScript, Reply

_CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_bucket_spaces_requests_after_its_burst():
    bucket = TokenBucket(RateLimit(requests_per_second=4, burst=2), now=0.0)
    waits = [bucket.reserve(now=0.0) for _ in range(5)]
    assert waits == pytest.approx([0.0, 0.0, 0.25, 0.5, 0.75])
    # Idle time refills the burst, never more than the burst.
    assert bucket.reserve(now=10.0) == 0.0
    assert bucket.reserve(now=10.0) == 0.0
    assert bucket.reserve(now=10.0) == pytest.approx(0.25)


def test_retry_after_closes_the_bucket_and_queued_requests_leave_spaced():
    bucket = TokenBucket(RateLimit(requests_per_second=10), now=0.0)
    bucket.defer(2.0, now=0.0)
    waits = [bucket.reserve(now=0.5) for _ in range(3)]
    assert waits == pytest.approx([1.5, 1.6, 1.7])


def test_buckets_are_per_endpoint_and_key_fingerprint():
    origin = normalise_origin("https://API.example.com/v1/")
    assert origin == "https://api.example.com:443"
    a = bucket_name(origin, {"Authorization": "Bearer sk-one"})
    b = bucket_name(origin, {"Authorization": "Bearer sk-two"})
    assert a != b and "sk-one" not in a
    assert bucket_name(origin, {}) == f"{origin}|-"


async def test_http_clients_keep_a_paced_endpoint_under_its_limit():
    server = FakeOpenAIServer(ListScript([Reply(text="ok")] * 41))
    with server.in_thread():
        # The first request loads the SDK models the wire check uses: out of the measurement.
        async with make_http_client() as client:
            await client.post(f"{server.url}/chat/completions", json=_CHAT)
        server.arrivals.clear()
        limit = RateLimit(requests_per_second=20, burst=2)
        previous = install_pacer(LocalPacer({server.origin: limit}))
        try:
            async with make_http_client() as client:

                async def one() -> int:
                    response = await client.post(
                        f"{server.url}/chat/completions",
                        json=_CHAT,
                        headers={"Authorization": "Bearer sk-test"},
                    )
                    return response.status_code

                codes = await asyncio.gather(*(one() for _ in range(40)))
        finally:
            install_pacer(previous)
    assert codes == [200] * 40
    # 20 per second plus the burst (plus one for a client woken late from its slot on a
    # loaded machine): the fake's busiest second holds no more.
    assert server.busiest_window(1.0) <= 20 + 2 + 1
    # Paced, the 40 arrivals span about (40 - burst) / rate = 1.9 s (unpaced: ~0.1 s); a first
    # arrival delayed by a loaded host shortens the span it is measured over, hence 90%.
    assert server.arrivals[-1] - server.arrivals[0] >= 0.9 * (40 - 2) / 20


async def test_unpaced_endpoints_are_not_slowed():
    async with FakeOpenAIServer(ListScript([Reply(text="ok")] * 20)) as server:
        previous = install_pacer(LocalPacer({"https://elsewhere.example:443": RateLimit(1)}))
        try:
            async with make_http_client() as client:
                await asyncio.gather(
                    *(
                        client.post(
                            f"{server.url}/chat/completions",
                            json={"model": "m", "messages": [{"role": "user", "content": "x"}]},
                        )
                        for _ in range(20)
                    )
                )
        finally:
            install_pacer(previous)
    assert server.busiest_window(1.0) == 20
