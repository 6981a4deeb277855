"""A ``voxbench judge`` killed part-way (kill -9) leaves the run as it was, and judging again
gives exactly what an uninterrupted judging gives."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import evaluate_run

from .scripted import Act, JudgeScript, scripted_run
from .test_cli_judge import judge_server

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = ("judged.jsonl", "scorecard.json", "report.md")


def artifacts(run: Path) -> dict[str, bytes]:
    return {name: (run / name).read_bytes() for name in ARTIFACTS}


def judge_command(run: Path, url: str) -> list[str]:
    return [sys.executable, "-m", "voxbench.cli.main", "judge", str(run)] + [
        "--judge",
        "openai-compatible:m",
        "--judge-base-url",
        url,
        "--no-cache",
    ]


def environment() -> dict[str, str]:
    paths = [str(REPO / "src"), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def test_a_judge_killed_part_way_then_run_again_equals_an_uninterrupted_one(
    tmp_path: Path,
) -> None:
    _, _, run = asyncio.run(scripted_run(tmp_path, {"6": Act(calls=[], say="Sure.")}))
    twin = tmp_path / "twin" / run.name
    shutil.copytree(run, twin)
    for path in (run, twin):  # both judged by code already: there is something to lose
        evaluate_run(path)
    judged_by_code = artifacts(run)
    # A slow judge: the process is surely asking it when it is killed.
    with judge_server(JudgeScript(), ttfb_ms=300) as server:
        judging = subprocess.Popen(
            judge_command(run, server.url),
            env=environment(),
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120  # a guard against a hang, not a timing check
        while len(server.requests) < 3 and judging.poll() is None:
            assert time.monotonic() < deadline, "the judge never asked the LLM"
            time.sleep(0.02)
        assert judging.poll() is None, "the judge finished before it could be killed"
        judging.kill()  # SIGKILL: no cleanup runs
        judging.wait()

        # Nothing half-written: the run still reads as the code-only judging left it.
        assert artifacts(run) == judged_by_code
        assert RunDirectory(run).judgments() is not None
        assert RunDirectory(run).scorecard() is not None

        # The dead process' writer lock is taken over; judging again completes.
        again = subprocess.run(
            judge_command(run, server.url),
            env=environment(),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert again.returncode == 0, again.stdout + again.stderr
        uninterrupted = subprocess.run(
            judge_command(twin, server.url),
            env=environment(),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert uninterrupted.returncode == 0, uninterrupted.stdout + uninterrupted.stderr
    assert artifacts(run) == artifacts(twin)
    card = RunDirectory(run).scorecard()
    assert card is not None and card.dimension("instruction_following") is not None
    assert not any(path.name.endswith(".tmp") for path in twin.iterdir())
