"""Replay servers: published example exchanges, served on loopback over the real transport.

A fixture (``fixtures/*.json``) holds the server side of an exchange that a provider
published (its API reference, its docs, its SDK's test suite), with a ``source`` naming
where each message came from. The adapter under test connects to one of these servers
exactly as it would to the provider, so the check covers its transport and parsing, not a
hand-fed ``on_message``:

- ``WebsocketReplay``: ``steps`` in order, each ``{"after": TRIGGER, "send": [...]}``; when
  a client message matches the next step's trigger, that step's messages are sent. A
  trigger is ``connect`` (a new connection), ``type=VALUE`` (OpenAI-style events) or a
  dotted path that must be present in the client message (``setup``,
  ``realtimeInput.activityEnd``). Steps run on across reconnections.
- ``SSEReplay``: each HTTP request is answered by the next of ``responses`` as a
  ``text/event-stream`` (Anthropic-style named events, or OpenAI-style ``data:`` lines
  ending ``[DONE]``).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Literal, Self

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from voxbench.testing.http_server import HTTPServer, Request, Responder

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    """``fixtures/<name>.json``; every fixture names its ``source``."""
    path = FIXTURES / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if not data.get("source"):
        raise AssertionError(f"{path}: a replayed exchange must say where it came from (source)")
    return data


def server_messages(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    """Every server message a fixture sends, in order."""
    if "steps" in fixture:
        return [m for step in fixture["steps"] for m in step["send"]]
    return [m for response in fixture["responses"] for m in response]


def _matches(trigger: str, message: dict[str, Any]) -> bool:
    if "=" in trigger:
        key, _, value = trigger.partition("=")
        return message.get(key) == value
    node: Any = message
    for part in trigger.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


class WebsocketReplay:
    """A websocket server that plays a fixture's ``steps``."""

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        self.steps = list(steps)
        self.received: list[dict[str, Any]] = []
        """Every client message, across connections."""
        self.connections = 0
        self._server: Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def done(self) -> bool:
        """Every step was played."""
        return not self.steps

    async def __aenter__(self) -> Self:
        self._server = await serve(self._handle, "127.0.0.1", 0, max_size=None)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _play(self, ws: ServerConnection, message: dict[str, Any] | None) -> None:
        while self.steps:
            trigger = self.steps[0]["after"]
            hit = trigger == "connect" if message is None else _matches(trigger, message)
            if not hit:
                return
            for out in self.steps.pop(0)["send"]:
                await ws.send(json.dumps(out))
            message = {}  # a step after this one waits for the next client message

    async def _handle(self, ws: ServerConnection) -> None:
        self.connections += 1
        with contextlib.suppress(ConnectionClosed):
            await self._play(ws, None)
            async for raw in ws:
                message = json.loads(raw)
                self.received.append(message)
                await self._play(ws, message)


class SSEReplay(HTTPServer):
    """An HTTP server answering each request with the next recorded event stream."""

    def __init__(
        self, responses: list[list[dict[str, Any]]], style: Literal["anthropic", "openai"]
    ) -> None:
        super().__init__()
        self.responses = list(responses)
        self.style = style
        self.requests: list[dict[str, Any]] = []
        """Each request body, as JSON."""

    async def handle(self, request: Request, responder: Responder) -> None:
        self.requests.append(request.json())
        if not self.responses:
            await responder.send(500, {"error": "the recorded exchange has no more responses"})
            return
        await responder.start(200, "text/event-stream")
        for event in self.responses.pop(0):
            data = json.dumps(event)
            if self.style == "anthropic":
                await responder.write(f"event: {event['type']}\ndata: {data}\n\n")
            else:
                await responder.write(f"data: {data}\n\n")
        if self.style == "openai":
            await responder.write("data: [DONE]\n\n")
        await responder.end()
