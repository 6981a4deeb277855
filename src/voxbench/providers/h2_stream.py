"""One full-duplex HTTP/2 request over asyncio, on the ``h2`` protocol library.

Bedrock's bidirectional streams send the request body and read the response at the same
time on one HTTP/2 stream, which httpx's HTTP/2 cannot do. ``H2Stream`` opens a connection
(TLS with ALPN ``h2`` for ``https``, cleartext HTTP/2 with prior knowledge for ``http``, what
local fakes speak), sends the headers, then ``send`` writes body bytes under HTTP/2 flow
control while ``receive`` yields response body bytes as they arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from typing import Any
from urllib.parse import urlsplit

from voxbench.core.errors import PrerequisiteError, ProviderError
from voxbench.providers.aws_eventstream import INSTALL_HINT

_READ = 65536


class StreamClosed(Exception):
    """The stream or the connection ended; ``reason`` says how."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class H2Stream:
    """One HTTP/2 request whose body and response stream concurrently."""

    def __init__(self, url: str, *, connect_timeout: float = 15.0, provider: str = "http2") -> None:
        try:
            import h2.config
            import h2.connection
        except ImportError:
            raise PrerequisiteError(INSTALL_HINT) from None
        self.url = url
        self.provider = provider
        self.connect_timeout = connect_timeout
        self._conn = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        )
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pump: asyncio.Task[None] | None = None
        self._stream_id = 0
        self._status: asyncio.Future[tuple[int, dict[str, str]]] | None = None
        self._data: asyncio.Queue[bytes | StreamClosed] = asyncio.Queue()
        self._window = asyncio.Event()
        self._ended = False

    async def open(self, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
        """Connect, send the request headers; the response status and headers."""
        parts = urlsplit(self.url)
        secure = parts.scheme == "https"
        port = parts.port or (443 if secure else 80)
        context: ssl.SSLContext | None = None
        if secure:
            context = ssl.create_default_context()
            context.set_alpn_protocols(["h2"])
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(parts.hostname, port, ssl=context),
                self.connect_timeout,
            )
        except (OSError, TimeoutError) as exc:
            raise ProviderError(
                f"{self.provider}: cannot connect to {parts.hostname}:{port} ({exc})",
                category="connectivity",
                retryable=True,
            ) from exc
        tls = self._writer.get_extra_info("ssl_object") if self._writer is not None else None
        if tls is not None and tls.selected_alpn_protocol() != "h2":
            await self.close()
            raise ProviderError(
                f"{self.provider}: {parts.hostname} did not agree to HTTP/2 (ALPN)",
                category="connectivity",
                retryable=False,
            )
        self._conn.initiate_connection()
        self._stream_id = self._conn.get_next_available_stream_id()
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        authority = parts.netloc.rpartition("@")[2]
        request = [
            (":method", "POST"),
            (":scheme", parts.scheme),
            (":authority", authority),
            (":path", path),
            *((k.lower(), v) for k, v in headers.items() if k.lower() != "host"),
        ]
        self._conn.send_headers(self._stream_id, request, end_stream=False)
        self._status = asyncio.get_running_loop().create_future()
        await self._flush()
        self._pump = asyncio.create_task(self._read_loop())
        try:
            return await asyncio.wait_for(asyncio.shield(self._status), self.connect_timeout)
        except TimeoutError as exc:
            raise ProviderError(
                f"{self.provider}: no response headers within {self.connect_timeout:g} s",
                category="timeout",
                retryable=True,
            ) from exc

    async def send(self, data: bytes) -> None:
        """Write body bytes (waits for flow-control window); ``StreamClosed`` when gone."""
        view = memoryview(data)
        while view:
            if self._ended:
                raise StreamClosed("the stream has ended")
            window = min(
                self._conn.local_flow_control_window(self._stream_id),
                self._conn.max_outbound_frame_size,
            )
            if window <= 0:
                self._window.clear()
                await self._window.wait()
                continue
            self._conn.send_data(self._stream_id, bytes(view[:window]))
            view = view[window:]
            await self._flush()

    async def end(self) -> None:
        """End the request body."""
        if not self._ended:
            with contextlib.suppress(Exception):
                self._conn.end_stream(self._stream_id)
                await self._flush()

    async def receive(self) -> bytes:
        """The next response body bytes; ``StreamClosed`` once the response is over."""
        item = await self._data.get()
        if isinstance(item, StreamClosed):
            self._data.put_nowait(item)  # every later call sees the end too
            raise item
        return item

    async def close(self) -> None:
        """Close the connection (safe twice)."""
        self._ended = True
        self._window.set()
        if self._pump is not None and not self._pump.done():
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._conn.close_connection()
                self._writer.write(self._conn.data_to_send())
            self._writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._writer.wait_closed(), 2.0)
            self._writer = None

    async def _flush(self) -> None:
        assert self._writer is not None
        out = self._conn.data_to_send()
        if out:
            try:
                self._writer.write(out)
                await self._writer.drain()
            except (OSError, RuntimeError) as exc:
                self._finish(f"connection lost while sending ({exc})")
                raise StreamClosed(str(exc)) from exc

    def _finish(self, reason: str) -> None:
        if not self._ended:
            self._ended = True
            self._data.put_nowait(StreamClosed(reason))
        self._window.set()
        if self._status is not None and not self._status.done():
            self._status.set_exception(
                ProviderError(
                    f"{self.provider}: {reason} before the response headers",
                    category="connectivity",
                    retryable=True,
                )
            )

    async def _read_loop(self) -> None:
        import h2.events

        assert self._reader is not None
        reason = "the server closed the connection"
        try:
            while not self._ended:
                chunk = await self._reader.read(_READ)
                if not chunk:
                    break
                for event in self._conn.receive_data(chunk):
                    reason = self._on_event(event, h2.events) or reason
                await self._flush()
        except (OSError, StreamClosed) as exc:
            reason = f"connection lost ({exc})"
        except Exception as exc:  # an h2 protocol error
            reason = f"HTTP/2 protocol error: {type(exc).__name__}: {exc}"
        self._finish(reason)

    def _on_event(self, event: Any, kinds: Any) -> str | None:
        mine = getattr(event, "stream_id", self._stream_id) == self._stream_id
        if isinstance(event, kinds.ResponseReceived) and mine:
            headers = {str(k): str(v) for k, v in event.headers}
            status = int(headers.pop(":status", "0"))
            if self._status is not None and not self._status.done():
                self._status.set_result((status, headers))
        elif isinstance(event, kinds.DataReceived) and mine:
            self._conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if event.data:
                self._data.put_nowait(bytes(event.data))
        elif isinstance(event, kinds.WindowUpdated):
            self._window.set()
        elif isinstance(event, kinds.StreamEnded) and mine:
            self._finish("the server ended the response")
            return "the server ended the response"
        elif isinstance(event, kinds.StreamReset) and mine:
            reason = f"the server reset the stream (error code {event.error_code})"
            self._finish(reason)
            return reason
        elif isinstance(event, kinds.ConnectionTerminated):
            reason = f"the server ended the connection (GOAWAY, error code {event.error_code})"
            self._finish(reason)
            return reason
        return None
