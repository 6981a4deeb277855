"""``voxbench tools serve``: a run whose agent calls the benchmark's tools over HTTP or MCP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from voxbench.benchmarks.loader import load_benchmark
from voxbench.runner.config import RunConfig
from voxbench.runner.conversation import ProgressCallback
from voxbench.runner.launch import check_run_credentials, run_conversation, target_options
from voxbench.targets.registry import resolve_target
from voxbench.toolserver.bridge import ToolBridge, bridged_factory
from voxbench.toolserver.http_server import HTTPToolServer
from voxbench.toolserver.mapping import ToolMapping, load_mapping
from voxbench.toolserver.mcp_server import MCPToolServer

Transport = Literal["http", "mcp"]


def build_bridge(config: RunConfig, mapping_file: Path | None = None) -> ToolBridge:
    """The benchmark's tools (renamed by ``mapping_file``) and instructions, ready to serve."""
    benchmark = load_benchmark(config.benchmark)
    tools = list(benchmark.tools)
    mapping = load_mapping(mapping_file, tools) if mapping_file else ToolMapping(tools)
    return ToolBridge(mapping, instructions=benchmark.render_system_prompt())


def tool_server(
    bridge: ToolBridge,
    transport: Transport,
    port: int = 0,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
) -> HTTPToolServer | MCPToolServer:
    """The server of ``transport`` for ``bridge`` (not started), on loopback unless ``host``
    says otherwise; the HTTP server requires ``token`` (a fresh one when None)."""
    if transport == "mcp":
        return MCPToolServer(bridge, host=host, port=port)
    return HTTPToolServer(bridge, host=host, port=port, token=token)


async def run_with_served_tools(
    config: RunConfig,
    *,
    transport: Transport,
    port: int = 0,
    host: str = "127.0.0.1",
    token: str | None = None,
    mapping_file: Path | None = None,
    bridge: ToolBridge | None = None,
    agent_owns_prompt: bool = False,
    run_path: Path | None = None,
    on_ready: Callable[[str, str | None], None] | None = None,
    progress: ProgressCallback | None = None,
) -> Path:
    """Serve the benchmark's tools, then run it against ``config.target``; the run directory.

    The server is up (``on_ready`` gets its URL and the token the agent must send as
    ``Authorization: Bearer TOKEN``; None for MCP) before the first session opens, and every
    call it gets during the run is recorded on the run's turn like an in-process call.
    ``bridge`` (from ``build_bridge``, validated beforehand) wins over ``mapping_file``."""
    check_run_credentials(config)
    benchmark = load_benchmark(config.benchmark)
    bridge = bridge or build_bridge(config, mapping_file)
    factory = resolve_target(
        config.target, benchmark=benchmark, base_url=config.base_url, options=target_options(config)
    )
    async with tool_server(bridge, transport, port, host=host, token=token) as server:
        if on_ready is not None:
            on_ready(server.url, getattr(server, "token", None))
        return await run_conversation(
            config,
            progress=progress,
            session_factory=bridged_factory(factory, bridge, agent_owns_prompt=agent_owns_prompt),
            run_path=run_path,
        )
