"""Shared pieces of the audio judge tests: a spoken clip, a bound rubric, a fake judge."""

from __future__ import annotations

import numpy as np

from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.wav import Audio
from voxbench.judging.audio.rubric import BoundRubric, load_rubric

LINE = "Thank you for calling. Your booking reference is four two seven."


def spoken(text: str = LINE, voice: str = "en-gb") -> Audio:
    """eSpeak NG speech (offline, instant)."""
    return espeak_synthesize(text, voice)


def silence(seconds: float, rate: int = 22050) -> Audio:
    return Audio(np.zeros(int(seconds * rate), np.float32), rate)


def accent(target: str = "british") -> BoundRubric:
    return load_rubric("accent").bind({"target_accent": target})
