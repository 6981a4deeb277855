"""An in-process agent that fails every turn, for exit-code tests (``--target`` class path)."""

from __future__ import annotations

from voxbench.targets.inprocess import InProcessSession


class BrokenAgent(InProcessSession):
    """Raises on every turn: each turn is recorded as an agent error."""

    async def respond(self, user_text: str) -> None:
        raise RuntimeError("this agent is broken on purpose")
