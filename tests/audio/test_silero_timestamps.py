"""Silero's own post-processing, on hand-built probabilities with hand-computed segments
(16 kHz: one window is 512 samples; 100 ms of silence needs 4 quiet windows; pad 30 ms = 480)."""

from __future__ import annotations

import pytest

from voxbench.audio.silero_timestamps import silero_speech_samples, silero_speech_seconds

LOUD, QUIET, BETWEEN = 0.9, 0.1, 0.4


def test_two_segments_padded_and_rounded_to_a_tenth() -> None:
    probs = [QUIET] * 2 + [LOUD] * 11 + [QUIET] * 8 + [LOUD] * 10 + [QUIET] * 10
    # Speech 2..12 ends at window 13 (declared at 17); speech 21..30 ends at 31.
    assert silero_speech_samples(probs, 41 * 512) == [
        (1024 - 480, 6656 + 480),
        (10752 - 480, 15872 + 480),
    ]
    assert silero_speech_seconds(probs, 41 * 512) == [(0.0, 0.4), (0.6, 1.0)]


def test_in_between_values_short_segments_and_an_open_end() -> None:
    probs = (
        [0.6] + [LOUD] * 8  # speech from window 0
        + [QUIET, BETWEEN, QUIET, 0.6]  # a loud window cancels the pending end
        + [QUIET] * 5  # quiet from window 13: ends at 6656
        + [LOUD] * 2 + [QUIET] * 6  # 1024 samples of speech: too short, dropped
        + [LOUD] * 14  # open at the end of the audio
    )  # fmt: skip
    samples = 40 * 512 - 100
    assert silero_speech_samples(probs, samples) == [(0, 7136), (13312 - 480, samples)]
    # The last end is clamped to the audio's length, not rounded past it.
    assert silero_speech_seconds(probs, samples) == [(0.0, 0.4), (0.8, samples / 16000)]


def test_close_segments_meet_in_the_middle_of_their_gap() -> None:
    probs = [QUIET] + [LOUD] * 10 + [QUIET] * 5 + [LOUD] * 10 + [QUIET] * 5
    segments = silero_speech_samples(probs, 31 * 512, speech_pad_ms=100)
    # Gap 8192 - 5632 = 2560 < 2 × 1600: each side takes half of it.
    assert segments == [(0, 6912), (6912, 13312 + 1600)]


def test_a_segment_must_be_strictly_longer_than_the_minimum() -> None:
    exactly = [LOUD] * 8 + [QUIET] * 5  # 8 windows = 4096 samples > 4000: kept
    assert len(silero_speech_samples(exactly, 13 * 512)) == 1
    assert silero_speech_samples(exactly, 13 * 512, min_speech_ms=256) == []  # 4096 is not > 4096


def test_only_silero_rates() -> None:
    with pytest.raises(ValueError, match="8 and 16 kHz"):
        silero_speech_samples([LOUD], 512, sample_rate=24000)
