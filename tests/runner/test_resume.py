"""A run killed with SIGKILL mid-turn resumes to the same transcript as an uninterrupted run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import resume_run, run_conversation

KILLED_RUN = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.runner.config import RunConfig
    from voxbench.runner.launch import run_conversation
    from voxbench.targets.oracle import OracleSession

    bench = load_benchmark("smoke")
    run_path, marker = Path(sys.argv[1]), Path(sys.argv[2])

    class StallsMidTurn(OracleSession):
        async def respond(self, text):
            if text == bench.turns[6].text:  # the cancellation: act, then hang mid-turn
                call = bench.turns[6].expect.required_calls[0]
                await self.call_tool(call.name, dict(call.args))
                marker.write_text("mid-turn")
                await asyncio.sleep(3600)
            await super().respond(text)

    asyncio.run(run_conversation(
        RunConfig(benchmark="smoke", target="local/oracle", runs_dir=run_path.parent),
        session_factory=lambda: StallsMidTurn(bench), run_path=run_path))
    """
)


def comparable(path: Path) -> list[dict]:
    rows = []
    for rec in RunDirectory.open_existing(path).turns():
        rows.append(
            {
                "turn": rec.turn,
                "user": rec.user_text,
                "agent": rec.assistant_text,
                "calls": [
                    (c.name, c.arguments, json.dumps(c.result, sort_keys=True))
                    for c in rec.tool_calls
                ],
                "status": rec.status,
                "state": rec.state_after,
            }
        )
    return rows


@pytest.mark.slow
def test_sigkill_mid_turn_then_resume(tmp_path: Path) -> None:
    script = tmp_path / "killed_run.py"
    script.write_text(KILLED_RUN)
    run_path = tmp_path / "runs" / "smoke" / "killed"
    marker = tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, str(script), str(run_path), str(marker)], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, "the run exited before reaching turn 6"
            assert time.monotonic() < deadline, "the run never reached turn 6"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)

    killed = RunDirectory.open_existing(run_path)
    assert [r.turn for r in killed.turns()] == ["0", "1", "2", "3", "4", "5"]
    assert killed.info().status == "started"  # it never got to say otherwise

    asyncio.run(resume_run(run_path))
    reference = asyncio.run(
        run_conversation(
            RunConfig(benchmark="smoke", target="local/oracle", runs_dir=tmp_path / "ref")
        )
    )
    assert comparable(run_path) == comparable(reference)
    resumed = RunDirectory.open_existing(run_path)
    assert resumed.info().status == "success" and resumed.info().resumed == 1
    types = [e.type for e in resumed.events()]
    assert types.count("run_resumed") == 1 and types.count("run_finished") == 1
    # The interrupted attempt's events stay in the timeline (nothing recorded is lost).
    assert types.count("turn_started") == 11


@pytest.mark.slow
async def test_two_resumes_of_one_run_never_run_a_turn_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.testing.openai_http import FakeOpenAIServer
    from voxbench.testing.scripts import GoldenScript

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-the-fake-server")
    env = os.environ | {"COLUMNS": "200"}
    async with FakeOpenAIServer(GoldenScript(load_benchmark("smoke")), ttfb_ms=150) as server:
        path = await run_conversation(
            RunConfig(
                benchmark="smoke",
                target="openai/gpt-4o-mini",
                base_url=server.url,
                runs_dir=tmp_path / "runs",
                only_turns="0-7",
            )
        )
        # As if killed after turn 1.
        transcript = RunDirectory(path).transcript_file
        transcript.write_text("".join(transcript.read_text().splitlines(keepends=True)[:2]))
        procs = [
            await asyncio.create_subprocess_exec(
                sys.executable, "-m", "voxbench.cli.main", "run", "--resume", str(path),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
            )
            for _ in range(2)
        ]  # fmt: skip
        outputs = [(await p.communicate())[0].decode() for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes[0] == 0 and codes[1] != 0, outputs
    refused = next(o for p, o in zip(procs, outputs, strict=True) if p.returncode != 0)
    assert "another voxbench process is writing this run" in refused
    assert "Traceback" not in refused
    run = RunDirectory.open_existing(path)
    assert [r.turn for r in run.turns()] == [str(i) for i in range(8)]
    assert run.info().status == "success" and run.info().resumed == 1
