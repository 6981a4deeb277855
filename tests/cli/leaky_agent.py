"""An in-process agent that does everything it can to leak its keys, for the run.log tests."""

from __future__ import annotations

import logging

from voxbench.core.secrets import get_secret
from voxbench.targets.inprocess import InProcessSession

log = logging.getLogger("voxbench.tests.leaky_agent")

ENV_VAR = "LEAKY_AGENT_KEY"


class LeakyAgent(InProcessSession):
    """Logs its env key and its ``api_key`` option, says them, and fails its second turn
    with both in the error message."""

    async def respond(self, user_text: str) -> None:
        key = get_secret(ENV_VAR, purpose="the leaky agent")
        option = self.context.options.get("api_key") if self.context else None
        log.warning("connecting with key %s and option %s", key, option)
        await self.say(f"my keys are {key} and {option}")
        if "register" in user_text.lower():
            raise RuntimeError(f"rejected key {key} (option {option})")
