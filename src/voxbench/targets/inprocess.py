"""A base for targets that run inside this process (oracle, baseline, scripted test agents).

Subclasses write the agent as straight-line code in ``respond``: ``await self.call_tool(...)``
returns the backend's answer, ``await self.say(...)`` speaks. The base maps that onto the
``Session`` event stream.

A subclass is also a user's plug-in as it stands: ``--target mypkg.agent:MyAgent`` builds it
with the run's ``TargetContext`` (kept in ``self.context``), so it needs no constructor.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any, Literal

from voxbench.core.errors import ErrorCategory
from voxbench.core.events import (
    AssistantTextDelta,
    SessionEvent,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    Usage,
)
from voxbench.core.session import Session, SessionSetup, TargetInfo
from voxbench.targets.registry import TargetContext


class InProcessSession(Session):
    """A Session whose agent is an ``async respond(user_text)`` method."""

    def __init__(self, name: str | TargetContext = "local/in-process") -> None:
        """``name`` is the target's ``provider/model`` name, or the ``TargetContext`` a
        class-path target is built with (its name is then the class path)."""
        self.context = name if isinstance(name, TargetContext) else None
        self.info = TargetInfo(
            name=name.model if isinstance(name, TargetContext) else name, in_process=True
        )
        self.setup: SessionSetup | None = None
        self._queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._user_text: list[str] = []
        self._ids = itertools.count(1)
        self._task: asyncio.Task[None] | None = None

    async def start(self, setup: SessionSetup) -> None:
        self.setup = setup
        self.on_start(setup)

    def on_start(self, setup: SessionSetup) -> None:
        """Hook: prepare from the setup (history included). Default: nothing."""

    @abc.abstractmethod
    async def respond(self, user_text: str) -> None:
        """Answer one user turn with ``say`` and ``call_tool``."""

    async def send_user_text(self, text: str) -> None:
        self._user_text.append(text)

    async def end_user_turn(self) -> None:
        text = " ".join(self._user_text).strip()
        self._user_text.clear()
        self._task = asyncio.create_task(self._run(text))

    async def _run(self, text: str) -> None:
        status: Literal["completed", "cancelled", "failed"] = "completed"
        try:
            await self.respond(text)
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        except Exception as exc:  # an agent bug becomes a recorded error, never a crash
            status = "failed"
            await self._queue.put(
                TargetError(category=ErrorCategory.AGENT, message=f"{type(exc).__name__}: {exc}")
            )
        finally:
            await self._queue.put(TurnComplete(status=status))

    async def say(self, text: str) -> None:
        """Speak ``text``."""
        if text:
            await self._queue.put(AssistantTextDelta(text=text))

    async def report_usage(self, input_tokens: int, output_tokens: int) -> None:
        """Report token usage for the response."""
        await self._queue.put(Usage(input_tokens=input_tokens, output_tokens=output_tokens))

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Request a tool call and wait for the runner's result."""
        call_id = f"call_{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        await self._queue.put(ToolCallRequested(call_id=call_id, name=name, arguments=arguments))
        try:
            return await future
        finally:
            self._pending.pop(call_id, None)

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        future = self._pending.get(call_id)
        if future is not None and not future.done():
            future.set_result(result)

    async def events(self) -> AsyncIterator[SessionEvent]:
        while True:
            yield await self._queue.get()

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
