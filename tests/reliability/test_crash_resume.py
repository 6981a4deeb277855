"""kill -9 at each recording step of a run, then ``--resume``: the artifacts equal an
uninterrupted run's (issue 11).

A child process runs the smoke benchmark against the oracle and kills itself with SIGKILL
at one chosen write: before a turn starts, mid-turn after a tool result, between a turn's
checkpoint and its transcript line, halfway through a transcript line, and just before
``run_finished``. The run is then resumed in this process and compared with a run that was
never interrupted.
"""

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
from typing import Any

import pytest

import voxbench
from voxbench.analysis import analyse_run
from voxbench.analysis.timeline import turn_windows
from voxbench.audio.wav import read_wav
from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import resume_run, run_conversation
from voxbench.testing.secrets_scan import find_secrets

KILLED_RUN = textwrap.dedent(
    """
    import asyncio, json, os, signal, sys
    from pathlib import Path
    from voxbench.core import rundir
    from voxbench.runner.launch import run_conversation
    from tests.reliability.test_crash_resume import config

    run_path, step, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    kind, _, turn = step.partition("@")

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    write_event = rundir.RunDirectory._write_event
    append_jsonl = rundir.append_jsonl

    def killing_write_event(self, event):
        if kind == "before_turn" and event.type == "turn_started" and event.turn == turn:
            die()
        if kind == "before_run_finished" and event.type == "run_finished":
            die()
        written = write_event(self, event)
        if kind == "after_tool_result" and event.type == "tool_result" and event.turn == turn:
            die()
        if kind == "after_heard_text" and event.type == "agent_speech" and event.turn == turn:
            die()
        return written

    def killing_append(path, row, *, sync=True):
        if path.name == rundir.RunDirectory.TRANSCRIPT and row.get("turn") == turn:
            if kind == "between_checkpoint_and_transcript":
                die()
            if kind == "torn_transcript_line":
                with path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(row)[:40])
                    f.flush()
                    os.fsync(f.fileno())
                die()
        append_jsonl(path, row, sync=sync)

    rundir.RunDirectory._write_event = killing_write_event
    rundir.append_jsonl = killing_append
    asyncio.run(run_conversation(config(run_path.parent, mode), run_path=run_path))
    """
)

REPO = Path(__file__).resolve().parents[2]

STEPS = {
    "before_turn@3": 3,
    "after_tool_result@4": 4,
    "between_checkpoint_and_transcript@5": 5,
    "torn_transcript_line@6": 6,
    "before_run_finished": 10,
}
"""Each kill point → how many turns were complete when it struck."""

AUDIO_STEPS = {"after_tool_result@1": 1, "between_checkpoint_and_transcript@2": 2}
"""Kill points of the audio run (turns 0-3; the recording is appended to on resume)."""


def config(runs_dir: Path, mode: str) -> RunConfig:
    """The run that is killed, resumed and compared: the oracle, in text or audio."""
    if mode == "text":
        return RunConfig(benchmark="smoke", runs_dir=runs_dir)
    if mode == "audio_heard":  # the agent's replies heard back by the local ASR, as by default
        return RunConfig(benchmark="smoke", mode="audio", only_turns="0-3", runs_dir=runs_dir)
    return RunConfig(
        benchmark="smoke", mode="audio", only_turns="0-3", heard_asr="none", runs_dir=runs_dir
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Runs of the same benchmark that were never interrupted, by mode."""
    runs = tmp_path_factory.mktemp("reference")
    return {"text": asyncio.run(run_conversation(config(runs, "text")))}


@pytest.fixture(scope="module")
def audio_reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An audio run that was never interrupted."""
    runs = tmp_path_factory.mktemp("audio_reference")
    return asyncio.run(run_conversation(config(runs, "audio")))


def _kill_at(tmp_path: Path, step: str, mode: str) -> Path:
    script = tmp_path / "killed_run.py"
    script.write_text(KILLED_RUN)
    run_path = tmp_path / "runs" / "smoke" / "killed"
    # The child imports this module (for ``config``) and the voxbench this test imported.
    source = Path(voxbench.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(source)])}
    done = subprocess.run(
        [sys.executable, str(script), str(run_path), step, mode], cwd=tmp_path, env=env, timeout=300
    )
    assert done.returncode == -9  # it died at the chosen step, not before or after
    return run_path


def _transcript(path: Path) -> list[dict[str, Any]]:
    # Everything but the clock and the target's call ids: stamps differ between any two runs,
    # and a session numbers its calls from 1 (a resumed run opens a new session).
    rows = []
    for record in RunDirectory.open_existing(path).turns():
        row = record.model_dump(mode="json", exclude={"timings"})
        for call in row["tool_calls"]:
            call.pop("t_requested", None)
            call.pop("call_id", None)
        rows.append(row)
    return rows


def _checkpoints(path: Path) -> list[dict[str, Any]]:
    text = (path / RunDirectory.CHECKPOINTS).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_run_killed_at_any_step_resumes_to_the_same_artifacts(
    tmp_path: Path, reference: dict[str, Path], step: str
) -> None:
    run_path = _kill_at(tmp_path, step, "text")
    killed = RunDirectory.open_existing(run_path)
    assert killed.info().status == "started"
    assert len(killed.turns()) == STEPS[step]

    asyncio.run(resume_run(run_path))

    resumed = RunDirectory.open_existing(run_path)
    assert resumed.info().status == "success"
    assert _transcript(run_path) == _transcript(reference["text"])
    assert _checkpoints(run_path) == _checkpoints(reference["text"])  # one per turn, same state
    types = [e.type for e in resumed.events()]
    assert types.count("run_finished") == 1 and types.count("run_resumed") == 1
    # An aborted attempt's events stay, superseded by the turn's last turn_started: the
    # analysis measures each turn once, from its last attempt.
    events = resumed.events()
    assert [t.turn for t in analyse_run(resumed).turns] == [str(i) for i in range(10)]
    windows = turn_windows(events)
    for turn in map(str, range(10)):
        last_start = max(
            i for i, e in enumerate(events) if e.turn == turn and e.type == "turn_started"
        )
        last_attempt = [e for e in events[last_start:] if e.turn == turn]
        assert windows[turn] == turn_windows(last_attempt)[turn]
    assert find_secrets(run_path) == []


@pytest.mark.parametrize("step", sorted(AUDIO_STEPS))
def test_an_audio_run_killed_mid_recording_resumes_to_the_same_turns(
    tmp_path: Path, audio_reference: Path, step: str
) -> None:
    run_path = _kill_at(tmp_path, step, "audio")
    killed = RunDirectory.open_existing(run_path)
    assert len(killed.turns()) == AUDIO_STEPS[step]
    recorded = read_wav(run_path / RunDirectory.RECORDING).duration  # valid after the kill

    asyncio.run(resume_run(run_path))

    resumed = RunDirectory.open_existing(run_path)
    assert resumed.info().status == "success"
    assert _transcript(run_path) == _transcript(audio_reference)
    assert _checkpoints(run_path) == _checkpoints(audio_reference)
    assert read_wav(run_path / RunDirectory.RECORDING).duration > recorded  # appended to
    measured = analyse_run(resumed)
    assert [t.turn for t in measured.turns] == ["0", "1", "2", "3"]
    assert all(t.first_audio_latency is not None for t in measured.turns)


INTERRUPTED_RUN = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.runner.config import RunConfig
    from voxbench.runner.launch import run_conversation
    from voxbench.targets.oracle import OracleSession

    bench = load_benchmark("smoke")
    run_path, marker = Path(sys.argv[1]), Path(sys.argv[2])

    class StallsOnTurn2(OracleSession):
        async def respond(self, text):
            if text == bench.turns[2].text:
                marker.write_text("waiting")
                await asyncio.sleep(3600)
            await super().respond(text)

    asyncio.run(run_conversation(
        RunConfig(benchmark="smoke", runs_dir=run_path.parent),
        session_factory=lambda: StallsOnTurn2(bench), run_path=run_path))
    """
)


@pytest.mark.slow
def test_ctrl_c_mid_turn_leaves_a_cancelled_resumable_run(tmp_path: Path) -> None:
    script = tmp_path / "interrupted_run.py"
    script.write_text(INTERRUPTED_RUN)
    run_path = tmp_path / "runs" / "smoke" / "interrupted"
    marker = tmp_path / "marker"
    source = Path(voxbench.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(source)}
    child = subprocess.Popen(
        [sys.executable, str(script), str(run_path), str(marker)],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(1200):  # polls, not a time limit: the child may be slow to start
            if marker.exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert marker.exists(), "the run never reached turn 2"
        child.send_signal(signal.SIGINT)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    run = RunDirectory.open_existing(run_path)
    assert run.info().status == "cancelled" and run.info().ended_at is not None
    assert [r.turn for r in run.turns()] == ["0", "1"]
    asyncio.run(resume_run(run_path))
    assert [r.turn for r in run.turns()] == [str(i) for i in range(10)]
    assert run.info().status == "success"


@pytest.mark.slow
def test_two_kills_and_resumes_hear_what_an_uninterrupted_audio_run_hears(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Issue 32 item 5: the heard text (the local ASR of the agent's audio) of a run killed
    twice and resumed twice equals an uninterrupted run's, turn by turn.

    The first kill strikes when turn 1's heard text is in but the turn is not yet kept: its
    ASR ran beside turn 2, which may have begun (its events are on the timeline)."""
    uninterrupted = asyncio.run(
        run_conversation(config(tmp_path_factory.mktemp("heard_reference"), "audio_heard"))
    )
    run_path = _kill_at(tmp_path, "after_heard_text@1", "audio_heard")
    assert len(RunDirectory.open_existing(run_path).turns()) == 1
    script = tmp_path / "killed_resume.py"
    script.write_text(
        KILLED_RUN.replace(
            "asyncio.run(run_conversation(config(run_path.parent, mode), run_path=run_path))",
            "from voxbench.runner.launch import resume_run\nasyncio.run(resume_run(run_path))",
        )
    )
    source = Path(voxbench.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(source)])}
    second = subprocess.run(
        [sys.executable, str(script), str(run_path), "between_checkpoint_and_transcript@2",
         "audio_heard"], cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert second.returncode == -9
    assert len(RunDirectory.open_existing(run_path).turns()) == 2
    asyncio.run(resume_run(run_path))
    resumed, reference = _transcript(run_path), _transcript(uninterrupted)
    assert [r["heard_text"] for r in resumed] == [r["heard_text"] for r in reference]
    assert all(r["heard_text"] for r in resumed)
    assert resumed == reference
