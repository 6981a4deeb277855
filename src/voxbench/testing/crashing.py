"""An oracle whose process dies mid-run once: a worker killed in the middle of a cell.

``--target voxbench.testing.crashing:CrashOnceOracle -o crash_at=3 -o marker=/tmp/m``: on turn
3 the process exits at once (``os._exit``: no cleanup, no ``run.json`` update — like a node
lost or an OOM kill), unless ``marker`` exists; it creates ``marker`` first, so the retry of
the cell gets past that turn. Used to test that executors resume such a cell without
recording a turn twice.
"""

from __future__ import annotations

import os
from pathlib import Path

from voxbench.targets.oracle import OracleSession
from voxbench.targets.registry import TargetContext


class CrashOnceOracle(OracleSession):
    """The oracle, killing its own process on turn ``crash_at`` the first time."""

    def __init__(self, context: TargetContext) -> None:
        if context.benchmark is None:
            raise ValueError("CrashOnceOracle needs the benchmark it replays")
        super().__init__(context.benchmark)
        self.crash_at = int(context.options["crash_at"])
        self.marker = Path(str(context.options["marker"]))

    async def respond(self, user_text: str) -> None:
        if self._next == self.crash_at and not self.marker.exists():
            self.marker.touch()
            os._exit(17)
        await super().respond(user_text)
