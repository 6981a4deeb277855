"""The benchmark's tools served over HTTP and MCP to an agent that owns its tools.

The fake agent (``FakeAgentServer`` with a ``tool_client``) never sends ``tool.call``: it
calls the served tools itself, with an HTTP client or the official ``mcp`` client, under its
own names (a mapping file renames them). The oracle behind it must still score 100%: every
served call recorded on its turn and judged, the end state the run's backend's.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.targets.realtime.conftest import assert_perfect
from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import evaluate_run
from voxbench.runner.config import RunConfig
from voxbench.testing.agent_ws import FakeAgentServer
from voxbench.testing.scripts import GoldenScript
from voxbench.toolserver.bridge import NO_CONVERSATION, ToolBridge
from voxbench.toolserver.http_server import HTTPToolServer
from voxbench.toolserver.mapping import ToolMapping, load_mapping
from voxbench.toolserver.serve import run_with_served_tools

MAPPING = """
tools:
  book_talk:
    tool: register_for_session
    arguments:
      name: attendee.full_name
      session_id: talk.id
"""


class Served:
    """Where the tool server is, and the token it requires, once the run has started it."""

    url = ""
    token: str | None = None


def http_client(served: Served):
    async def call(name: str, arguments: dict[str, Any]) -> Any:
        async with httpx.AsyncClient(trust_env=False, timeout=30) as http:
            response = await http.post(
                f"{served.url}/tools/{name}",
                json=arguments,
                headers={"Authorization": f"Bearer {served.token}"},
            )
        response.raise_for_status()
        return response.json()["result"]

    return call


def agent_side(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The agent's own names and shapes for the mapped tool (what MAPPING undoes)."""
    if name != "register_for_session":
        return name, arguments
    return "book_talk", {
        "attendee": {"full_name": arguments["name"]},
        "talk": {"id": arguments["session_id"]},
    }


def mcp_client(served: Served):
    from mcp import Client

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        agent_name, agent_args = agent_side(name, arguments)
        async with Client(served.url) as client:
            result = await client.call_tool(agent_name, agent_args)
        assert not result.is_error, result
        return json.loads(result.content[0].text)

    return call


async def serve_and_run(
    tmp_path: Path, smoke: Benchmark, client: Any, served: Served, **kwargs: Any
) -> tuple[FakeAgentServer, RunDirectory]:
    config_extra = kwargs.pop("config", {})
    async with FakeAgentServer(GoldenScript(smoke), tool_client=client(served)) as agent:
        config = RunConfig(
            benchmark="smoke",
            target=f"websocket/{agent.url}",
            runs_dir=tmp_path,
            turn_timeout=30.0,
            **config_extra,
        )

        def ready(url: str, token: str | None) -> None:
            served.url, served.token = url, token

        path = await run_with_served_tools(config, on_ready=ready, **kwargs)
    return agent, RunDirectory.open_existing(path)


async def test_smoke_over_http_served_tools_scores_perfectly(
    tmp_path: Path, smoke: Benchmark
) -> None:
    served = Served()
    agent, run = await serve_and_run(tmp_path, smoke, http_client, served, transport="http")
    result = await asyncio.to_thread(evaluate_run, run.path)
    assert_perfect(run, result.card, result.judgments)
    records = run.turns()
    # Every served call is on its turn, with the backend's result (turn 4 retried once).
    assert [c.name for c in records[4].tool_calls] == ["register_for_session"] * 2
    assert all(c.call_id.startswith("served_") for r in records for c in r.tool_calls)
    assert records[-1].state_after["ended"] is True
    # The agent was told no tools over its session, and never used tool.call.
    assert agent.starts[0].tools == [] and agent.starts[0].system_prompt
    assert not [m for m in agent.received if m["type"] == "tool.result"]


async def test_smoke_over_mcp_in_audio_mode_with_renamed_tools(
    tmp_path: Path, smoke: Benchmark
) -> None:
    pytest.importorskip("mcp")
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text(MAPPING)
    served = Served()
    agent, run = await serve_and_run(
        tmp_path,
        smoke,
        mcp_client,
        served,
        transport="mcp",
        mapping_file=mapping,
        agent_owns_prompt=True,
        config={"mode": "audio", "heard_asr": "none", "clock": "virtual"},
    )
    result = await asyncio.to_thread(evaluate_run, run.path)
    assert_perfect(run, result.card, result.judgments)
    calls = [c for r in run.turns() for c in r.tool_calls]
    register = next(c for c in calls if c.name == "register_for_session")
    assert register.arguments == {"name": "Priya Raman", "session_id": "H-101"}
    assert agent.starts[0].system_prompt == ""  # the agent keeps its own prompt
    assert agent.starts[0].modality == "audio"


async def test_mcp_lists_mapped_tools_and_serves_the_instructions(smoke: Benchmark, tmp_path):
    pytest.importorskip("mcp")
    from mcp import Client

    from voxbench.toolserver.mcp_server import INSTRUCTIONS_URI, MCPToolServer

    mapping = tmp_path / "mapping.yaml"
    mapping.write_text(MAPPING)
    tools = list(smoke.tools)
    bridge = ToolBridge(load_mapping(mapping, tools), instructions=smoke.render_system_prompt())
    async with MCPToolServer(bridge) as server, Client(server.url) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        resource = await client.read_resource(INSTRUCTIONS_URI)
        outside = await client.call_tool("end_session", {})
    assert "book_talk" in listed and "register_for_session" not in listed
    schema = listed["book_talk"].input_schema
    assert schema["properties"]["attendee"]["properties"]["full_name"]["type"] == "string"
    assert schema["required"] == ["attendee", "talk"]
    assert "Lighthouse Lobby" in resource.contents[0].text
    # A call with no conversation open gets an error result, never a hang.
    assert json.loads(outside.content[0].text)["error"] == NO_CONVERSATION


async def test_http_tool_server_answers_bad_requests_clearly(smoke: Benchmark) -> None:
    bridge = ToolBridge(ToolMapping(list(smoke.tools)), instructions="the instructions")
    server = HTTPToolServer(bridge)
    auth = {"Authorization": f"Bearer {server.token}"}
    async with server, httpx.AsyncClient(trust_env=False, headers=auth) as http:
        listed = (await http.get(server.url + "/tools")).json()["tools"]
        instructions = await http.get(server.url + "/instructions")
        not_json = await http.post(
            server.url + "/tools/end_session",
            content=b"{nope",
            headers={"Content-Type": "application/json"},
        )
        not_object = await http.post(server.url + "/tools/end_session", json=[1])
        wrong_method = await http.get(server.url + "/tools/end_session")
        missing = await http.get(server.url + "/nothing")
        no_run = await http.post(server.url + "/tools/end_session", json={})
    assert {t["name"] for t in listed} == {t.name for t in smoke.tools}
    assert instructions.text == "the instructions"
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]
    assert not_object.status_code == 400
    assert wrong_method.status_code == 405 and missing.status_code == 404
    assert no_run.json()["result"]["error"] == NO_CONVERSATION


def test_mapping_translates_names_and_argument_paths(smoke: Benchmark, tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MAPPING)
    mapping = load_mapping(path, list(smoke.tools))
    args = {"attendee": {"full_name": "Ana"}, "talk": {"id": "H-1"}}
    assert mapping.to_benchmark("book_talk", args) == (
        "register_for_session",
        {"name": "Ana", "session_id": "H-1"},
    )
    assert mapping.to_benchmark("end_session", {}) == ("end_session", {})
    assert "register_for_session" not in {t.name for t in mapping.agent_tools()}


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("tools:\n  x:\n    tool: nope\n", "tools.x.tool", "no tool 'nope'"),
        ("tools:\n  x:\n    tool: end_session\n    extra: 1\n", "tools.x.extra", "Extra"),
        (
            "tools:\n  x:\n    tool: register_for_session\n    arguments: {who: a}\n",
            "tools.x.arguments.who",
            "no parameter 'who'",
        ),
        (
            "tools:\n  x:\n    tool: register_for_session\n    arguments: {name: a}\n",
            "tools.x.arguments",
            "['session_id']",
        ),
        (
            "tools:\n  x:\n    tool: register_for_session\n"
            "    arguments: {name: 'a..b', session_id: s}\n",
            "tools.x.arguments.name",
            "not a dotted path",
        ),
        ("tool: {}\n", "tool", "Extra"),
    ],
)
def test_a_bad_mapping_file_names_its_field(
    smoke: Benchmark, tmp_path: Path, text: str, field: str, message: str
) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_mapping(path, list(smoke.tools))
    assert info.value.field == field and info.value.file == str(path)
    assert message in str(info.value)
