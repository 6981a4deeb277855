"""A naive in-process agent, written as a voxbench user would write their own.

It answers with the knowledge-base line that shares the most words with what the user said,
and calls one tool: ``end_session`` when the user says goodbye (if the benchmark offers it).
It is deliberately simple: the point is the plug-in path, not the score.
"""

from __future__ import annotations

import re

from voxbench.core.session import SessionSetup
from voxbench.targets.inprocess import InProcessSession

GOODBYE = re.compile(r"\b(bye|goodbye|that's all|thanks, that's it)\b", re.IGNORECASE)
END_TOOL = "end_session"
_WORD = re.compile(r"[a-z0-9$:]+")
_COMMON = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "is",
        "are",
        "i",
        "me",
        "my",
        "you",
        "your",
        "do",
        "what",
    ]
)


def words(text: str) -> set[str]:
    """The lower-cased content words of ``text``."""
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON}


class Agent(InProcessSession):
    """Answers from the knowledge base in the system prompt; ends the call on goodbye.

    No constructor is needed: voxbench builds the class with the run's ``TargetContext``
    (``self.context``: the benchmark, ``--base-url`` and ``-o key=value`` options).
    """

    def on_start(self, setup: SessionSetup) -> None:
        """Keep the knowledge base's lines (everything after "Knowledge base:")."""
        _, _, knowledge = setup.system_prompt.partition("Knowledge base:")
        lines = (line.strip(" -#|") for line in knowledge.splitlines())
        self.passages = [line for line in lines if len(words(line)) >= 3]
        self.tools = {tool.name for tool in setup.tools}

    async def respond(self, user_text: str) -> None:
        """Say the best-matching passage; call ``end_session`` on goodbye."""
        if GOODBYE.search(user_text) and END_TOOL in self.tools:
            await self.call_tool(END_TOOL, {})
            await self.say("Thanks for calling. Goodbye!")
            return
        asked = words(user_text)
        best = max(self.passages, key=lambda p: len(asked & words(p)), default="")
        if not best or not asked & words(best):
            await self.say("I'm sorry, I don't know that.")
            return
        await self.say(best)
