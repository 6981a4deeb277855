"""What every realtime adapter shares: one websocket, one receive loop, one event queue.

A subclass opens the socket in ``start`` (``open_socket``), handles each message in
``on_message`` and sends through ``send_text`` / ``send_bytes``, the only ways out. The base
turns an unexpected close into ``TargetError(category="connectivity", fatal=True,
retryable=True)`` (the runner then reconnects with the conversation as history), makes
sends after a drop harmless no-ops, and turns a message that breaks the protocol into a
recorded ``TargetError(category="protocol")`` instead of a crash.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import itertools
import json
import logging
from collections import Counter, deque
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from voxbench.core.errors import ErrorCategory, ProtocolError, ProviderError
from voxbench.core.events import SessionEvent, TargetError
from voxbench.core.secrets import get_secret, redact_text, remember_secret
from voxbench.core.session import HistoryToolCall, Session
from voxbench.providers.http import classify_handshake

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""Providers send audio deltas far above websockets' 1 MiB default."""
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


class RealtimeSession(Session, abc.ABC):
    """Base of websocket speech-to-speech adapters."""

    provider = "realtime"
    """Short provider name used in messages."""
    key_env: tuple[str, ...] = ()
    """Env vars that may hold the API key, in order."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.options = dict(options or {})
        self.connect_timeout = float(self.options.get("connect_timeout", 15.0))
        self._queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._ws: ClientConnection | None = None
        self._receiver: asyncio.Task[None] | None = None
        self._closing = False
        self._dropped = False
        self._ids = itertools.count(1)
        self.unknown_events: Counter[str] = Counter()
        """Server messages of a type the adapter does not model, by type (logged once each)."""
        self._seen_ids: set[str] = set()
        self._seen_order: deque[str] = deque()

    # -- the Session surface shared by all adapters ---------------------------------------

    async def events(self) -> AsyncIterator[SessionEvent]:
        while True:
            yield await self._queue.get()

    async def close(self) -> None:
        self._closing = True
        if self._receiver is not None and not self._receiver.done():
            self._receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._receiver
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws.close(), timeout=2.0)
        self._ws = None

    # -- for subclasses -------------------------------------------------------------------

    def emit(self, event: SessionEvent) -> None:
        """Queue an event for the runner."""
        self._queue.put_nowait(event)

    def next_id(self, prefix: str) -> str:
        """A client-side id, unique within this session (``evt_voxbench_3``)."""
        return f"{prefix}_voxbench_{next(self._ids)}"

    def seen_before(self, key: str, window: int = 4096) -> bool:
        """Whether ``key`` (an event id) was already seen; remembers the last ``window``.

        Redelivered messages carry the id of the original, so handling each id once makes
        the adapter idempotent against duplicates.
        """
        if not key:
            return False
        if key in self._seen_ids:
            return True
        self._seen_ids.add(key)
        self._seen_order.append(key)
        if len(self._seen_order) > window:
            self._seen_ids.discard(self._seen_order.popleft())
        return False

    def api_key(self) -> str:
        """The key: ``options['api_key']``, else the first of ``key_env`` that is set."""
        explicit = self.options.get("api_key")
        if explicit:
            remember_secret(str(explicit))  # so redaction scrubs it like an env key
            return str(explicit)
        key = get_secret(*self.key_env, purpose=self.provider)
        assert key is not None
        return key

    def note_unknown(self, kind: str) -> None:
        """Record a server message type we do not model (never fatal)."""
        self.unknown_events[kind] += 1
        if self.unknown_events[kind] == 1:
            log.info("%s: ignoring server event type %r", self.provider, kind)

    async def open_socket(self, url: str, headers: dict[str, str] | None = None) -> None:
        """Connect; a refused or failed handshake becomes a classified ``ProviderError``."""
        host = urlsplit(url).hostname or ""
        try:
            self._ws = await asyncio.wait_for(
                connect(
                    url,
                    additional_headers=headers or {},
                    max_size=MAX_MESSAGE_BYTES,
                    proxy=None if host in _LOOPBACK else True,
                    open_timeout=self.connect_timeout,
                ),
                timeout=self.connect_timeout + 1.0,
            )
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            # The handshake is an HTTP exchange: one classification for HTTP and websockets.
            raise classify_handshake(
                exc, provider=self.provider, key_vars=self.key_env, url=url
            ) from exc

    async def recv_json(self) -> dict[str, Any]:
        """Read one JSON message before the receive loop starts (handshakes)."""
        assert self._ws is not None
        try:
            raw = await asyncio.wait_for(self._ws.recv(), self.connect_timeout)
        except TimeoutError as exc:
            raise ProviderError(
                f"{self.provider}: no answer from the server within "
                f"{self.connect_timeout:g} s during setup",
                category="timeout",
                retryable=True,
            ) from exc
        except ConnectionClosed as exc:
            raise ProviderError(
                redact_text(
                    f"{self.provider}: the server closed the connection during setup: {exc}"
                ),
                category=close_category(exc.rcvd.code if exc.rcvd else None),
                retryable=True,
            ) from exc
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ProtocolError(f"{self.provider}: setup message is not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ProtocolError(f"{self.provider}: setup message is not a JSON object")
        return data

    async def retire_socket(self) -> None:
        """Close the socket on purpose (a planned reconnect): its end is no drop to report.

        The receive loop stops first, so nothing the old connection says reaches the
        session; ``open_socket`` then ``start_receiving`` put a new one in its place."""
        receiver, self._receiver = self._receiver, None
        if receiver is not None and not receiver.done():
            receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await receiver
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), timeout=2.0)
        self._dropped = False

    def closed_by_server(self) -> bool:
        """The server ended the current connection with a close frame (it refused something)
        rather than the connection failing."""
        return self._ws is not None and self._ws.protocol.close_rcvd is not None

    def start_receiving(self) -> None:
        """Start the receive loop (after the handshake)."""
        self._receiver = asyncio.create_task(self._receive_loop())

    async def send_text(self, text: str) -> bool:
        """Send a text frame; False (and nothing raised) when the connection is gone."""
        return await self._send(text)

    async def send_bytes(self, data: bytes) -> bool:
        """Send a binary frame; False when the connection is gone."""
        return await self._send(data)

    @property
    def connected(self) -> bool:
        """The socket is open and usable."""
        return self._ws is not None and not self._dropped and not self._closing

    @abc.abstractmethod
    async def on_message(self, message: str | bytes) -> None:
        """Handle one server message (raise ``ProtocolError`` when it breaks the protocol)."""

    def on_closed(self, code: int | None, reason: str) -> TargetError:
        """The error to report for an unexpected close (providers refine the category)."""
        detail = f"code {code}" + (f", {reason}" if reason else "") if code else "no close frame"
        category = close_category(code)
        return TargetError(
            category=category,
            message=redact_text(f"{self.provider}: websocket closed unexpectedly ({detail})"),
            retryable=category is not ErrorCategory.AUTHENTICATION,  # a rejected key stays rejected
            fatal=True,
        )

    # -- internals ------------------------------------------------------------------------

    async def _send(self, payload: str | bytes) -> bool:
        if not self.connected:
            return False
        assert self._ws is not None
        try:
            await self._ws.send(payload)
        except ConnectionClosed:
            self._drop()
            return False
        return True

    def _drop(self) -> None:
        if self._dropped or self._closing:
            return
        self._dropped = True
        ws = self._ws
        code = ws.close_code if ws is not None else None
        reason = (ws.close_reason or "") if ws is not None else ""
        self.emit(self.on_closed(code, reason))

    async def _receive_loop(self) -> None:
        assert self._ws is not None
        try:
            async for message in self._ws:
                try:
                    await self.on_message(message)
                except ProtocolError as exc:
                    log.warning("%s: %s", self.provider, exc)
                    self.emit(
                        TargetError(
                            category=ErrorCategory.PROTOCOL,
                            message=redact_text(str(exc)),
                            retryable=True,
                        )
                    )
        except ConnectionClosed:
            pass
        # A clean close (1000) ends the iterator without raising: mid-session it is still a
        # drop the runner must hear about.
        self._drop()


def close_category(code: int | None) -> ErrorCategory:
    """Error category of a websocket close code."""
    if code in (1008, 4001, 4003):  # policy violation / auth-style application codes
        return ErrorCategory.AUTHENTICATION
    if code == 1011:
        return ErrorCategory.SERVER
    return ErrorCategory.CONNECTIVITY


def parse_tool_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Provider arguments → ``(arguments, parse_error)``; bad JSON never raises."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or raw == "":
        return {}, None
    if not isinstance(raw, str):
        return {}, f"arguments are a {type(raw).__name__}, not a JSON object"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"{exc.msg} at position {exc.pos}"
    if not isinstance(value, dict):
        return {}, f"arguments are a JSON {type(value).__name__}, not an object"
    return value, None


def tool_result_text(result: Any) -> str:
    """A tool result as the JSON text providers take."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def describe_history_call(call: HistoryToolCall) -> str:
    """A past tool call as one line of text, for protocols that cannot replay calls."""
    args = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    return f"[tool call {call.name}({args}) returned {tool_result_text(call.result)}]"
