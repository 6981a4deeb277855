"""A small asyncio HTTP/1.1 server: the ground floor of the fake provider servers.

It speaks just enough HTTP/1.1 for API clients (httpx, botocore): keep-alive connections,
``Content-Length`` or chunked request bodies, and responses either whole
(``Content-Length``) or streamed with chunked transfer encoding. Faults need control that a
framework would hide: ``Responder.drop`` cuts the connection mid-stream and
``Responder.hang`` answers nothing until the client gives up.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import parse_qsl, unquote, urlsplit

from voxbench.testing.scripts import Fault, FaultPlan, Reply, Script, ScriptCall, ScriptMessage

log = logging.getLogger(__name__)

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}
MAX_BODY = 64 * 1024 * 1024


@dataclass
class Request:
    """One HTTP request as received."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes = b""

    def json(self) -> Any:
        """The body parsed as JSON (``None`` when it is empty or not JSON)."""
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None


class _Dropped(Exception):
    """The handler cut the connection on purpose."""


@dataclass
class Responder:
    """Writes one response; the handler calls exactly one of ``send`` / ``start`` / ``hang``."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    streaming: bool = False
    finished: bool = False
    keep_alive: bool = True
    head_only: bool = False
    """The request was ``HEAD``: a response carries its headers only, never a body (one
    would be read as the start of the next response on a kept-alive connection)."""
    _head: list[str] = field(default_factory=list)

    def _status_line(self, status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def send(
        self,
        status: int,
        body: bytes | str | dict[str, Any] | list[Any],
        *,
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """A whole response."""
        if isinstance(body, dict | list):
            data = json.dumps(body).encode()
            content_type = content_type or "application/json"
        else:
            data = body.encode() if isinstance(body, str) else body
        head = {
            "content-type": content_type or "text/plain; charset=utf-8",
            "content-length": str(len(data)),
            **(headers or {}),
        }
        self.writer.write(self._status_line(status, head) + (b"" if self.head_only else data))
        await self.writer.drain()
        self.finished = True

    async def send_head(self, status: int, headers: dict[str, str]) -> None:
        """The answer to a ``HEAD`` request: headers (``content-length`` included), no body."""
        self.writer.write(self._status_line(status, headers))
        await self.writer.drain()
        self.finished = True

    async def start(
        self, status: int, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        """Begin a streamed (chunked) response."""
        head = {
            "content-type": content_type,
            "transfer-encoding": "chunked",
            "cache-control": "no-cache",
            **(headers or {}),
        }
        self.writer.write(self._status_line(status, head))
        await self.writer.drain()
        self.streaming = True

    async def write(self, data: bytes | str) -> None:
        """One chunk of a streamed response (sent at once)."""
        payload = data.encode() if isinstance(data, str) else data
        if not payload:
            return
        self.writer.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
        await self.writer.drain()

    async def end(self) -> None:
        """Finish a streamed response."""
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()
        self.finished = True

    async def drop(self) -> None:
        """Cut the connection now, mid-response: the client sees an incomplete body."""
        with contextlib.suppress(Exception):
            await self.writer.drain()
        transport = self.writer.transport
        transport.abort()
        raise _Dropped()

    async def hang(self) -> None:
        """Answer nothing; return when the client closes the connection."""
        with contextlib.suppress(Exception):
            while await self.reader.read(65536):
                pass
        raise _Dropped()


class ListeningServer(abc.ABC):
    """A TCP server on 127.0.0.1 (port 0 picks a free port) that tracks its connections: the
    lifecycle every fake shares (``start``/``stop``, ``async with``, ``serve_forever``,
    ``in_thread``). A subclass speaks its protocol in ``_connection``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        """Listen."""
        self._server = await asyncio.start_server(self._connection, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and end every open connection."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def serve_forever(self) -> None:
        """Serve until cancelled (the CLI's foreground mode)."""
        if self._server is None:
            await self.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.stop()

    @contextlib.contextmanager
    def in_thread(self) -> Iterator[Self]:
        """Serve from a thread of its own, with its own event loop, until the block ends.

        For callers that block (a Ray driver waiting on its workers, a CLI run in the test's
        thread), and so the server's timing is not the client loop's: arrivals are stamped
        when they arrive, not when a busy client loop lets the server read them."""
        loop = asyncio.new_event_loop()
        started = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.start())
            started.set()
            loop.run_forever()

        thread = threading.Thread(target=serve, name=f"fake-{type(self).__name__}", daemon=True)
        thread.start()
        started.wait(10)
        try:
            yield self
        finally:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()

    @abc.abstractmethod
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection (``stop`` cancels it; add it to ``_connections``)."""


class HTTPServer(ListeningServer):
    """An HTTP/1.1 server: a fake answers each request in ``handle``."""

    @abc.abstractmethod
    async def handle(self, request: Request, responder: Responder) -> None:
        """Answer one request."""

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                responder = Responder(reader, writer, head_only=request.method == "HEAD")
                try:
                    await self.handle(request, responder)
                except _Dropped:
                    break
                except Exception as exc:  # a fake-server bug must show, not hang the client
                    log.exception("fake server failed on %s %s", request.method, request.path)
                    if responder.streaming:
                        break
                    if not responder.finished:
                        await responder.send(500, {"error": {"message": f"fake server: {exc}"}})
                if responder.streaming and not responder.finished:
                    await responder.end()
                if request.headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # stop() ends open connections by cancelling their handlers; asyncio would
            # report a cancelled handler as an error, so it ends quietly instead.
            pass
        finally:
            self._connections.discard(task)
            with contextlib.suppress(Exception):
                writer.close()


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _version = lines[0].split(" ", 2)
    except ValueError:
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        length = int(headers.get("content-length") or 0)
        if length > MAX_BODY:
            return None
        body = await reader.readexactly(length) if length else b""
    parts = urlsplit(target)
    return Request(
        method=method.upper(),
        path=unquote(parts.path),
        query=dict(parse_qsl(parts.query)),
        headers=headers,
        body=body,
    )


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # trailers are not used by our clients
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)


# -- scripted API servers ------------------------------------------------------------------


class ScriptedServer(HTTPServer):
    """A fake provider API: answers from a ``Script``, with injected latency and faults.

    ``ttfb_ms`` is the wait between a request and its first content (text or tool call);
    ``chunk_ms`` the spacing between content chunks. ``requests`` keeps every API request
    received, in order (tests read what the adapter sent).
    """

    url_path = ""
    """What follows the origin in ``url`` (the base URL an adapter takes)."""
    provider = "fake"

    def __init__(
        self,
        script: Script,
        *,
        faults: Sequence[str | Fault] = (),
        ttfb_ms: float = 0.0,
        chunk_ms: float = 0.0,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host, port)
        self.script = script
        self.faults = FaultPlan.parse(faults)
        self.ttfb = ttfb_ms / 1000
        self.chunk = chunk_ms / 1000
        self.api_key = api_key
        """When set, requests must carry it (else 401), as the real API checks keys."""
        self.requests: list[Request] = []
        self.arrivals: list[float] = []
        """``time.monotonic()`` of each API request, in order (rate-limit checks read it)."""

    @property
    def url(self) -> str:
        """The base URL to give the adapter (``--base-url``)."""
        return self.origin + self.url_path

    def begin(self, request: Request) -> tuple[int, list[Fault]]:
        """Count an API request; returns its number and the faults that hit it."""
        self.requests.append(request)
        self.arrivals.append(time.monotonic())
        number = len(self.requests)
        return number, self.faults.for_request(number)

    def busiest_window(self, seconds: float = 1.0) -> int:
        """The most API requests received within any ``seconds``-long window."""
        times, most, first = sorted(self.arrivals), 0, 0
        for last, t in enumerate(times):
            while t - times[first] >= seconds:
                first += 1
            most = max(most, last - first + 1)
        return most

    @abc.abstractmethod
    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The provider's error JSON for ``status``."""

    async def refuse(self, responder: Responder, faults: list[Fault]) -> bool:
        """Apply a fault that answers instead of the script (429, 500, 401, hang)."""
        for fault in faults:
            if fault.kind == "hang":
                await responder.hang()
            status = {"rate_limit": 429, "server_error": 500, "unauthorized": 401}.get(fault.kind)
            if status is not None:
                headers = {"retry-after": f"{fault.retry_after:g}"} if status == 429 else {}
                message = f"injected fault: {fault.kind}"
                await responder.send(status, self.error_body(status, message), headers=headers)
                return True
        return False

    async def check_key(self, presented: str | None, responder: Responder) -> bool:
        """401 unless ``presented`` is the expected key (when one is expected)."""
        if self.api_key is None or presented == self.api_key:
            return True
        await responder.send(401, self.error_body(401, "invalid API key"))
        return False

    def scripted_reply(self, conversation: Sequence[ScriptMessage], faults: list[Fault]) -> Reply:
        """Ask the script; ``malformed_args`` cuts each call's JSON short."""
        reply = self.script.reply(conversation)
        if any(f.kind == "malformed_args" for f in faults) and reply.calls:
            broken = tuple(
                ScriptCall(c.name, c.arguments, raw_arguments=c.arguments_json()[:-1] + ', "')
                for c in reply.calls
            )
            reply = Reply(text=reply.text, calls=broken)
        return reply

    async def wait_first(self) -> None:
        """Time to first content byte."""
        if self.ttfb > 0:
            await asyncio.sleep(self.ttfb)

    async def wait_between(self) -> None:
        """Spacing between content chunks."""
        if self.chunk > 0:
            await asyncio.sleep(self.chunk)


def split_text(text: str) -> list[str]:
    """Text as streamed pieces: one word with its trailing space each."""
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])


def split_json(raw: str, pieces: int = 3) -> list[str]:
    """A JSON string cut into ``pieces`` fragments (how argument deltas arrive)."""
    if len(raw) < pieces:
        return [raw]
    step = -(-len(raw) // pieces)
    return [raw[i : i + step] for i in range(0, len(raw), step)]


def count_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: words plus punctuation marks."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def describe_audio_part(data: Any, where: str) -> str:
    """A base64 WAV content part as the text a script sees (``[audio: 1.50 s]``).

    ``ValueError`` (the real APIs' 400) when ``data`` is not base64 of a readable WAV file.
    """
    import base64
    import binascii
    import io
    import wave

    try:
        raw = base64.b64decode(str(data), validate=True)
        with wave.open(io.BytesIO(raw)) as clip:
            seconds = clip.getnframes() / clip.getframerate()
    except (binascii.Error, wave.Error, EOFError, ZeroDivisionError) as exc:
        raise ValueError(f"{where}: audio data is not base64 of a WAV file ({exc})") from exc
    return f"[audio: {seconds:.2f} s]"
