"""An in-process agent that answers slowly, so a test can interrupt ``voxbench run`` mid-run."""

from __future__ import annotations

import asyncio

from voxbench.targets.inprocess import InProcessSession


class SlowAgent(InProcessSession):
    """Says one short sentence per turn, half a second after the user finishes."""

    async def respond(self, user_text: str) -> None:
        await asyncio.sleep(0.5)
        await self.say("Noted.")
