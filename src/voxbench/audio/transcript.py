"""What a speech recogniser returns: text and timed words."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Word:
    """One recognised word and when it was spoken, in seconds of the input audio."""

    text: str
    start: float
    end: float
    probability: float | None = None


@dataclass(frozen=True)
class Transcript:
    """A recognition result; ``words`` is empty when the engine gives no word timings."""

    text: str
    words: tuple[Word, ...] = ()
    language: str | None = None
