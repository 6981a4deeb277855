"""Judged runs of the real runner on ``smoke``, for the report tests."""

from __future__ import annotations

from pathlib import Path

from voxbench.evaluation.evaluate import evaluate_run_async
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation


async def judged_run(tmp_path: Path, target: str, mode: str = "text", **kw) -> Path:
    """Run ``smoke`` against ``target`` (audio: virtual clock, no ASR of the agent), judge it
    deterministically; its directory."""
    if mode == "audio":
        kw.setdefault("heard_asr", "none")
        kw.setdefault("inter_turn_gap", 0.3)
    config = RunConfig(
        benchmark="smoke", target=target, mode=mode, runs_dir=tmp_path / "runs", **kw
    )
    path = await run_conversation(config)
    await evaluate_run_async(path)
    return path
