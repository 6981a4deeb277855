"""Shared audio fixtures: eSpeak speech with known boundaries."""

from __future__ import annotations

import numpy as np
import pytest

from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.wav import Audio, concatenate


def trimmed(audio: Audio, floor: float = 1e-4) -> Audio:
    """``audio`` without its leading and trailing digital silence."""
    loud = np.flatnonzero(np.abs(audio.samples) > floor)
    return Audio(audio.samples[loud[0] : loud[-1] + 1], audio.sample_rate)


@pytest.fixture(scope="session")
def spoken_with_gaps() -> tuple[Audio, list[tuple[float, float]]]:
    """Three utterances ("Yes." among them) between known silences; returns audio and truth."""
    utterances = [
        "What time do the doors open tomorrow morning",
        "Yes.",
        "Please register me for the streaming talk",
    ]
    parts = [trimmed(espeak_synthesize(text)) for text in utterances]
    rate = parts[0].sample_rate
    gaps = [0.7, 1.3, 0.9, 0.6]
    pieces, truth, t = [Audio.silence(gaps[0], rate)], [], gaps[0]
    for part, gap in zip(parts, gaps[1:], strict=True):
        truth.append((t, t + part.duration))
        pieces += [part, Audio.silence(gap, rate)]
        t += part.duration + gap
    return concatenate(pieces), truth
