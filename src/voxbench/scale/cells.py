"""A cell: one conversation run at a known directory, run to completion whatever happened before.

Executors hand cells to workers (a coroutine in this process, a process of a pool, a Ray
task). A cell is idempotent by construction, so a retry after a killed worker is safe:

- a directory whose ``run.json`` says ``success`` is reused as it is;
- a directory with a ``run.json`` in any other state (a worker killed mid-run, a cancelled
  run, a run that failed) is resumed after its last completed turn — the resume machinery
  restores the conversation and the backend, so no turn is recorded twice;
- an empty or missing directory starts a new run there.

The run is then judged deterministically (``judged.jsonl``, ``scorecard.json``) in the same
worker, so judging is spread over the workers too.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from voxbench.core.errors import ProviderError, VoxbenchError
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import evaluate_run_async
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import resume_run, run_conversation
from voxbench.targets.registry import canonical_name

LOCAL_SPEECH_PREFIX = "local/"
"""Speech engines that decode on this machine's CPU (Whisper, eSpeak NG)."""


class Cell(BaseModel):
    """One run to make (or finish) at ``path``."""

    model_config = ConfigDict(extra="forbid")

    config: RunConfig
    path: Path
    label: str = ""
    """What progress lines call it (``target · benchmark · seed``)."""

    @property
    def provider(self) -> str:
        """The target's provider: the key of per-provider concurrency limits."""
        return canonical_name(self.config.target).split("/", 1)[0]

    @property
    def cpu_bound(self) -> bool:
        """An audio run with a speech engine, or an agent, computing on this machine.

        In-process agents and local Whisper/eSpeak keep a core busy: such cells go to a
        process pool (local executor) or ask Ray for a whole CPU."""
        if self.config.mode != "audio":
            return False
        engines = [self.config.heard_asr, self.config.user_tts, self.config.stt, self.config.tts]
        local_engine = any(e and e.startswith(LOCAL_SPEECH_PREFIX) for e in engines)
        return local_engine or self.provider in ("local", "cascade")


class CellResult(BaseModel):
    """How a cell ended."""

    model_config = ConfigDict(extra="forbid")

    path: Path
    status: Literal["success", "error", "cancelled"]
    action: Literal["ran", "resumed", "reused"]
    error: str | None = None
    turns: int = 0
    """Turns recorded in the run (all attempts)."""


def finished(cell: Cell) -> CellResult | None:
    """The result of a cell whose run already succeeded (None: it has work to do)."""
    if not (cell.path / RunDirectory.RUN).is_file():
        return None
    if RunDirectory(cell.path).info().status != "success":
        return None
    return CellResult(path=cell.path, status="success", action="reused", turns=_turns(cell.path))


async def run_cell_async(cell: Cell) -> CellResult:
    """Run, resume or reuse ``cell``; errors of the run are reported, not raised."""
    path = cell.path
    action: Literal["ran", "resumed", "reused"] = "ran"
    try:
        done = finished(cell)
        if done is not None:
            return done
        if (path / RunDirectory.RUN).is_file():
            action = "resumed"
            await resume_run(path)
        else:
            await run_conversation(cell.config, run_path=path)
        await evaluate_run_async(path)
    except (VoxbenchError, ProviderError) as exc:
        return CellResult(
            path=path, status="error", action=action, error=str(exc), turns=_turns(path)
        )
    return CellResult(path=path, status="success", action=action, turns=_turns(path))


def run_cell(cell: Cell) -> CellResult:
    """``run_cell_async`` in a fresh event loop (process-pool and Ray workers call this)."""
    return asyncio.run(run_cell_async(cell))


def failed_cell(cell: Cell, exc: BaseException) -> CellResult:
    """The result of a cell whose worker failed outside the run (a lost worker, a bug)."""
    return CellResult(
        path=cell.path,
        status="error",
        action="ran",
        error=f"{type(exc).__name__}: {exc}".splitlines()[0],
        turns=_turns(cell.path),
    )


def _turns(path: Path) -> int:
    try:
        return len(RunDirectory(path).turns())
    except (VoxbenchError, OSError):
        return 0
