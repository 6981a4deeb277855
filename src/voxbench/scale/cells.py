"""A cell: one conversation run at a known directory, run to completion whatever happened before.

Executors hand cells to workers (a coroutine in this process, a process of a pool, a Ray
task). A cell is idempotent by construction, so a retry after a killed worker is safe:

- a directory whose ``run.json`` says ``success`` is reused as it is;
- a directory with a ``run.json`` in any other state (a worker killed mid-run, a cancelled
  run, a run that failed) is resumed after its last completed turn — the resume machinery
  restores the conversation and the backend, so no turn is recorded twice;
- an empty or missing directory starts a new run there.

The run is then judged (``judged.jsonl``, ``scorecard.json``) in the same worker, so judging
is spread over the workers too: deterministically, and by the cell's LLM judge when it has one
(``CellJudge``, as ``voxbench judge --judge``). A finished run that this judge has not judged
yet is judged again, not run again.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from voxbench.core.errors import ProviderError, VoxbenchError
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import EvaluationOptions, evaluate_run_async
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import resume_run, run_conversation
from voxbench.targets.registry import target_provider

LOCAL_SPEECH_PREFIX = "local/"
"""Speech engines that decode on this machine's CPU (Whisper, eSpeak NG)."""


class CellJudge(BaseModel):
    """The LLM judge of a cell's run (the ``judge:`` of a matrix plan)."""

    model_config = ConfigDict(extra="forbid")

    model: str
    """``provider/model``, as ``voxbench judge --judge`` (a matrix plan's ``provider:model``
    is spelled so when the plan is loaded): the name its judgments carry."""
    base_url: str | None = None
    """Its endpoint (self-hosted, a proxy, a fake server), as ``--judge-base-url``."""

    def options(self) -> EvaluationOptions:
        return EvaluationOptions(judge=self.model, judge_base_url=self.base_url)


class Cell(BaseModel):
    """One run to make (or finish) at ``path``."""

    model_config = ConfigDict(extra="forbid")

    config: RunConfig
    path: Path
    label: str = ""
    """What progress lines call it (``target · benchmark · seed``)."""
    judge: CellJudge | None = None
    """The LLM judge of the run, besides the deterministic one."""

    @property
    def provider(self) -> str:
        """The target's provider: the key of per-provider concurrency limits."""
        return target_provider(self.config.target)

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
    """The result of a cell whose run already succeeded and is judged by the cell's judge
    (None: it has work to do)."""
    if not _succeeded(cell.path) or not _judged_by(cell):
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
        if _succeeded(path):  # recorded; only the cell's judge has not judged it yet
            action = "reused"
        elif (path / RunDirectory.RUN).is_file():
            action = "resumed"
            await resume_run(path)
        else:
            await run_conversation(cell.config, run_path=path)
        await evaluate_run_async(path, cell.judge.options() if cell.judge else None)
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


def _succeeded(path: Path) -> bool:
    return (path / RunDirectory.RUN).is_file() and RunDirectory(path).info().status == "success"


def _judged_by(cell: Cell) -> bool:
    """Whether the cell's LLM judge (if any) has judgments in its run."""
    if cell.judge is None:
        return True
    return any(j.judge == cell.judge.model for j in RunDirectory(cell.path).judgments() or [])


def _turns(path: Path) -> int:
    try:
        return len(RunDirectory(path).turns())
    except (VoxbenchError, OSError):
        return 0
