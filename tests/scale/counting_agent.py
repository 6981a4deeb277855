"""An in-process agent that counts how many of its sessions answer at the same time."""

from __future__ import annotations

import asyncio

from voxbench.targets.inprocess import InProcessSession


class CountingAgent(InProcessSession):
    """Answers after 20 ms; ``CountingAgent.most`` is the most answering at once."""

    answering = 0
    most = 0

    async def respond(self, user_text: str) -> None:
        cls = type(self)
        cls.answering += 1
        cls.most = max(cls.most, cls.answering)
        try:
            await asyncio.sleep(0.02)
            await self.say("Noted.")
        finally:
            cls.answering -= 1
