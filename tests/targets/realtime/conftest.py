"""Helpers for realtime adapter tests: run the smoke benchmark, drain session events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.benchmark import Benchmark
from voxbench.core.events import SessionEvent, TurnComplete
from voxbench.core.records import Judgment, Scorecard
from voxbench.core.rundir import RunDirectory
from voxbench.core.session import Session
from voxbench.evaluation import evaluate_run
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation


@pytest.fixture
def smoke() -> Benchmark:
    return load_benchmark("smoke")


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy keys for every realtime provider (the fakes accept any)."""
    for var in ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "XAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, "test-key-123456")
    monkeypatch.setenv("ULTRAVOX_API_KEY", "test-key-123456")


async def run_smoke(
    tmp_path: Path, target: str, base_url: str, **config: Any
) -> tuple[RunDirectory, Scorecard, list[Judgment]]:
    """Run the smoke benchmark against ``target`` and judge it deterministically."""
    config.setdefault("turn_timeout", 20.0)
    path = await run_conversation(
        RunConfig(benchmark="smoke", target=target, base_url=base_url, runs_dir=tmp_path, **config)
    )
    result = await asyncio.to_thread(evaluate_run, path)  # it runs its own loop
    return RunDirectory.open_existing(path), result.card, result.judgments


def assert_perfect(run: RunDirectory, card: Scorecard, judgments: list[Judgment]) -> None:
    """Every turn ok and every deterministic judgment passed."""
    records = run.turns()
    assert [r.status for r in records] == ["ok"] * len(records), [r.errors for r in records]
    failed = [j for j in judgments if j.passed is False]
    assert not failed, failed
    assert card.strict_pass.rate == 1.0


async def collect_turn(session: Session, seconds: float = 10.0) -> list[SessionEvent]:
    """Events until (and with) the next ``TurnComplete``."""
    out: list[SessionEvent] = []

    async def drain() -> None:
        async for event in session.events():
            out.append(event)
            if isinstance(event, TurnComplete):
                return

    await asyncio.wait_for(drain(), seconds)
    return out


async def replay(
    session: Any, check: Callable[[Mapping[str, Any]], list[str]], messages: list[dict[str, Any]]
) -> list[SessionEvent]:
    """Feed server ``messages`` to ``session`` as if received; the events it emitted.

    Each message is first checked with the official SDK's model (``check``), so a replayed
    exchange is one the real service could send, not one our reading invented.
    """
    out: list[SessionEvent] = []
    for message in messages:
        assert check(message) == [], (check(message), message)
        await session.on_message(json.dumps(message))
        while not session._queue.empty():
            out.append(session._queue.get_nowait())
    return out


def tone(seconds: float, rate: int, amplitude: float = 0.3) -> bytes:
    """A 220 Hz tone as PCM16 bytes (what a VAD hears as speech)."""
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * 220 * t) * 32767).astype("<i2").tobytes()


def silence(seconds: float, rate: int) -> bytes:
    """Digital silence as PCM16 bytes."""
    return b"\x00\x00" * int(seconds * rate)
