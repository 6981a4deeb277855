"""A lean HTTP/1.1 client for hot JSON POSTs: kept-alive connections on asyncio streams.

A task run sends thousands of small ``/chat/completions`` requests to one endpoint with
exactly ``max_concurrency`` of them in flight. Through httpx each one costs ~0.6–0.8 ms of
event-loop CPU (request and response models, the connection pool scanning every connection,
anyio wrappers, trace hooks); through h11's state machine ~0.1 ms; here less: the request
head is made once (validated by h11) and written with the body in one ``write``, the
response head is read to its blank line and split, the body read by its Content-Length,
chunk by chunk, or to the connection's end (``Connection: close``, HTTP/1.0), and the
connection goes back to a LIFO list of idle ones.

What it does the same as ``providers.http``'s clients: the same error classification
(``classify_status`` for non-2xx answers with their ``Retry-After``, ``classify_exception``
for timeouts and refused or dropped connections), the process's pacer (rate limits) before
each request and after each 429, TLS with the shared verifying context for ``https``.

What it does not do, so callers use httpx where it matters (``lean_http_applies``): proxies
(any ``HTTP(S)_PROXY``/``ALL_PROXY`` set, for a non-loopback host), HTTP/2, redirects,
cookies, test transports. Its timeout bounds the whole request (httpx's bounds each read).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import zlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import h11

from voxbench.core.errors import ProviderError
from voxbench.providers.deadlines import deadline
from voxbench.providers.http import (
    LOOPBACK_HOSTS,
    classify_exception,
    classify_status,
    default_ssl_context,
    pace_request,
    report_rate_limited,
)

PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")
"""Environment variables (either case) that send a remote request through a proxy."""
CONNECT_TIMEOUT = 10.0
"""Seconds a new connection may take at most (``providers.http.DEFAULT_TIMEOUT``'s)."""
READ_SIZE = 65536
WRITE_APART = 256 * 1024
"""A body part at least this large is written on its own, not joined with the rest: joining
copies it (~0.1–0.2 ms for a 20 s clip's 0.85 MB of base64, in fresh memory), and so does
the transport's slicing of a bytes object a send took only part of; below it, the extra
send calls (and packets) of separate writes cost more than the copy."""


def lean_http_applies(url: str) -> bool:
    """Whether ``LeanHTTP`` can send to ``url``: http(s), and no proxy applies to it."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    if host in LOOPBACK_HOSTS:
        return True  # our clients never send loopback requests through a proxy
    return not any(os.environ.get(v) or os.environ.get(v.upper()) for v in PROXY_VARS)


class _Connection:
    __slots__ = ("reader", "writer", "keep")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.keep = False
        """Whether its last exchange completed and left it open (no ``Connection: close``)."""

    @property
    def reusable(self) -> bool:
        """Idle, its last exchange complete, and not closed by the server meanwhile."""
        return self.keep and not self.reader.at_eof() and not self.writer.is_closing()

    def close(self) -> None:
        self.writer.close()


class LeanHTTP:
    """POSTs encoded JSON bodies to one URL over at most ``connections`` kept-alive ones.

    ``post`` returns the parsed JSON answer of a 2xx response, else raises the classified
    ``ProviderError`` (named ``provider``; a 401 names ``key_vars``).
    """

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        connections: int,
        timeout: float,
        provider: str,
        key_vars: tuple[str, ...] = (),
    ) -> None:
        parts = urlsplit(url)
        self.url = url
        self.provider = provider
        self.key_vars = key_vars
        self.timeout = timeout
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        default_port = self._port == (443 if self._https else 80)
        host = self._host if ":" not in self._host else f"[{self._host}]"
        authority = host if default_port else f"{host}:{self._port}"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        fixed = [
            ("host", authority),
            ("accept", "*/*"),
            ("accept-encoding", "gzip, deflate"),
            ("user-agent", "voxbench"),
            *((k.lower(), v) for k, v in headers.items()),
        ]
        # Validated once here (a bad character in a key fails now, as h11 would per request);
        # each request then reuses the checked bytes (h11's ``_parsed``: ~20 µs a request).
        checked = h11.Request(method="POST", target=target, headers=fixed)
        self._head = b"POST %s HTTP/1.1\r\n%scontent-length: " % (
            checked.target,
            b"".join(b"%s: %s\r\n" % (name, value) for name, value in checked.headers.raw_items()),
        )
        """The request head up to the body's length (the same for every request)."""
        self._key_headers = dict(headers)
        """What the pacer reads (the key's fingerprint names the bucket)."""
        self._limit = max(1, connections)
        self._open = 0
        self._idle: list[_Connection] = []
        self._waiters: list[asyncio.Future[_Connection | None]] = []
        self._closed = False

    async def post(self, body: bytes | tuple[bytes, ...]) -> Any:
        """POST ``body`` (or its parts, joined with the request head in one copy); the JSON
        answer, or a classified ``ProviderError``."""
        await pace_request(self.url, self._key_headers)
        try:
            async with deadline(self.timeout):
                status, headers, content = await self._exchange(body)
        except (OSError, TimeoutError, h11.ProtocolError, asyncio.IncompleteReadError) as exc:
            raise classify_exception(exc, provider=self.provider) from exc
        if not 200 <= status < 300:
            if status == 429:
                report_rate_limited(self.url, self._key_headers, headers)
            raise classify_status(
                status,
                headers,
                content,
                provider=self.provider,
                key_vars=self.key_vars,
                url=self.url,
            )
        try:
            return json.loads(content)
        except ValueError as exc:
            text = content.decode("utf-8", "replace")
            raise ProviderError(
                f"{self.provider}: response is not JSON: {text[:200]!r}",
                category="protocol",
                retryable=True,
            ) from exc

    async def _exchange(self, body: bytes | tuple[bytes, ...]) -> tuple[int, dict[str, str], bytes]:
        connection = await self._acquire()
        done = False
        try:
            result = await self._send(connection, body)
            done = True
            return result
        finally:
            self._release(connection, reusable=done and connection.reusable)

    async def _send(
        self, connection: _Connection, body: bytes | tuple[bytes, ...]
    ) -> tuple[int, dict[str, str], bytes]:
        connection.keep = False
        parts = (body,) if isinstance(body, bytes) else body
        length = b"%d\r\n\r\n" % sum(len(part) for part in parts)
        if len(parts) < 3 or len(parts[1]) < WRITE_APART:
            connection.writer.write(b"".join((self._head, length, *parts)))
        else:  # a large clip's base64 written as it is (a view: a short send copies no tail)
            connection.writer.write(b"".join((self._head, length, parts[0])))
            for part in parts[1:]:
                connection.writer.write(memoryview(part))
        reader = connection.reader
        try:
            status, headers, version = await _response_head(reader)
            while 100 <= status < 200:  # informational: the final response follows
                status, headers, version = await _response_head(reader)
            close = headers.get("connection", "").lower() == "close" or version == b"HTTP/1.0"
            if "chunked" in headers.get("transfer-encoding", "").lower():
                content = await _chunked(reader)
            elif "content-length" in headers:
                content = await reader.readexactly(int(headers["content-length"]))
            elif status in (204, 304):
                content = b""
            else:  # the body ends with the connection
                content, close = await reader.read(), True
        except asyncio.IncompleteReadError as exc:
            raise h11.RemoteProtocolError("the server closed the connection mid-response") from exc
        except (ValueError, asyncio.LimitOverrunError) as exc:
            raise h11.RemoteProtocolError(f"a malformed response ({exc})") from exc
        connection.keep = not close
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            try:
                # wbits 47: zlib or gzip framing, detected from the header.
                content = zlib.decompress(content, 47 if encoding != "deflate" else 15)
            except zlib.error as exc:
                raise h11.RemoteProtocolError(f"a {encoding} body that does not decode") from exc
        elif encoding != "identity":
            raise h11.RemoteProtocolError(f"an unsupported content-encoding: {encoding}")
        return status, headers, content

    async def _acquire(self) -> _Connection:
        if self._closed:
            raise RuntimeError("the client is closed")
        while self._idle:
            connection = self._idle.pop()
            if connection.reusable:
                return connection
            self._discard(connection, wake=False)  # its slot is this request's
        if self._open >= self._limit:
            waiter: asyncio.Future[_Connection | None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                handed = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():  # handed over as we were cancelled
                    given = waiter.result()
                    if given is None:
                        self._wake(None)  # the free slot goes to the next waiter
                    else:
                        self._release(given, reusable=given.reusable)
                raise
            if handed is not None:
                return handed
            # A connection was discarded: its slot is ours to open.
        self._open += 1
        try:
            async with asyncio.timeout(min(CONNECT_TIMEOUT, self.timeout)):
                reader, writer = await asyncio.open_connection(
                    self._host,
                    self._port,
                    ssl=default_ssl_context() if self._https else None,
                    limit=READ_SIZE,
                )
        except BaseException:
            self._open -= 1
            self._wake(None)
            raise
        return _Connection(reader, writer)

    def _release(self, connection: _Connection, *, reusable: bool) -> None:
        if not reusable or self._closed:
            self._discard(connection)
            return
        if not self._wake(connection):
            self._idle.append(connection)

    def _discard(self, connection: _Connection, *, wake: bool = True) -> None:
        connection.close()
        self._open -= 1
        if wake:
            self._wake(None)

    def _wake(self, connection: _Connection | None) -> bool:
        """Hand ``connection`` (or, None, a free slot) to the first waiter; False: none."""
        while self._waiters:
            waiter = self._waiters.pop(0)
            if not waiter.done():
                waiter.set_result(connection)
                return True
        return False

    async def aclose(self) -> None:
        """Close every connection."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
        for connection in idle:
            with contextlib.suppress(OSError):  # a peer that already went
                await connection.writer.wait_closed()


async def _response_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """A response's status, headers (names lower-cased; a repeated one: the last) and HTTP
    version, read up to the blank line."""
    lines = (await reader.readuntil(b"\r\n\r\n"))[:-4].split(b"\r\n")
    version, _, rest = lines[0].partition(b" ")
    if not version.startswith(b"HTTP/1."):
        raise ValueError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    headers = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            raise ValueError(f"a malformed header line: {line[:80]!r}")
        headers[name.decode("latin-1").lower()] = value.strip().decode("latin-1")
    return int(rest[:3]), headers, version


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    """A chunked body (its trailers read and dropped)."""
    chunks: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass  # a trailer
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise ValueError("a chunk not followed by CRLF")
