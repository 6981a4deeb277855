"""Helpers for the text chat adapter tests: run a benchmark through an adapter and a fake."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from voxbench.core.records import TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.core.session import SessionSetup
from voxbench.core.timeline import TimelineEvent
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.targets.registry import resolve_target


async def run_smoke(
    tmp_path: Path, target: str, base_url: str, *, turn_timeout: float = 10.0, **extra: Any
) -> Path:
    """Run the smoke benchmark against ``target`` at ``base_url``; returns the run directory."""
    config = RunConfig(
        benchmark="smoke",
        target=target,
        base_url=base_url,
        runs_dir=tmp_path / "runs",
        turn_timeout=turn_timeout,
        **extra,
    )
    return await run_conversation(config)


def turns(path: Path) -> list[TurnRecord]:
    """The run's transcript."""
    return RunDirectory(path).turns()


def runner_events(path: Path, *types: str) -> list[TimelineEvent]:
    """Recorded events of the given types, in order."""
    return [e for e in RunDirectory(path).events() if e.type in types]


async def assert_all_passed(path: Path) -> None:
    """Judge the run; every judgment that applies must pass, every turn be ok."""
    from voxbench.evaluation import evaluate_run

    # On a worker thread: evaluate_run drives its own event loop.
    result = await asyncio.to_thread(evaluate_run, path)
    card, judgments = result.card, result.judgments
    failed = [
        (j.turn, j.dimension, j.evidence or j.reasoning) for j in judgments if j.passed is False
    ]
    assert failed == []
    assert any(j.passed for j in judgments)
    assert card.counts.ok == card.turns == 10


async def drain_turn(session: Any) -> list[Any]:
    """Consume a session's events until TurnComplete, answering every tool call with ok."""
    out = []
    async for event in session.events():
        out.append(event)
        if event.type == "tool_call":
            await session.send_tool_result(event.call_id, {"status": "ok", "echo": event.name})
        if event.type == "turn_complete":
            return out
    return out


async def open_session(target: str, base_url: str, setup: SessionSetup, **options: Any) -> Any:
    """Start a session of ``target`` against ``base_url``."""
    session = resolve_target(target, base_url=base_url, options=options)()
    await session.start(setup)
    return session
