"""Shared HTTP plumbing of the text chat adapters: clients, SSE parsing, error classification.

Errors are classified here once, for every provider: the adapters turn any failure into a
``TargetError`` event through ``error_from_status`` or ``error_from_exception`` and never
retry by themselves (the runner owns retries, backoff and ``Retry-After``).
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from voxbench.core.events import TargetError
from voxbench.core.secrets import redact_text

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=60.0, write=30.0, pool=10.0)
"""Read timeout bounds the gap between two bytes of a stream, not the whole response."""

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""409/425 are transient conflicts; 529 is Anthropic's "overloaded"."""


def make_client(timeout: float | httpx.Timeout | None = None) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` with our timeouts (one per session, closed with it)."""
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    elif not isinstance(timeout, httpx.Timeout):
        timeout = httpx.Timeout(float(timeout), connect=min(10.0, float(timeout)))
    # trust_env=False: a user's HTTP(S)_PROXY must not capture requests to 127.0.0.1 fakes;
    # proxies for real providers are configured through base_url.
    return httpx.AsyncClient(timeout=timeout, trust_env=False)


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


def retry_after_from_headers(headers: httpx.Headers | dict[str, str]) -> float | None:
    """``Retry-After``, or OpenAI's ``retry-after-ms`` when present (milliseconds)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


def error_message_from_body(body: bytes | str) -> str:
    """The human message in a provider error body (OpenAI, Anthropic, Google, AWS shapes)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:300]
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


def error_from_status(
    status: int,
    headers: httpx.Headers | dict[str, str],
    body: bytes | str,
    *,
    provider: str,
    key_vars: tuple[str, ...] = (),
    url: str = "",
) -> TargetError:
    """Classify an HTTP error response into a ``TargetError`` that says what to fix."""
    detail = redact_text(error_message_from_body(body))
    where = f"{provider} HTTP {status}"
    if status == 429:
        return TargetError(
            category="rate_limit",
            message=f"{where}: rate limited ({detail})",
            retryable=True,
            retry_after=retry_after_from_headers(headers),
        )
    if status in (401, 403) or (status == 400 and "api key" in detail.lower()):
        # Google answers a bad key with 400 INVALID_ARGUMENT "API key not valid".
        keys = " or ".join(key_vars) if key_vars else "the provider's API key"
        what = "refused access" if status == 403 else "rejected the API key"
        return TargetError(
            category="authentication",
            message=f"{where}: {what} ({detail}); check {keys}",
        )
    if status == 404:
        return TargetError(
            category="not_found",
            message=f"{where}: not found at {redact_text(url)} ({detail}); check the model name "
            "and --base-url",
        )
    if status in (400, 413, 422):
        return TargetError(
            category="bad_request",
            message=f"{where}: the request was rejected ({detail}); check the model name and "
            "target options",
        )
    if status in RETRYABLE_STATUS or status >= 500:
        return TargetError(
            category="server",
            message=f"{where}: server error ({detail})",
            retryable=True,
            retry_after=retry_after_from_headers(headers),
        )
    return TargetError(category="bad_request", message=f"{where}: unexpected status ({detail})")


def error_from_exception(exc: BaseException, *, provider: str) -> TargetError:
    """Classify a transport failure (timeout, refused or dropped connection)."""
    name = type(exc).__name__
    detail = redact_text(str(exc)) or name
    if isinstance(exc, httpx.TimeoutException):
        return TargetError(
            category="timeout", message=f"{provider}: timed out ({name})", retryable=True
        )
    if isinstance(exc, httpx.ConnectError):
        return TargetError(
            category="connectivity",
            message=f"{provider}: cannot connect ({detail}); check --base-url and the network",
            retryable=True,
        )
    if isinstance(exc, httpx.TransportError):
        # RemoteProtocolError / ReadError: the peer closed the connection mid-response.
        return TargetError(
            category="connectivity",
            message=f"{provider}: connection dropped ({detail})",
            retryable=True,
        )
    return TargetError(category="protocol", message=f"{provider}: {name}: {detail}")


# -- Server-sent events ------------------------------------------------------------------


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event: its ``event`` name (``message`` by default) and ``data``."""

    event: str
    data: str
    id: str | None = None

    def json(self) -> Any:
        """The data parsed as JSON."""
        return json.loads(self.data)


class SSEDecoder:
    """Incremental decoder for ``text/event-stream`` (WHATWG HTML, "Server-sent events").

    Lines end in CRLF, LF or CR; a blank line dispatches; ``:`` starts a comment; ``data``
    lines of one event are joined with ``\\n``; one leading space after the colon is dropped.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None

    def feed(self, text: str) -> list[SSEEvent]:
        """Add decoded text; return the events it completed."""
        self._buffer += text
        out: list[SSEEvent] = []
        while True:
            cut = _line_end(self._buffer)
            if cut is None:
                return out
            end, skip = cut
            line = self._buffer[:end]
            self._buffer = self._buffer[end + skip :]
            event = self._line(line)
            if event is not None:
                out.append(event)

    def close(self) -> list[SSEEvent]:
        """End of stream: an event without its terminating blank line is dropped (per spec)."""
        self._buffer = ""
        return []

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            if not self._data and not self._event:
                return None
            event = SSEEvent(
                event=self._event or "message", data="\n".join(self._data), id=self._id
            )
            self._event, self._data = "", []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None


def _line_end(buffer: str) -> tuple[int, int] | None:
    """Where the first line of ``buffer`` ends and how long its terminator is."""
    lf, cr = buffer.find("\n"), buffer.find("\r")
    if cr == -1 or (lf != -1 and lf < cr):
        return None if lf == -1 else (lf, 1)
    if cr + 1 == len(buffer):
        return None  # a CR at the end may be the first half of a CRLF
    return cr, 2 if buffer[cr + 1] == "\n" else 1


async def iter_sse(response: httpx.Response) -> AsyncIterator[SSEEvent]:
    """The server-sent events of a streaming response, as they arrive."""
    decoder = SSEDecoder()
    async for text in response.aiter_text():
        for event in decoder.feed(text):
            yield event
    for event in decoder.close():
        yield event
