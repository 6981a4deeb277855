"""``voxbench judge-audio FILE``: privacy by scope, a timeout for realtime judges, a non-zero
exit when nothing was decided, calls and cache hits shown, clips judged concurrently
(issue 28, defects 3 and 5)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cli_invoke import invoke
from voxbench.audio.wav import Audio, write_wav
from voxbench.judging.audio.clients import HeardAnswer
from voxbench.judging.audio.engine import RubricJudge
from voxbench.judging.audio.segments import Clip
from voxbench.testing.audio_judge import ScriptedAudioJudge, form_answer
from voxbench.testing.openai_realtime import FakeRealtimeJudgeServer

from .helpers import accent, spoken

ACCENT = ["--rubric", "accent", "-o", "target_accent=RP"]
REALTIME = ["--judge", "openai-realtime/gpt-realtime", "--judge-base-url"]


@contextmanager
def judge_server(script: ScriptedAudioJudge, **kwargs: Any) -> Iterator[FakeRealtimeJudgeServer]:
    """The realtime judge fake on its own loop (the command runs its own)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = FakeRealtimeJudgeServer(script, **kwargs)
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def _conversation(path: Path, caller: np.ndarray, agent: np.ndarray, rate: int) -> None:
    """A two-channel recording like a run's conversation.wav: caller left, agent right."""
    write_wav(path, Audio(np.stack([caller, agent], axis=1).astype(np.float32), rate))


def test_scope_agent_sends_only_the_agent_channel(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    agent = spoken("Your booking is confirmed.", voice="en-gb")
    rate, n = agent.sample_rate, len(agent.samples)
    caller = 0.5 * np.sin(2 * np.pi * 440 * np.arange(n) / rate)  # the caller's "voice"
    quiet = np.zeros(n)
    _conversation(tmp_path / "agent_silent.wav", caller, quiet, rate)
    _conversation(tmp_path / "agent_speaks.wav", quiet, agent.samples, rate)
    script = ScriptedAudioJudge([form_answer({"accent": 4})])
    with judge_server(script) as server:
        for name in ("agent_silent.wav", "agent_speaks.wav"):
            code, out, err = invoke(monkeypatch, capsys, "judge-audio", str(tmp_path / name),
                                    *ACCENT, *REALTIME, server.url, "--no-cache")  # fmt: skip
            assert code == 0, err
    silent, speaks = script.heard
    assert np.max(np.abs(silent.audio)) < 1e-3  # not one sample of the caller went out
    assert np.sqrt(np.mean(speaks.audio**2)) > 0.5 * np.sqrt(np.mean(agent.samples**2))


def test_every_judgment_undecided_exits_non_zero(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    write_wav(tmp_path / "a.wav", spoken())
    with judge_server(ScriptedAudioJudge(["I cannot tell."])) as server:
        code, out, err = invoke(monkeypatch, capsys, "judge-audio", str(tmp_path / "a.wav"),
                                *ACCENT, *REALTIME, server.url)  # fmt: skip
    assert code == 4, (out, err)
    assert "undecided" in out and "every judgment is undecided" in err
    assert "2 calls made, 0 from cache" in out


def test_the_realtime_timeout_is_an_option(monkeypatch, capsys, tmp_path: Path) -> None:
    """A judge that hangs once answers on the retry within ``--timeout`` (the fixed 120 s
    would hold the command for two minutes)."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    write_wav(tmp_path / "a.wav", spoken())
    script = ScriptedAudioJudge([form_answer({"accent": 3})])
    with judge_server(script, faults=["hang@1"]) as server:
        code, out, err = invoke(monkeypatch, capsys, "judge-audio", str(tmp_path / "a.wav"),
                                *ACCENT, *REALTIME, server.url, "--timeout", "1", "--json")  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["files"][0]["criteria"]["accent"]["mean"] == 3
    assert data["calls"] == 2 and data["from_cache"] == 0


class _SlowJudge:
    """An in-process judge that counts how many calls are in flight at once."""

    name = "fake/slow"
    endpoint = "memory://slow"

    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0

    async def hear(self, instructions: str, request: str, audio: Audio, **_: Any) -> HeardAnswer:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.05)
        self.in_flight -= 1
        return HeardAnswer(form_answer({"accent": 4}))

    async def write(self, system: str, user: str) -> str:
        return ""

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("concurrency", [1, 3])
async def test_clips_are_judged_concurrently_up_to_the_limit(concurrency: int) -> None:
    client = _SlowJudge()
    clip = spoken()
    clips = [Clip(f"c{i}", Audio(clip.samples * (1 - i / 10), clip.sample_rate)) for i in range(6)]
    judge = RubricJudge(client, accent(), concurrency=concurrency)
    results = await judge.judge_clips(clips)
    assert [r.criteria["accent"].mean for r in results] == [4] * 6
    assert client.most == concurrency
