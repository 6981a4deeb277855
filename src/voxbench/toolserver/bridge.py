"""Calls that come in over a tool server, turned into the session's own tool calls.

``ToolBridge`` is what the HTTP and MCP servers call: it maps the agent's call to the
benchmark's tool (``ToolMapping``), hands it to the conversation's current session as a
``ToolCallRequested`` and waits for the runner's ``send_tool_result``. ``BridgedSession``
wraps the target's session: its event stream is the target's plus the bridged calls, and the
results of bridged calls go back to the bridge instead of the target. Because the runner
sees an ordinary call, it executes it against the run's backend, records it on the turn it
came in, and judges it like any other; the end state is that backend's.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

from voxbench.core.benchmark import ToolSpec
from voxbench.core.events import SessionEvent, ToolCallRequested
from voxbench.core.session import Session, SessionSetup
from voxbench.toolserver.mapping import ArgumentError, ToolMapping

NO_CONVERSATION = "NO_CONVERSATION"
"""The error code of a call made while no conversation is open (between connections)."""


class ToolBridge:
    """The benchmark's tools, callable by name from a tool server."""

    def __init__(
        self,
        mapping: ToolMapping,
        *,
        instructions: str = "",
        call_timeout: float = 120.0,
    ) -> None:
        self.mapping = mapping
        self.instructions = instructions
        """The benchmark's system prompt (instructions and knowledge base), served to an agent
        that keeps its own prompt."""
        self.call_timeout = call_timeout
        self.session: BridgedSession | None = None
        self.calls = 0
        """Calls received (all of them, answered or not)."""
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)

    def tools(self) -> list[ToolSpec]:
        """The tools as the agent sees them (after the mapping)."""
        return self.mapping.agent_tools()

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run the agent's call through the conversation; its result (errors are results)."""
        self.calls += 1
        session = self.session
        if session is None:
            return {"error": NO_CONVERSATION, "message": "no conversation is in progress"}
        try:
            bench_name, bench_args = self.mapping.to_benchmark(name, arguments)
        except ArgumentError as exc:
            return {"error": "MALFORMED_ARGUMENTS", "message": str(exc)}
        call_id = f"served_{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        session.emit(ToolCallRequested(call_id=call_id, name=bench_name, arguments=bench_args))
        try:
            return await asyncio.wait_for(future, self.call_timeout)
        except TimeoutError:
            return {"error": "TIMEOUT", "message": "the run did not answer the call"}
        finally:
            self._pending.pop(call_id, None)

    def owns(self, call_id: str) -> bool:
        """Whether ``call_id`` is a call this bridge is waiting on."""
        return call_id in self._pending

    def resolve(self, call_id: str, result: Any) -> None:
        """The runner's result for a bridged call."""
        future = self._pending.get(call_id)
        if future is not None and not future.done():
            future.set_result(result)

    def abandon(self) -> None:
        """The session closed: calls still waiting get an error result."""
        for future in self._pending.values():
            if not future.done():
                future.set_result({"error": NO_CONVERSATION, "message": "the session closed"})


class BridgedSession(Session):
    """A target session whose agent calls the benchmark's tools over a tool server."""

    def __init__(self, inner: Session, bridge: ToolBridge, *, agent_owns_prompt: bool) -> None:
        self.inner = inner
        self.info = inner.info
        self.bridge = bridge
        self.agent_owns_prompt = agent_owns_prompt
        self._queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None

    def __getattr__(self, name: str) -> Any:
        # What the drivers read off a session (``server_vad``, ``resume_handle``…) is the
        # target's.
        return getattr(self.inner, name)

    def emit(self, event: SessionEvent) -> None:
        self._queue.put_nowait(event)

    async def start(self, setup: SessionSetup) -> None:
        # The agent gets its tools from the server, so the session announces none (the
        # history keeps earlier calls); with its own prompt it gets no system prompt either.
        update: dict[str, Any] = {"tools": []}
        if self.agent_owns_prompt:
            update["system_prompt"] = ""
        await self.inner.start(setup.model_copy(update=update))
        self.info = self.inner.info  # rates negotiated at start
        self.bridge.session = self
        self._pump = asyncio.create_task(self._forward())

    async def _forward(self) -> None:
        async for event in self.inner.events():
            self._queue.put_nowait(event)

    async def events(self) -> AsyncIterator[SessionEvent]:
        while True:
            yield await self._queue.get()

    async def send_user_text(self, text: str) -> None:
        await self.inner.send_user_text(text)

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        await self.inner.send_user_audio(pcm, sample_rate)

    async def end_user_turn(self) -> None:
        await self.inner.end_user_turn()

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        if self.bridge.owns(call_id):
            self.bridge.resolve(call_id, result)
        else:
            await self.inner.send_tool_result(call_id, result)

    def resume_handle(self) -> str | None:
        return self.inner.resume_handle()

    async def close(self) -> None:
        if self.bridge.session is self:
            self.bridge.session = None
            self.bridge.abandon()
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump
        await self.inner.close()


def bridged_factory(
    factory: Callable[[], Session], bridge: ToolBridge, *, agent_owns_prompt: bool = False
) -> Callable[[], Session]:
    """A session factory whose sessions take their tool calls from ``bridge`` too."""
    return lambda: BridgedSession(factory(), bridge, agent_owns_prompt=agent_owns_prompt)
