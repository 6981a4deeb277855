"""The HTTP plumbing every provider client shares: one client policy, one error classification.

Every client (chat targets, judges, ASR/TTS engines, the full-duplex judge, realtime
handshakes) turns a failed response into a ``ProviderError`` through ``classify_status``,
a transport failure through ``classify_exception`` and a failed websocket connect through
``classify_handshake`` (its refusal is an HTTP answer), so a 401 reads the same everywhere
(``authentication``, naming the env var to fix) and a 429 carries its ``Retry-After``.
Targets wrap the result in a ``TargetError`` event (``target_error``); the runner owns their
retries. Server-sent events are decoded by ``httpx-sse``.
"""

from __future__ import annotations

import email.utils
import functools
import json
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal, overload

import h11
import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

from voxbench.core.errors import ErrorCategory, ProviderError
from voxbench.core.events import TargetError
from voxbench.core.secrets import redact_text
from voxbench.providers.ratelimit import Pacer, bucket_name, current_pacer, normalise_origin

__all__ = [
    "DEFAULT_TIMEOUT",
    "RETRYABLE_STATUS",
    "SSEError",
    "ServerSentEvent",
    "classify_exception",
    "classify_handshake",
    "classify_status",
    "default_ssl_context",
    "error_from_exception",
    "error_from_status",
    "error_message_from_body",
    "iter_sse",
    "make_http_client",
    "pace_request",
    "parse_retry_after",
    "raise_for_status",
    "report_rate_limited",
    "retry_after_from_headers",
    "target_error",
]

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=60.0, write=30.0, pool=10.0)
"""Read timeout bounds the gap between two bytes of a stream, not the whole response."""

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""409/425 are transient conflicts; 529 is Anthropic's "overloaded"."""

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _timeout(timeout: float | httpx.Timeout | None) -> httpx.Timeout:
    if timeout is None:
        return DEFAULT_TIMEOUT
    if isinstance(timeout, httpx.Timeout):
        return timeout
    return httpx.Timeout(float(timeout), connect=min(10.0, float(timeout)))


@overload
def make_http_client(
    timeout: float | httpx.Timeout | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    headers: dict[str, str] | None = None,
    sync: Literal[False] = False,
    max_connections: int | None = None,
) -> httpx.AsyncClient: ...


@overload
def make_http_client(
    timeout: float | httpx.Timeout | None = None,
    *,
    transport: httpx.BaseTransport | None = None,
    headers: dict[str, str] | None = None,
    sync: Literal[True],
    max_connections: int | None = None,
) -> httpx.Client: ...


def make_http_client(
    timeout: float | httpx.Timeout | None = None,
    *,
    transport: Any = None,
    headers: dict[str, str] | None = None,
    sync: bool = False,
    max_connections: int | None = None,
) -> httpx.AsyncClient | httpx.Client:
    """The HTTP client every provider uses (async by default, ``sync=True`` for a blocking one).

    Proxy policy, the same as the realtime websockets': ``HTTP(S)_PROXY`` / ``NO_PROXY``
    from the environment apply to remote providers, never to loopback (local servers and
    our fakes must not be captured by a corporate proxy). ``max_connections`` sizes the
    keep-alive pool for callers that keep that many requests in flight.
    """
    options: dict[str, Any] = {
        "timeout": _timeout(timeout),
        "headers": headers,
        "event_hooks": _blocking_pacing_hooks() if sync else _async_pacing_hooks(),
    }
    if max_connections is not None:
        # Keep every connection a caller runs in parallel alive (httpx keeps only 20).
        options["limits"] = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
    if transport is not None:
        options["transport"] = transport  # a test's transport: no proxies either
        options["trust_env"] = False
    else:
        options["trust_env"] = True
        options["mounts"] = {f"all://{host}": None for host in LOOPBACK_HOSTS}
        # Loading the CA bundle costs ~50 ms of CPU: once per process, not once per client.
        options["verify"] = default_ssl_context()
    return httpx.Client(**options) if sync else httpx.AsyncClient(**options)


def _paced_bucket(url: str | httpx.URL, headers: Mapping[str, str]) -> tuple[Pacer, str] | None:
    """The installed pacer and this request's bucket, when its endpoint is rate limited."""
    pacer = current_pacer()
    if pacer is None:
        return None
    origin = normalise_origin(url)
    if pacer.limit_for(origin) is None:
        return None
    return pacer, bucket_name(origin, headers)


async def pace_request(url: str | httpx.URL, headers: Mapping[str, str]) -> None:
    """Wait until the process's pacer lets a request to ``url`` with ``headers`` go."""
    paced = _paced_bucket(url, headers)
    if paced is not None:
        await paced[0].wait_async(paced[1])


def report_rate_limited(
    url: str | httpx.URL,
    headers: Mapping[str, str],
    response_headers: httpx.Headers | dict[str, str],
) -> None:
    """Tell the pacer a request to ``url`` got a 429 with these response headers."""
    paced = _paced_bucket(url, headers)
    seconds = retry_after_from_headers(response_headers)
    if paced is not None and seconds:
        paced[0].retry_after(paced[1], seconds)


def _async_pacing_hooks() -> dict[str, list[Any]]:
    """Wait for the pacer before each request; tell it each 429's Retry-After."""

    async def before(request: httpx.Request) -> None:
        await pace_request(request.url, request.headers)

    async def after(response: httpx.Response) -> None:
        _report_retry_after(response)

    return {"request": [before], "response": [after]}


def _blocking_pacing_hooks() -> dict[str, list[Any]]:
    def before(request: httpx.Request) -> None:
        paced = _paced_bucket(request.url, request.headers)
        if paced is not None:
            paced[0].wait_blocking(paced[1])

    return {"request": [before], "response": [_report_retry_after]}


def _report_retry_after(response: httpx.Response) -> None:
    if response.status_code == 429:
        report_rate_limited(response.request.url, response.request.headers, response.headers)


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The verifying TLS context every client shares (``SSL_CERT_FILE``/``_DIR`` honoured)."""
    return httpx.create_ssl_context(trust_env=True)


# -- Retry-After -----------------------------------------------------------------------------


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delay-seconds or an HTTP-date (RFC 9110 §10.2.3)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_after_from_headers(headers: httpx.Headers | dict[str, str] | None) -> float | None:
    """``Retry-After``, or OpenAI's ``retry-after-ms`` when present (milliseconds)."""
    if not headers:
        return None
    if not isinstance(headers, httpx.Headers):
        headers = httpx.Headers(headers)
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


# -- classification --------------------------------------------------------------------------


def error_message_from_body(body: bytes | bytearray | str) -> str:
    """The human message in a provider error body (OpenAI, Anthropic, Google, AWS shapes)."""
    text = bytes(body).decode("utf-8", "replace") if not isinstance(body, str) else body
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300]
    if isinstance(data, list) and data:  # Google sometimes wraps the error in a list
        data = data[0]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            message = err.get("message") or err.get("Message") or err.get("status")
            if message:
                return str(message)[:300]
        elif isinstance(err, str):
            return err[:300]
        if "message" in data:
            return str(data["message"])[:300]
    return text.strip()[:300]


def classify_status(
    status: int,
    headers: httpx.Headers | dict[str, str] | None = None,
    body: bytes | bytearray | str = b"",
    *,
    provider: str,
    key_vars: tuple[str, ...] = (),
    url: str = "",
) -> ProviderError:
    """Classify an HTTP error status (response or websocket handshake) into a ``ProviderError``."""
    detail = redact_text(error_message_from_body(body))
    where = f"{provider} HTTP {status}"

    def error(
        category: ErrorCategory, message: str, retryable: bool = False, wait: bool = False
    ) -> ProviderError:
        return ProviderError(
            message,
            category=category,
            retryable=retryable,
            retry_after=retry_after_from_headers(headers) if wait else None,
            status=status,
        )

    if status == 429:
        return error(ErrorCategory.RATE_LIMIT, f"{where}: rate limited ({detail})", True, True)
    if status in (401, 403) or (status == 400 and "api key" in detail.lower()):
        # Google answers a bad key with 400 INVALID_ARGUMENT "API key not valid".
        keys = " or ".join(key_vars) if key_vars else "the provider's API key"
        what = "refused access" if status == 403 else "rejected the API key"
        return error(ErrorCategory.AUTHENTICATION, f"{where}: {what} ({detail}); check {keys}")
    if status == 404:
        return error(
            ErrorCategory.NOT_FOUND,
            f"{where}: not found at {redact_text(url)} ({detail}); check the model name and "
            "--base-url",
        )
    if status in (400, 413, 422):
        return error(
            ErrorCategory.BAD_REQUEST,
            f"{where}: the request was rejected ({detail}); check the model name and options",
        )
    if status in RETRYABLE_STATUS or status >= 500:
        return error(ErrorCategory.SERVER, f"{where}: server error ({detail})", True, True)
    return error(ErrorCategory.BAD_REQUEST, f"{where}: unexpected status ({detail})")


def classify_exception(exc: BaseException, *, provider: str) -> ProviderError:
    """Classify a transport failure (timeout, refused or dropped connection)."""
    name = type(exc).__name__
    detail = redact_text(str(exc)) or name
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return ProviderError(
            f"{provider}: timed out ({name})", category=ErrorCategory.TIMEOUT, retryable=True
        )
    if isinstance(exc, httpx.ConnectError | ConnectionRefusedError):
        return ProviderError(
            f"{provider}: cannot connect ({detail}); check --base-url and the network",
            category=ErrorCategory.CONNECTIVITY,
            retryable=True,
        )
    if isinstance(exc, httpx.TransportError | OSError | h11.RemoteProtocolError):
        # RemoteProtocolError / ReadError: the peer closed the connection mid-response (h11's:
        # from ``providers.lean_http``, which httpx would have raised as its own).
        return ProviderError(
            f"{provider}: connection dropped ({detail})",
            category=ErrorCategory.CONNECTIVITY,
            retryable=True,
        )
    return ProviderError(
        f"{provider}: {name}: {detail}", category=ErrorCategory.PROTOCOL, retryable=False
    )


def classify_handshake(
    exc: BaseException, *, provider: str, key_vars: tuple[str, ...] = (), url: str = ""
) -> ProviderError:
    """Classify a websocket connect that failed (``websockets``, async or blocking client).

    A refused handshake is an HTTP answer: its status, headers and body go through
    ``classify_status`` like any response's (401 names ``key_vars``, 429 carries its
    ``Retry-After``). A handshake that never completed (refused connection, timeout, a
    malformed answer) is a retryable connectivity failure.
    """
    from websockets.exceptions import InvalidHandshake, InvalidStatus

    if isinstance(exc, InvalidStatus):
        response = exc.response
        return classify_status(
            response.status_code,
            {k.lower(): v for k, v in response.headers.raw_items()},
            response.body or b"",
            provider=f"{provider} websocket handshake",
            key_vars=key_vars,
            url=url,
        )
    if isinstance(exc, OSError | TimeoutError | InvalidHandshake):
        return ProviderError(
            redact_text(f"{provider}: cannot connect: {type(exc).__name__}: {exc}"),
            category=ErrorCategory.CONNECTIVITY,
            retryable=True,
        )
    return classify_exception(exc, provider=provider)


def raise_for_status(
    response: httpx.Response, *, provider: str, key_vars: tuple[str, ...] = ()
) -> None:
    """Raise the classified ``ProviderError`` unless ``response`` (already read) is a 2xx."""
    if response.is_success:
        return
    raise classify_status(
        response.status_code,
        response.headers,
        response.content,
        provider=provider,
        key_vars=key_vars,
        url=str(response.request.url),
    )


def target_error(error: ProviderError) -> TargetError:
    """The ``TargetError`` event a Session emits for a classified failure."""
    return TargetError(
        category=error.category,
        message=str(error),
        retryable=error.retryable,
        retry_after=error.retry_after,
    )


def error_from_status(
    status: int,
    headers: httpx.Headers | dict[str, str] | None,
    body: bytes | str,
    *,
    provider: str,
    key_vars: tuple[str, ...] = (),
    url: str = "",
) -> TargetError:
    """``classify_status`` as a ``TargetError`` event."""
    return target_error(
        classify_status(status, headers, body, provider=provider, key_vars=key_vars, url=url)
    )


def error_from_exception(exc: BaseException, *, provider: str) -> TargetError:
    """``classify_exception`` as a ``TargetError`` event."""
    return target_error(classify_exception(exc, provider=provider))


# -- Server-sent events ----------------------------------------------------------------------


class _LenientEventSource(EventSource):
    # Some gateways label a stream text/plain or application/json; the events are the same,
    # and the 2xx status was already checked, so the content type is not held against them.
    def _check_content_type(self) -> None:
        return None


async def iter_sse(response: httpx.Response) -> AsyncIterator[ServerSentEvent]:
    """The server-sent events of a streaming response, as they arrive (``httpx-sse``).

    An event without its terminating blank line at the end of the stream is dropped, per
    the WHATWG spec. The content type is not checked (gateways mislabel streams).
    """
    async for event in _LenientEventSource(response).aiter_sse():
        yield event
