"""TTS engines: eSpeak NG through ctypes, OpenAI speech over HTTP (against the fake server)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from voxbench.audio.tts import TTSEngine
from voxbench.core.errors import AudioError, ConfigError, PrerequisiteError, ProviderError
from voxbench.providers.speech import default_voice, get_tts
from voxbench.testing import FakeOpenAIServer, ListScript


def test_espeak_speaks_at_22050_hz():
    tts = get_tts("local/espeak")
    assert isinstance(tts, TTSEngine)
    assert tts.name == "local/espeak"
    assert tts.sample_rate == 22050
    audio = tts.synthesize("Please register me for the streaming talk.")
    assert audio.sample_rate == 22050
    assert audio.channels == 1
    assert 1.0 < audio.duration < 5.0
    assert np.abs(audio.samples).max() > 0.1


def test_espeak_voice_and_rate_change_the_sound():
    text = "The registration desk is in the Lighthouse Lobby."
    us = get_tts("local/espeak").synthesize(text)
    gb = get_tts("local/espeak").synthesize(text, voice="en-gb")
    assert us.frames != gb.frames or not np.array_equal(us.samples, gb.samples)
    slow = get_tts("local:espeak", rate_wpm=110).synthesize(text)
    fast = get_tts("local/espeak", rate_wpm=260).synthesize(text)
    assert slow.duration > 1.5 * fast.duration
    assert get_tts("local/espeak", voice="English (Scotland)").synthesize("Hello").frames > 0


def test_espeak_is_thread_safe():
    # eSpeak varies a few samples between runs of one text, so compare lengths, not samples:
    # a race would mix buffers and give one text another's audio.
    tts = get_tts("local/espeak")
    texts = ["Turn " + "very " * i + "long." for i in range(8)]
    serial = [tts.synthesize(t).duration for t in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda t: tts.synthesize(t).duration, texts))
    assert serial == sorted(serial)
    assert parallel == pytest.approx(serial, rel=0.01)


def test_espeak_rejects_unknown_voice_and_empty_text():
    tts = get_tts("local/espeak")
    with pytest.raises(ConfigError, match="unknown eSpeak NG voice 'no-such-voice'"):
        tts.synthesize("Hello", voice="no-such-voice")
    with pytest.raises(AudioError, match="empty"):
        tts.synthesize("   ")
    assert tts.synthesize("Still fine afterwards.").frames > 0


def test_engine_names():
    with pytest.raises(ConfigError, match="unknown TTS provider 'acme'"):
        get_tts("acme/voice-1")
    with pytest.raises(ConfigError, match="unknown local TTS model"):
        get_tts("local/festival")
    with pytest.raises(ConfigError, match="provider/model"):
        get_tts("espeak")
    assert default_voice("openai/tts-1") == "alloy"
    assert default_voice("local/espeak") == "en-us"


def test_openai_tts_needs_a_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(PrerequisiteError, match="OPENAI_API_KEY"):
        get_tts("openai/tts-1")


async def test_openai_tts_against_the_fake_server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-0123456789abcdef")
    async with FakeOpenAIServer(ListScript([]), api_key="sk-test-key-0123456789abcdef") as server:
        tts = get_tts("openai/gpt-4o-mini-tts", base_url=server.url, voice="verse", speed=1.25)
        assert tts.sample_rate == 24000
        audio = await asyncio.to_thread(tts.synthesize, "Doors open at eight thirty.", "coral")
        request = server.requests[-1].json()
    assert request == {
        "model": "gpt-4o-mini-tts",
        "input": "Doors open at eight thirty.",
        "voice": "coral",
        "response_format": "pcm",
        "speed": 1.25,
    }
    assert server.requests[-1].headers["authorization"] == "Bearer sk-test-key-0123456789abcdef"
    assert audio.sample_rate == 24000
    assert audio.duration > 0.5
    assert np.abs(audio.samples).max() > 0.05


async def test_openai_tts_errors_are_classified():
    async with FakeOpenAIServer(
        ListScript([]), faults=["429@1:retry_after=7", "500@2"], api_key="right-key-123"
    ) as server:
        tts = get_tts("openai/tts-1", base_url=server.url, api_key="right-key-123")
        with pytest.raises(ProviderError) as limited:
            await asyncio.to_thread(tts.synthesize, "hello")
        with pytest.raises(ProviderError) as broken:
            await asyncio.to_thread(tts.synthesize, "hello")
        wrong = get_tts("openai/tts-1", base_url=server.url, api_key="wrong-key-456")
        with pytest.raises(ProviderError) as denied:
            await asyncio.to_thread(wrong.synthesize, "hello")
    assert (limited.value.category, limited.value.retryable, limited.value.retry_after) == (
        "rate_limit",
        True,
        7.0,
    )
    assert (broken.value.category, broken.value.retryable) == ("server", True)
    assert (denied.value.category, denied.value.retryable) == ("authentication", False)
    assert "wrong-key-456" not in str(denied.value)


def test_openai_tts_unreachable_server_is_a_connectivity_error():
    tts = get_tts("openai/tts-1", base_url="http://127.0.0.1:9/v1", api_key="k" * 20, timeout=2)
    with pytest.raises(ProviderError) as info:
        tts.synthesize("hello")
    assert info.value.category == "connectivity"


def test_espeak_speaks_a_text_the_same_whatever_was_spoken_before():
    # eSpeak carries pitch and timing state between utterances in statics no API resets: on
    # one loaded library the second and third renderings differ from the first by hundreds of
    # samples. Each synthesis runs on a freshly loaded library (the render cache is cleared
    # here so that every call really synthesizes).
    from voxbench.audio import espeak

    tts = get_tts("local/espeak")
    text = "Doors open at 8:30 in the morning, on the ground floor."
    espeak._spoken.clear()
    first = tts.synthesize(text)
    espeak._spoken.clear()
    tts.synthesize("Something else entirely, with 42 numbers.")
    again = tts.synthesize(text)
    assert np.array_equal(first.samples, again.samples)


def test_espeak_speaks_a_text_the_same_in_every_process():
    # What a process spoke before (here: another sentence first) must not change a text's
    # audio, so two runs of a benchmark record the same samples.
    import hashlib
    import subprocess
    import sys

    text = "Keziah Montgomery gave the barge-in talk. Anything else?"
    script = (
        "import hashlib, sys\n"
        "from voxbench.audio.espeak import espeak_synthesize as say\n"
        "say('A student ticket is 45 dollars, so two come to 90 dollars.')\n"
        "print(hashlib.sha256(say(sys.argv[1]).samples.tobytes()).hexdigest())\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", script, text], capture_output=True, text=True, check=True
    ).stdout.strip()
    here = hashlib.sha256(get_tts("local/espeak").synthesize(text).samples.tobytes()).hexdigest()
    assert other == here
