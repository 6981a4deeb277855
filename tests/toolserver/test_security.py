"""Issue 32 item 2: ``tools serve --http`` answers only the run's agent.

A web page in the user's browser can send a cross-origin ``text/plain`` POST without a
preflight, and a DNS-rebinding page can name any Host: neither may reach the tools. Every
request needs the run's bearer token; the server binds loopback unless told.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from voxbench.core.benchmark import Benchmark
from voxbench.toolserver.bridge import NO_CONVERSATION, ToolBridge
from voxbench.toolserver.guard import TOKEN_ENV, RequestGuard, is_loopback, new_token
from voxbench.toolserver.http_server import HTTPToolServer
from voxbench.toolserver.mapping import ToolMapping


class CountingBridge(ToolBridge):
    """A bridge that remembers every call that reached it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reached: list[str] = []

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        self.reached.append(name)
        return await super().call(name, arguments)


@pytest.fixture
async def served(smoke: Benchmark) -> AsyncIterator[tuple[HTTPToolServer, CountingBridge]]:
    bridge = CountingBridge(ToolMapping(list(smoke.tools)), instructions="the instructions")
    async with HTTPToolServer(bridge) as server:
        yield server, bridge


async def test_a_cross_origin_text_plain_post_is_refused(served) -> None:
    server, bridge = served
    async with httpx.AsyncClient(trust_env=False) as http:
        # What a page at evil.example (DNS-rebound to 127.0.0.1) sends: no preflight needed.
        rebound = await http.post(
            f"{server.url}/tools/end_session",
            content=b"{}",
            headers={"Content-Type": "text/plain", "Origin": "http://evil.example",
                     "Host": "evil.example"},
        )  # fmt: skip
        # The same page posting to 127.0.0.1 directly: the Host is right, the Origin is not.
        cross = await http.post(
            f"{server.url}/tools/end_session",
            content=b"{}",
            headers={"Content-Type": "text/plain", "Origin": "http://evil.example",
                     "Authorization": f"Bearer {server.token}"},
        )  # fmt: skip
        opaque = await http.post(
            f"{server.url}/tools/end_session",
            content=b"{}",
            headers={"Content-Type": "text/plain", "Origin": "null"},
        )
    assert rebound.status_code == 421, rebound.text
    assert cross.status_code == 403 and "cross-origin" in cross.json()["error"]
    assert opaque.status_code == 403
    assert bridge.reached == []


async def test_a_bare_end_session_without_the_token_is_refused(served) -> None:
    server, bridge = served
    async with httpx.AsyncClient(trust_env=False) as http:
        bare = await http.post(f"{server.url}/tools/end_session", json={})
        wrong = await http.post(
            f"{server.url}/tools/end_session", json={}, headers={"Authorization": "Bearer nope"}
        )
        listed = await http.get(f"{server.url}/tools")
        instructions = await http.get(f"{server.url}/instructions")
    for response in (bare, wrong, listed, instructions):
        assert response.status_code == 401, response.text
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert TOKEN_ENV in response.json()["error"]
    assert bridge.reached == []


async def test_the_agent_with_the_token_is_served(served) -> None:
    server, bridge = served
    auth = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(trust_env=False, headers=auth) as http:
        listed = await http.get(f"{server.url}/tools")
        called = await http.post(f"{server.url}/tools/end_session", json={})
        via_localhost = await http.get(
            f"{server.url}/tools", headers={"Host": f"localhost:{server.port}"}
        )
        same_origin = await http.post(
            f"{server.url}/tools/end_session",
            json={},
            headers={"Origin": f"http://127.0.0.1:{server.port}"},
        )
        text_plain = await http.post(
            f"{server.url}/tools/end_session",
            content=b"{}",
            headers={"Content-Type": "text/plain"},
        )
    assert listed.status_code == 200 and listed.json()["tools"]
    assert called.status_code == 200 and called.json()["result"]["error"] == NO_CONVERSATION
    assert via_localhost.status_code == 200 and same_origin.status_code == 200
    assert text_plain.status_code == 415  # a JSON body must say so
    assert bridge.reached == ["end_session", "end_session"]


async def test_the_server_binds_loopback_by_default(served) -> None:
    server, _ = served
    assert server.host == "127.0.0.1"
    assert server._server is not None
    assert all(is_loopback(s.getsockname()[0]) for s in server._server.sockets)


def test_each_server_gets_its_own_token_unless_one_is_chosen(monkeypatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    first, second = new_token(), new_token()
    assert first != second and len(first) >= 24
    monkeypatch.setenv(TOKEN_ENV, "chosen")
    assert new_token() == "chosen"


@pytest.mark.parametrize(
    ("bind", "host", "origin", "status"),
    [
        ("127.0.0.1", "127.0.0.1:9", None, None),
        ("127.0.0.1", "[::1]:9", None, None),
        ("127.0.0.1", "127.0.0.1:10", None, 421),  # another port
        ("127.0.0.1", "", None, 421),
        ("127.0.0.1", "127.0.0.1:9", "http://localhost:9", None),
        ("127.0.0.1", "127.0.0.1:9", "https://127.0.0.1:9", 403),
        ("0.0.0.0", "bench-host.lan:9", None, None),  # told to listen everywhere
        ("0.0.0.0", "bench-host.lan:9", "http://bench-host.lan:9", None),
        ("0.0.0.0", "bench-host.lan:9", "http://evil.example:9", 403),
        ("10.0.0.5", "10.0.0.5:9", None, None),
        ("10.0.0.5", "evil.example:9", None, 421),
    ],
)
def test_the_guard_by_bind_address(bind: str, host: str, origin: str | None, status) -> None:
    headers = {"host": host, "authorization": "Bearer t"}
    if origin is not None:
        headers["origin"] = origin
    refusal = RequestGuard(bind, 9, "t").check("GET", headers)
    assert (refusal.status if refusal else None) == status


async def test_a_kept_alive_client_at_shutdown_logs_no_traceback(smoke: Benchmark, caplog) -> None:
    """Issue 32 item 9: a connection the client keeps open is closed at stop, quietly."""
    bridge = ToolBridge(ToolMapping(list(smoke.tools)), instructions="x")
    server = HTTPToolServer(bridge)
    await server.start()
    http = httpx.AsyncClient(trust_env=False, headers={"Authorization": f"Bearer {server.token}"})
    assert (await http.get(server.url + "/tools")).status_code == 200
    with caplog.at_level("DEBUG"):
        await server.stop()
        import asyncio

        await asyncio.sleep(0.05)
    await http.aclose()
    assert not server._handlers
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


async def test_an_unknown_mcp_resource_is_a_protocol_error_not_a_traceback(
    smoke: Benchmark, caplog
) -> None:
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from voxbench.toolserver.mcp_server import MCPToolServer

    bridge = ToolBridge(ToolMapping(list(smoke.tools)), instructions="x")
    with caplog.at_level("WARNING"):
        async with MCPToolServer(bridge) as server, Client(server.url) as client:
            with pytest.raises(MCPError, match="no resource voxbench://nope"):
                await client.read_resource("voxbench://nope")
    assert not [r for r in caplog.records if r.exc_info]


def test_mcp_is_never_put_on_the_network(monkeypatch, capsys) -> None:
    from tests.cli_invoke import invoke

    code, out, err = invoke(
        monkeypatch, capsys, "tools", "serve", "smoke", "--mcp", "--host", "0.0.0.0",
        "--target", "websocket/ws://127.0.0.1:1/agent",
    )  # fmt: skip
    assert code == 2 and "--host" in out + err and "loopback" in out + err
