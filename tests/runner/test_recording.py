"""``conversation.wav`` holds audio at another rate resampled as one signal, not chunk by
chunk (a chunk resampled alone clicks at its edges)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soxr

from voxbench.audio.wav import Audio, read_wav
from voxbench.runner.recording import RECORDING_RATE, ConversationRecorder

PCM16_STEP = 2 / 32767  # written truncated, read back over 32768


def _tone(seconds: float, rate: int, hz: float = 220.0) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def _chunks(samples: np.ndarray, rate: int, ms: int = 20) -> list[Audio]:
    step = rate * ms // 1000
    return [Audio(samples[i : i + step], rate) for i in range(0, len(samples), step)]


def test_agent_chunks_at_another_rate_equal_the_whole_stretch_resampled(tmp_path: Path) -> None:
    rate = 22_050  # eSpeak NG's rate
    tone = _tone(1.0, rate)
    recorder = ConversationRecorder(tmp_path / "conversation.wav", origin=0.0)
    plays = [recorder.add_agent(0.5, chunk) for chunk in _chunks(tone, rate)]
    # Chunks queue behind each other from where the first arrived.
    assert plays[0] == 0.5 and plays[1] == pytest.approx(0.52)
    assert recorder.agent_playback_end == 0.5 + 1.0
    recorder.flush(2.0)

    agent = read_wav(tmp_path / "conversation.wav").samples[:, 1]
    whole = soxr.resample(tone, rate, RECORDING_RATE, quality="HQ")
    start = round(0.5 * RECORDING_RATE)
    assert np.abs(agent[start : start + len(whole)] - whole).max() <= PCM16_STEP
    assert np.abs(agent[:start]).max() == 0 and np.abs(agent[start + len(whole) :]).max() == 0

    # Chunk by chunk, as before, every edge clicked (0.04 on this 0.5 tone; 0.15 from 16 kHz).
    chunked = np.concatenate(
        [soxr.resample(c.samples, rate, RECORDING_RATE, quality="HQ") for c in _chunks(tone, rate)]
    )
    assert np.abs(chunked - whole).max() > 0.03


def test_a_gap_in_playback_starts_a_new_stretch(tmp_path: Path) -> None:
    rate = 16_000
    first, second = _tone(0.3, rate), _tone(0.2, rate, hz=330.0)
    recorder = ConversationRecorder(tmp_path / "conversation.wav", origin=0.0)
    for chunk in _chunks(first, rate):
        recorder.add_agent(0.0, chunk)
    # Reading the agent channel places what the filter held back first.
    heard = recorder.agent_audio(0.0, 0.3).samples
    whole = soxr.resample(first, rate, RECORDING_RATE, quality="HQ")
    assert np.abs(heard - whole[: len(heard)]).max() < 1e-6
    assert recorder.add_agent(1.0, Audio(second, rate)) == 1.0  # after a gap: where it arrived
    recorder.flush(1.5)
    agent = read_wav(tmp_path / "conversation.wav").samples[:, 1]
    later = soxr.resample(second, rate, RECORDING_RATE, quality="HQ")
    assert np.abs(agent[24_000 : 24_000 + len(later)] - later).max() <= PCM16_STEP
    assert np.abs(agent[round(0.31 * RECORDING_RATE) : 24_000]).max() == 0


def test_many_small_chunks_record_what_one_placement_records(tmp_path: Path) -> None:
    """Pending frames grow by doubling; what is written is unchanged."""
    tone = _tone(2.0, RECORDING_RATE)
    chunked = ConversationRecorder(tmp_path / "a.wav", origin=0.0)
    for i, chunk in enumerate(_chunks(tone, RECORDING_RATE)):
        chunked.add_user(i * 0.02, chunk)
    chunked.add_agent(1.0, Audio(tone[:4800], RECORDING_RATE))
    chunked.flush(0.7)  # part of it, then the rest
    chunked.flush(3.0)
    whole = ConversationRecorder(tmp_path / "b.wav", origin=0.0)
    whole.add_user(0.0, Audio(tone, RECORDING_RATE))
    whole.add_agent(1.0, Audio(tone[:4800], RECORDING_RATE))
    whole.flush(3.0)
    assert (tmp_path / "a.wav").read_bytes() == (tmp_path / "b.wav").read_bytes()


async def test_a_16khz_target_s_user_channel_is_the_turn_resampled_whole(tmp_path: Path) -> None:
    """The target hears 20 ms chunks at 16 kHz; the recording keeps the turn's audio
    resampled once to 24 kHz, each chunk's span where the chunk was sent."""
    from tests.runner.scripted import ToneAgent
    from voxbench.benchmarks.audio import ensure_benchmark_audio
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.core.rundir import RunDirectory
    from voxbench.core.timeline import UserTurnEnded
    from voxbench.runner.config import RunConfig
    from voxbench.runner.launch import run_conversation

    agent = ToneAgent()
    config = RunConfig(
        benchmark="smoke",
        mode="audio",
        runs_dir=tmp_path / "runs",
        target="local/oracle",
        heard_asr="none",
        only_turns="0",
    )
    path = await run_conversation(config, session_factory=lambda: agent)
    run = RunDirectory.open_existing(path)
    ended = next(e for e in run.events() if isinstance(e, UserTurnEnded))
    started = next(e for e in run.events() if e.type == "turn_started" and e.turn == ended.turn)
    origin = next(e.origin for e in run.events() if e.type == "recording_started")
    files = ensure_benchmark_audio(load_benchmark("smoke"))
    turn = read_wav(files[ended.turn]).mono().resampled(RECORDING_RATE).samples
    user = read_wav(path / "conversation.wav").samples[:, 0]
    a = round((started.t - origin) * RECORDING_RATE)
    assert np.abs(user[a : a + len(turn)] - turn).max() <= PCM16_STEP
    assert sum(n for _, n in agent.received) == read_wav(files[ended.turn]).resampled(16_000).frames
