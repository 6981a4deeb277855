"""The shared HTTP plumbing: SSE decoding (httpx-sse), Retry-After, the one error classification."""

from __future__ import annotations

import email.utils
import random
from collections.abc import AsyncIterator

import httpx
import pytest

from voxbench.providers.http import (
    classify_handshake,
    error_from_exception,
    error_from_status,
    iter_sse,
    parse_retry_after,
)

RECORDED_STREAM = (
    ": keep-alive\r\n"
    'event: message_start\r\ndata: {"type": "message_start"}\r\n\r\n'
    "data: one\r\ndata:two\r\n\r\n"
    "data: x\rdata: y\r\r"
    'id: 7\nevent: delta\ndata: {"text": "caf\u00e9 \u2014 \U0001f600"}\n\n'
    "data: [DONE]\n\n"
    "data: unfinished"
).encode()
EXPECTED_EVENTS = [
    ("message_start", '{"type": "message_start"}', ""),
    ("message", "one\ntwo", ""),
    ("message", "x\ny", ""),
    ("delta", '{"text": "caf\u00e9 \u2014 \U0001f600"}', "7"),
    ("message", "[DONE]", "7"),
]


async def _events(chunks: list[bytes]) -> list[tuple[str, str, str]]:
    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())
    return [(e.event, e.data, e.id) async for e in iter_sse(response)]


async def test_sse_events_are_identical_under_2000_random_chunkings() -> None:
    rng = random.Random(20240611)
    assert await _events([RECORDED_STREAM]) == EXPECTED_EVENTS
    for _ in range(2000):
        cuts = sorted(rng.sample(range(1, len(RECORDED_STREAM)), rng.randint(1, 40)))
        edges = [0, *cuts, len(RECORDED_STREAM)]
        chunks = [RECORDED_STREAM[a:b] for a, b in zip(edges, edges[1:], strict=False)]
        assert await _events(chunks) == EXPECTED_EVENTS, chunks


async def test_a_mislabelled_stream_still_decodes() -> None:
    response = httpx.Response(200, headers={"content-type": "text/plain"}, content=b"data: hi\n\n")
    assert [e.data async for e in iter_sse(response)] == ["hi"]


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 0 ") == 0.0
    date = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after(date, now=1_000_000) == pytest.approx(30.0)
    assert parse_retry_after(email.utils.formatdate(10, usegmt=True), now=1_000) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


@pytest.mark.parametrize(
    ("status", "headers", "category", "retryable", "retry_after"),
    [
        (429, {"retry-after": "3"}, "rate_limit", True, 3.0),
        (429, {"retry-after-ms": "250"}, "rate_limit", True, 0.25),
        (500, {}, "server", True, None),
        (503, {"retry-after": "2"}, "server", True, 2.0),
        (529, {}, "server", True, None),
        (400, {}, "bad_request", False, None),
        (401, {}, "authentication", False, None),
        (403, {}, "authentication", False, None),
        (404, {}, "not_found", False, None),
    ],
)
def test_status_classification(
    status: int, headers: dict, category: str, retryable: bool, retry_after: float | None
) -> None:
    error = error_from_status(
        status, headers, b'{"error": {"message": "nope"}}', provider="p", key_vars=("P_KEY",)
    )
    assert (error.category, error.retryable, error.retry_after) == (
        category,
        retryable,
        retry_after,
    )
    assert "nope" in error.message


def test_messages_say_what_to_fix() -> None:
    auth = error_from_status(401, {}, b"{}", provider="groq", key_vars=("GROQ_API_KEY",))
    assert "GROQ_API_KEY" in auth.message
    google = error_from_status(
        400, {}, b'{"error": {"message": "API key not valid."}}', provider="gemini",
        key_vars=("GEMINI_API_KEY",),
    )  # fmt: skip
    assert google.category == "authentication" and "GEMINI_API_KEY" in google.message
    missing = error_from_status(
        404, {}, b"", provider="p", url="http://127.0.0.1:9/v1/chat/completions"
    )
    assert "--base-url" in missing.message


def test_secrets_never_reach_error_messages() -> None:
    body = b'{"error": {"message": "Incorrect API key provided: sk-abcdefghijklmnopqrstuvwx"}}'
    error = error_from_status(401, {}, body, provider="openai", key_vars=("OPENAI_API_KEY",))
    assert "sk-abcdefghijklmnop" not in error.message


def test_transport_failures_are_retryable() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:9")
    cases = {
        httpx.ReadTimeout("t", request=request): "timeout",
        httpx.ConnectError("refused", request=request): "connectivity",
        httpx.RemoteProtocolError("peer closed", request=request): "connectivity",
    }
    for exc, category in cases.items():
        error = error_from_exception(exc, provider="p")
        assert error.category == category and error.retryable


def test_a_refused_websocket_handshake_is_classified_as_its_http_status() -> None:
    from websockets.datastructures import Headers
    from websockets.exceptions import InvalidMessage, InvalidStatus
    from websockets.http11 import Response

    def refused(status: int, headers: dict[str, str] | None = None) -> InvalidStatus:
        return InvalidStatus(Response(status, "", Headers(headers or {}), b'{"error": "no"}'))

    limited = classify_handshake(
        refused(429, {"Retry-After": "7"}), provider="deepgram/nova-3", key_vars=("K",)
    )
    assert (limited.category, limited.retryable, limited.retry_after) == ("rate_limit", True, 7.0)
    denied = classify_handshake(refused(401), provider="deepgram/nova-3", key_vars=("K",))
    assert denied.category == "authentication" and not denied.retryable
    assert "deepgram/nova-3 websocket handshake HTTP 401" in str(denied) and "check K" in str(
        denied
    )
    assert classify_handshake(refused(404), provider="p").category == "not_found"
    assert classify_handshake(refused(503), provider="p").retryable
    for never_done in (ConnectionRefusedError("refused"), TimeoutError(), InvalidMessage("bad")):
        error = classify_handshake(never_done, provider="p")
        assert (error.category, error.retryable) == ("connectivity", True)
