"""The benchmark's tools as an MCP server (streamable HTTP at ``/mcp``), with the official
``mcp`` package (the optional extra ``voxbench[mcp]``).

Tools are listed with the agent's names and JSON-schema input (after the mapping); a call
returns the backend's result as JSON text content (and as structured content when it is an
object). The benchmark's instructions and knowledge base are the resource
``voxbench://instructions`` (``text/markdown``), for an agent that keeps its own prompt
(``--agent-owns-prompt``), and the server's ``instructions``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from voxbench.core.errors import PrerequisiteError
from voxbench.toolserver.bridge import ToolBridge

INSTRUCTIONS_URI = "voxbench://instructions"
INVALID_PARAMS = -32602
"""JSON-RPC's invalid-params error code (an unknown resource URI)."""


def _require_mcp() -> None:
    try:
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise PrerequisiteError(
            "serving tools over MCP needs the mcp package: pip install 'voxbench[mcp]'"
        ) from exc


def build_mcp_server(bridge: ToolBridge) -> Any:
    """The low-level ``mcp`` server exposing ``bridge``'s tools (and instructions)."""
    _require_mcp()
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
                for t in bridge.tools()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await bridge.call(params.name, dict(params.arguments or {}))
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=result if isinstance(result, dict) else None,
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        resource = types.Resource(
            name="instructions",
            uri=INSTRUCTIONS_URI,
            description="The benchmark's instructions and knowledge base, for your own prompt",
            mime_type="text/markdown",
        )
        return types.ListResourcesResult(resources=[resource])

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if str(params.uri) != INSTRUCTIONS_URI:
            # A protocol error the client gets as such (not an internal error, nor a
            # traceback in the server's log).
            from mcp.shared.exceptions import MCPError

            raise MCPError(
                INVALID_PARAMS, f"no resource {params.uri} (there is {INSTRUCTIONS_URI})"
            )
        contents = types.TextResourceContents(
            uri=INSTRUCTIONS_URI, mime_type="text/markdown", text=bridge.instructions
        )
        return types.ReadResourceResult(contents=[contents])

    return Server(
        "voxbench-tools",
        instructions=bridge.instructions or None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


class MCPToolServer:
    """``async with MCPToolServer(bridge) as server: server.url`` (``…/mcp``)."""

    def __init__(
        self,
        bridge: ToolBridge,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.bridge = bridge
        self.host = host
        self.port = port
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"

    async def start(self) -> None:
        _require_mcp()
        import uvicorn

        app = build_mcp_server(self.bridge).streamable_http_app(host=self.host)
        config = uvicorn.Config(
            app, host=self.host, port=self.port, log_level="warning", lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()  # a failed start (the port is taken) raises here
                raise OSError(f"cannot serve MCP on {self.host}:{self.port}")
            await asyncio.sleep(0.01)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 5.0)
        self._server = self._task = None

    async def __aenter__(self) -> MCPToolServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
