"""``voxbench tools serve`` as a user types it, against an agent in another event loop."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from tests.toolserver.test_tools_serve import Served, http_client
from voxbench.benchmarks.loader import load_benchmark
from voxbench.testing.agent_ws import FakeAgentServer
from voxbench.testing.scripts import GoldenScript
from voxbench.toolserver.guard import TOKEN_ENV


@pytest.fixture
def tool_owning_agent(
    free_tcp_port: int, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, int]]:
    """A fake agent that calls the tools at 127.0.0.1:``port`` itself with the token it was
    configured with (``VOXBENCH_TOOLS_TOKEN``); (its URL, the port)."""
    served = Served()
    served.url = f"http://127.0.0.1:{free_tcp_port}"
    served.token = "agent-knows-this-token"
    monkeypatch.setenv(TOKEN_ENV, served.token)
    loop = asyncio.new_event_loop()
    agent = FakeAgentServer(GoldenScript(load_benchmark("smoke")), tool_client=http_client(served))
    loop.run_until_complete(agent.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield agent.url, free_tcp_port
    asyncio.run_coroutine_threadsafe(agent.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def test_tools_serve_runs_and_scores(monkeypatch, capsys, tmp_path, tool_owning_agent) -> None:
    url, port = tool_owning_agent
    run_dir = tmp_path / "my_run"
    code, out, err = invoke(
        monkeypatch, capsys, "tools", "serve", "smoke", "--http", "--target", f"websocket/{url}",
        "--port", str(port), "--run", str(run_dir), "--agent-owns-prompt",
    )  # fmt: skip
    assert code == 0, out + err
    assert f"tools served at http://127.0.0.1:{port}" in out
    assert "token for the agent: agent-knows-this-token" in out
    assert "strict per-turn pass" in out and str(run_dir) in " ".join(out.split())
    card = json.loads((run_dir / "scorecard.json").read_text())
    assert card["strict_pass"]["rate"] == 1.0


def test_tools_serve_refuses_both_transports_and_a_bad_mapping(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    code, out, err = invoke(
        monkeypatch, capsys, "tools", "serve", "smoke", "--mcp", "--http",
        "--target", "websocket/ws://127.0.0.1:1/agent",
    )  # fmt: skip
    assert code == 2 and "--mcp and --http" in out + err
    mapping = tmp_path / "m.yaml"
    mapping.write_text("tools:\n  x:\n    tool: nope\n")
    code, out, err = invoke(
        monkeypatch, capsys, "tools", "serve", "smoke", "--port", "0", "--mapping", str(mapping),
        "--target", "websocket/ws://127.0.0.1:1/agent", "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert code == 2, out + err
    assert "tools.x.tool" in " ".join((out + err).split()) and "Traceback" not in out + err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("run.json"))
