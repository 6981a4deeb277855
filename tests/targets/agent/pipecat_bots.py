"""Bot factories the ``pipecat/<module:factory>`` tests name, as a user names their own:
``pipecat/tests.targets.agent.pipecat_bots:golden``. Each records the LLMs it builds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from voxbench.benchmarks.loader import load_benchmark
from voxbench.testing.pipecat_bot import ScriptLLM, script_bot
from voxbench.testing.scripts import GoldenScript, Reply, Script, ScriptMessage

built: list[ScriptLLM] = []
"""Every scripted LLM built, in order (one per session)."""

INJECTED_TTFB_MS = 250.0

_smoke = GoldenScript(load_benchmark("smoke"))


def golden(transport: Any, setup: Any) -> Any:
    """The smoke benchmark's oracle as a Pipecat bot."""
    return script_bot(_smoke, built=built)(transport, setup)


def slow(transport: Any, setup: Any) -> Any:
    """The oracle, each response held back ``INJECTED_TTFB_MS``."""
    return script_bot(_smoke, ttfb_ms=INJECTED_TTFB_MS, built=built)(transport, setup)


def failing(transport: Any, setup: Any) -> Any:
    """The oracle, whose LLM raises inside its second response."""
    return script_bot(_smoke, faults=["server_error@2"], built=built)(transport, setup)


def broken(transport: Any, setup: Any) -> Any:
    raise RuntimeError("no API key for the bot's LLM")


not_a_function = 42


class _Answer(Script):
    """One answer to whatever the user says (an FDB sample has no benchmark turns)."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        return Reply(text="Blue is my favourite colour.")

    def transcribe(self, number: int) -> str:
        return "What is your favourite colour?"


def answer(transport: Any, setup: Any) -> Any:
    """A bot that answers every user turn with one sentence, 200 ms after it ends."""
    return script_bot(_Answer(), ttfb_ms=200, built=built)(transport, setup)


def conference(transport: Any, setup: Any) -> Any:
    """The conference benchmark's oracle as a Pipecat bot."""
    return script_bot(GoldenScript(load_benchmark("conference")), built=built)(transport, setup)
