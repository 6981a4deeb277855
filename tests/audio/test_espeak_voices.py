"""Other voices and speaking rates for the simulated user: ``VOICE@WPM`` (issue 31)."""

from __future__ import annotations

import pytest

from voxbench.audio.espeak import EspeakTTS, voice_and_rate
from voxbench.core.errors import ConfigError

TEXT = "Could you book the small room for four people tomorrow morning?"


def test_a_voice_with_a_rate_speaks_at_that_rate() -> None:
    tts = EspeakTTS()
    slow = tts.synthesize(TEXT, "en-gb-scotland@110")
    fast = tts.synthesize(TEXT, "en-gb-scotland@220")
    assert slow.duration > 1.6 * fast.duration
    plain = tts.synthesize(TEXT, "en-gb-scotland")
    assert (
        plain.samples.tolist()
        == tts.synthesize(TEXT, f"en-gb-scotland@{tts.rate_wpm}").samples.tolist()
    )
    assert plain.samples.tolist() != tts.synthesize(TEXT, "en-us").samples.tolist()  # an accent


def test_a_bad_rate_names_the_voice() -> None:
    assert voice_and_rate("en-us@150wpm", 175) == ("en-us", 150)
    assert voice_and_rate("en-029", 175) == ("en-029", 175)
    for bad in ("en-us@fast", "en-us@20", "en-us@"):
        with pytest.raises(ConfigError, match="speaking rate"):
            voice_and_rate(bad, 175)
