"""What a turn accumulates while it runs, and what the audio driver needs of its run.

Shared by the turn loop (``runner.conversation``) and the speech driver (``runner.speech``)
so that neither imports the other's internals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from voxbench.core.benchmark import Turn
from voxbench.core.clock import Clock
from voxbench.core.records import ToolCallRecord
from voxbench.core.session import Session
from voxbench.core.timeline import Stamp


@dataclass
class TurnState:
    """One attempt at a turn, as its events arrive."""

    record_calls: list[ToolCallRecord] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    user_transcript: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    first_event: float | None = None
    first_text: float | None = None
    first_audio: float | None = None


class TurnContext(Protocol):
    """What the speech driver uses of the run that owns it (read live: a reconnect replaces
    the session, an audio run swaps in a virtual clock)."""

    @property
    def session(self) -> Session | None: ...

    @property
    def clock(self) -> Clock: ...

    def record(self, turn: str | None, event: Stamp, at: float | None = None) -> float:
        """Stamp and append a runner event (at ``at`` when given); returns its time."""
        ...

    async def consume(self, turn: Turn, state: TurnState) -> str:
        """Handle the target's events until its response completes; returns its status."""
        ...
