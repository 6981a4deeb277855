"""The benchmark's tools over plain HTTP+JSON, for an agent that calls HTTP endpoints.

- ``GET /tools`` → ``{"tools": [{name, description, parameters}]}`` (JSON-schema parameters,
  the agent's names after the mapping)
- ``POST /tools/NAME`` with the arguments as a JSON object → ``{"result": ...}``; the call
  blocks until the run has executed it against the benchmark's backend. Tool-level failures
  (a full session, a transient error the agent should retry) are results, as for any call.
- ``GET /instructions`` → the benchmark's instructions and knowledge base as
  ``text/markdown`` (for an agent that keeps its own prompt: ``--agent-owns-prompt``)

Every request must address the server (``Host``, else 421), come from no other web origin
(``Origin``, else 403) and carry the run's token (``Authorization: Bearer TOKEN``, else 401);
a POST's body must be ``application/json`` (else 415): see ``toolserver.guard``. A body that
is not a JSON object is answered 400, an unknown path 404, each with ``{"error": ...}``. The
server listens on 127.0.0.1 unless told another address.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import unquote

from voxbench.toolserver.bridge import ToolBridge
from voxbench.toolserver.guard import RequestGuard, new_token

MAX_BODY = 1 << 20


class HTTPToolServer:
    """``async with HTTPToolServer(bridge) as server: server.url``; every request must carry
    ``Authorization: Bearer {server.token}``."""

    def __init__(
        self,
        bridge: ToolBridge,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
    ) -> None:
        self.bridge = bridge
        self.host = host
        self.port = port
        self.token = token or new_token()
        self._server: asyncio.Server | None = None
        self._handlers: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}
        """Each open connection's task and writer (a kept-alive client is closed at stop)."""

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            # A kept-alive client's connection would otherwise wait in readline until the
            # loop cancels it (a logged traceback): closed here, its handler ends cleanly.
            for writer in list(self._handlers.values()):
                writer.close()
            if self._handlers:
                await asyncio.wait(list(self._handlers), timeout=2.0)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None

    async def __aenter__(self) -> HTTPToolServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers[task] = writer
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                method, path, headers, body, keep_alive = request
                guard = RequestGuard(self.host, self.port, self.token)
                refusal = guard.check(method, headers)
                extra: dict[str, str] = {}
                if refusal is not None:  # never reaches the tools
                    status, payload = refusal.status, {"error": refusal.message}
                    kind, extra = "application/json", refusal.headers
                else:
                    status, payload, kind = await self._route(method, path, body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                head = (
                    f"HTTP/1.1 {status} {_REASONS.get(status, 'OK')}\r\n"
                    f"Content-Type: {kind}\r\nContent-Length: {len(data)}\r\n"
                    + "".join(f"{k}: {v}\r\n" for k, v in extra.items())
                    + f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
                )
                writer.write(head.encode() + data)
                await writer.drain()
                if not keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # the loop is shutting down: a connection handler ends quietly
        finally:
            if task is not None:
                self._handlers.pop(task, None)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _route(self, method: str, path: str, body: bytes) -> tuple[int, Any, str]:
        json_type = "application/json"
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and path == "/tools":
            tools = [t.model_dump(mode="json") for t in self.bridge.tools()]
            return 200, {"tools": tools}, json_type
        if method == "GET" and path == "/instructions":
            return 200, self.bridge.instructions.encode(), "text/markdown; charset=utf-8"
        if path.startswith("/tools/"):
            if method != "POST":
                return 405, {"error": "use POST with the arguments as a JSON object"}, json_type
            name = unquote(path.removeprefix("/tools/"))
            try:
                arguments = json.loads(body or b"{}")
            except ValueError as exc:
                return 400, {"error": f"the body is not JSON: {exc}"}, json_type
            if not isinstance(arguments, dict):
                return 400, {"error": "the arguments must be a JSON object"}, json_type
            return 200, {"result": await self.bridge.call(name, arguments)}, json_type
        return 404, {"error": "GET /tools, POST /tools/NAME or GET /instructions"}, json_type


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    415: "Unsupported Media Type",
    421: "Misdirected Request",
}


async def _read_request(
    reader: asyncio.StreamReader,
) -> tuple[str, str, dict[str, str], bytes, bool] | None:
    line = await reader.readline()
    if not line:
        return None
    method, path, version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        key, _, value = header.decode("latin-1").partition(":")
        headers[key.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    if length > MAX_BODY:
        raise ValueError("request body too large")
    body = await reader.readexactly(length) if length else b""
    keep_alive = headers.get("connection", "").lower() != "close" and "1.1" in version
    return method.upper(), path, headers, body, keep_alive
