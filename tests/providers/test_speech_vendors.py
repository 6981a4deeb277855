"""Deepgram (streaming STT), Cartesia and ElevenLabs (streaming TTS) against their fakes,
alone and as the STT and TTS of a cascade."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from tests.targets.realtime.conftest import assert_perfect
from voxbench.audio.wav import Audio
from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.errors import PrerequisiteError, ProviderError
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import evaluate_run
from voxbench.providers.speech import get_asr, get_tts
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.testing.scripts import GoldenScript, ListScript
from voxbench.testing.speech_vendors import (
    FakeCartesiaServer,
    FakeDeepgramServer,
    FakeElevenLabsServer,
)

KEY = "vendor-test-key-123456"


def tone(seconds: float, rate: int = 24000) -> Audio:
    t = np.arange(round(seconds * rate)) / rate
    return Audio((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), rate)


async def test_deepgram_streams_audio_and_reads_final_results() -> None:
    script = ListScript([], transcripts=["Hello there, Priya."])
    async with FakeDeepgramServer(script, api_key=KEY) as server:
        asr = get_asr("deepgram/nova-3", api_key=KEY, base_url=server.url)
        transcript = await asyncio.to_thread(asr.transcribe, tone(1.0))
    assert transcript.text == "Hello there, Priya."
    assert [w.text for w in transcript.words] == ["Hello", "there,", "Priya."]
    assert transcript.words[-1].end == pytest.approx(1.0, abs=0.01)
    (handshake,) = server.handshakes
    assert handshake["auth"] == "Token" and handshake["query"]["model"] == "nova-3"
    assert handshake["query"]["sample_rate"] == "16000"
    assert server.received == [{"type": "CloseStream"}]


async def test_deepgram_refused_key_is_an_authentication_error() -> None:
    async with FakeDeepgramServer(ListScript([]), api_key=KEY) as server:
        asr = get_asr("deepgram/nova-3", api_key="wrong-key-000000", base_url=server.url)
        with pytest.raises(ProviderError) as info:
            await asyncio.to_thread(asr.transcribe, tone(0.2))
    assert info.value.category == "authentication" and info.value.status == 401
    assert "DEEPGRAM_API_KEY" in str(info.value)  # the shared classification names the fix
    assert "wrong-key" not in str(info.value)


async def test_deepgram_wrong_endpoint_is_not_found() -> None:
    async with FakeDeepgramServer(ListScript([]), api_key=KEY) as server:
        asr = get_asr("deepgram/nova-3", api_key=KEY, base_url=server.url + "/elsewhere")
        with pytest.raises(ProviderError) as info:
            await asyncio.to_thread(asr.transcribe, tone(0.2))
    assert (info.value.category, info.value.retryable) == ("not_found", False)


@pytest.mark.parametrize(
    ("name", "server_cls"),
    [
        ("cartesia/sonic-2", FakeCartesiaServer),
        ("elevenlabs/eleven_flash_v2_5", FakeElevenLabsServer),
    ],
)
async def test_streaming_tts_returns_24khz_speech(name: str, server_cls: type) -> None:
    async with server_cls(api_key=KEY) as server:
        tts = get_tts(name, api_key=KEY, base_url=server.url)
        audio = await asyncio.to_thread(tts.synthesize, "one two three four five", None)
        bad = get_tts(name, api_key="wrong-key-000000", base_url=server.url)
        with pytest.raises(ProviderError) as info:
            await asyncio.to_thread(bad.synthesize, "x", None)
    assert audio.sample_rate == 24000 and audio.duration == pytest.approx(2.0, abs=0.05)
    assert info.value.category == "authentication"
    (request,) = server.requests
    if name.startswith("cartesia"):
        assert request["model_id"] == "sonic-2" and request["transcript"].startswith("one")
        assert request["output_format"] == {
            "container": "raw", "encoding": "pcm_s16le", "sample_rate": 24000,
        }  # fmt: skip
    else:
        assert request["model_id"] == "eleven_flash_v2_5"
        assert request["output_format"] == "pcm_24000" and request["voice_id"]


def test_a_missing_vendor_key_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("DEEPGRAM_API_KEY", "CARTESIA_API_KEY", "ELEVENLABS_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(PrerequisiteError, match="DEEPGRAM_API_KEY"):
        get_asr("deepgram/nova-3")
    with pytest.raises(PrerequisiteError, match="CARTESIA_API_KEY"):
        get_tts("cartesia/sonic-2")
    with pytest.raises(PrerequisiteError, match="ELEVENLABS_API_KEY"):
        get_tts("elevenlabs/eleven_flash_v2_5")


async def test_a_cascade_hears_with_deepgram_and_speaks_with_cartesia(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    smoke = load_benchmark("smoke")
    async with (
        FakeDeepgramServer(GoldenScript(smoke)) as deepgram,
        FakeCartesiaServer() as cartesia,
    ):
        monkeypatch.setenv("DEEPGRAM_API_KEY", KEY)
        monkeypatch.setenv("CARTESIA_API_KEY", KEY)
        monkeypatch.setenv("DEEPGRAM_BASE_URL", deepgram.url)
        monkeypatch.setenv("CARTESIA_BASE_URL", cartesia.url)
        config = RunConfig(
            benchmark="smoke",
            target="cascade/local/oracle",
            stt="deepgram/nova-3",
            tts="cartesia/sonic-2",
            mode="audio",
            heard_asr="none",
            clock="virtual",
            only_turns="0-2",
            runs_dir=tmp_path,
        )
        path = await run_conversation(config)
    result = await asyncio.to_thread(evaluate_run, path)
    run = RunDirectory.open_existing(path)
    assert_perfect(run, result.card, result.judgments)
    assert [r.user_transcript for r in run.turns()] == [t.text for t in smoke.turns[:3]]
    assert len(cartesia.requests) >= 3 and deepgram.responses == 3


async def test_elevenlabs_speaks_the_simulated_users_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from voxbench.benchmarks.audio import ensure_benchmark_audio

    smoke = load_benchmark("smoke")
    async with FakeElevenLabsServer() as server:
        monkeypatch.setenv("ELEVENLABS_API_KEY", KEY)
        monkeypatch.setenv("ELEVENLABS_BASE_URL", server.url)
        paths = await asyncio.to_thread(
            ensure_benchmark_audio, smoke, "elevenlabs/eleven_flash_v2_5", None, tmp_path
        )
    assert len(paths) == len(smoke.turns) and all(p.is_file() for p in paths.values())
    assert [r["text"] for r in server.requests] == [t.text for t in smoke.turns]
