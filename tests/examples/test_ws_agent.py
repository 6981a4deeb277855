"""The reference agent in ``examples/ws_agent`` as a user runs it: a separate process that
voxbench reaches over ``websocket/<url>``, in text and audio mode, with either side ending
the turns."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from voxbench.audio.wav import read_wav
from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation

SERVER = Path(__file__).resolve().parents[2] / "examples" / "ws_agent" / "server.py"


def start_agent(*flags: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on " not in line:
        process.kill()
        raise AssertionError(line + process.stderr.read() if process.stderr else line)
    return process, line.rsplit(" ", 1)[-1].strip()


@pytest.fixture
def agent_url() -> Iterator[str]:
    process, url = start_agent()
    yield url
    process.terminate()
    process.wait(10)


@pytest.fixture
def vad_agent_url() -> Iterator[str]:
    process, url = start_agent("--vad")
    yield url
    process.terminate()
    process.wait(10)


def run(tmp_path: Path, url: str, **config: object) -> RunDirectory:
    path = asyncio.run(
        run_conversation(
            RunConfig(benchmark="smoke", target=f"websocket/{url}", runs_dir=tmp_path, **config)
        )
    )
    return RunDirectory.open_existing(path)


def test_text_mode_echoes_and_calls_its_tool(tmp_path: Path, agent_url: str) -> None:
    records = run(tmp_path, agent_url, turn_timeout=20.0).turns()
    assert [r.status for r in records] == ["ok"] * 10, [r.errors for r in records]
    assert records[0].assistant_text == "You said: " + records[0].user_text
    assert [c.name for c in records[-1].tool_calls] == ["end_session"]
    assert records[-1].tool_calls[0].result is not None
    assert records[-1].assistant_text == "Goodbye!"


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["agent_url", "vad_agent_url"])
def test_audio_mode_echoes_the_users_voice(
    tmp_path: Path, fixture: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue(fixture)
    folder = run(tmp_path, url, mode="audio", only_turns="0", heard_asr="none", turn_timeout=30.0)
    (record,) = folder.turns()
    assert record.status == "ok", record.errors
    assert record.timings.first_audio is not None and record.assistant_text
    wav = read_wav(folder.path / "conversation.wav")
    agent = wav.samples[:, 1] if wav.samples.ndim == 2 else wav.samples
    assert float(np.abs(agent).max()) > 0.05  # the echo was recorded on the agent's channel
    kinds = [e.type for e in folder.events()]
    assert ("speech_stopped" in kinds) == (fixture == "vad_agent_url")
