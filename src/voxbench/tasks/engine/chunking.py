"""Where a long clip is cut into chunks: in a silence between speech, near the chunk limit.

A chunk ends in a silence within the last ``search_fraction`` of ``max_seconds`` (the one
with the most room there; ties: the latest), at the middle of that silence as far as the
search window allows (a silence running past the limit is cut at the limit); only
where that window holds no silence of ``MIN_SILENCE_SECONDS`` is the chunk cut hard at
``max_seconds``, and the next chunk then starts ``overlap_seconds`` earlier, so a word the
cut split is heard whole in one of them. A silence cut splits no word: the next chunk starts
exactly where the last ended, and their transcripts are joined with a space
(``join_chunks``). Speech comes from Silero VAD (``voxbench.audio.vad``) run once over the
whole clip, so the cuts depend only on the audio (no timing is involved): the same in every
run, at any load, in a worker process or a thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from voxbench.audio.vad import SpeechSegment, detect_speech
from voxbench.audio.wav import Audio

MIN_SILENCE_SECONDS = 0.15
"""The shortest pause between speech a chunk may end in (a word's own stop closures are
shorter; Silero VAD also bridges pauses under 100 ms)."""

CutKind = Literal["silence", "hard", "truncated", "end"]
"""How a piece ends: in a silence, by a hard cut at ``max_seconds`` (the next piece overlaps
it), where ``truncate`` stopped the clip, or at the clip's end."""


@dataclass(frozen=True)
class Piece:
    """One chunk of a clip: where it starts and ends (seconds) and how it ends."""

    start: float
    end: float
    cut: CutKind

    def row(self) -> dict[str, float | str]:
        """As ``records.jsonl`` keeps it (seconds to the 0.1 ms)."""
        return {"start": round(self.start, 4), "end": round(self.end, 4), "cut": self.cut}


def silences(
    speech: Sequence[SpeechSegment], duration: float, min_seconds: float = MIN_SILENCE_SECONDS
) -> list[tuple[float, float]]:
    """The stretches without speech (before, between and after the segments) lasting at
    least ``min_seconds``, in order."""
    gaps, position = [], 0.0
    for segment in sorted(speech, key=lambda s: s.start):
        if segment.start - position >= min_seconds:
            gaps.append((position, segment.start))
        position = max(position, segment.end)
    if duration - position >= min_seconds:
        gaps.append((position, duration))
    return gaps


def silence_cut(gaps: Sequence[tuple[float, float]], low: float, high: float) -> float | None:
    """Where to end a chunk whose search window is ``[low, high]``: in the silence with the
    most room inside the window (ties: the latest), as near its middle as the window allows;
    None when no silence reaches into the window."""
    best: tuple[float, float, float, float] | None = None  # room, its end, the silence
    for g0, g1 in gaps:
        a, b = max(g0, low), min(g1, high)
        if b > a and (best is None or (round(b - a, 6), b) > (round(best[0], 6), best[1])):
            best = (b - a, b, g0, g1)
    if best is None:
        return None
    _, b, g0, g1 = best
    return min(max((g0 + g1) / 2, max(g0, low)), b)


def plan_pieces(
    duration: float,
    gaps: Sequence[tuple[float, float]] | None,
    *,
    max_seconds: float,
    overlap_seconds: float,
    search_fraction: float,
) -> list[Piece]:
    """The chunks of a clip of ``duration`` seconds whose silences are ``gaps`` (None: no
    search, every cut hard). Each piece is at most ``max_seconds`` long."""
    pieces: list[Piece] = []
    start = 0.0
    while duration - start > max_seconds:
        limit = start + max_seconds
        cut = None
        if gaps is not None and search_fraction > 0:
            cut = silence_cut(gaps, limit - search_fraction * max_seconds, limit)
        if cut is not None:
            pieces.append(Piece(start, cut, "silence"))
            start = cut
        else:
            pieces.append(Piece(start, limit, "hard"))
            start = limit - overlap_seconds
    pieces.append(Piece(start, duration, "end"))
    return pieces


def chunk_pieces(
    audio: Audio, *, max_seconds: float, overlap_seconds: float, search_fraction: float
) -> list[Piece]:
    """Where to cut ``audio`` (already longer than ``max_seconds``): on its VAD silences."""
    gaps = None
    if search_fraction > 0:
        gaps = silences(detect_speech(audio), audio.duration)
    return plan_pieces(
        audio.duration,
        gaps,
        max_seconds=max_seconds,
        overlap_seconds=overlap_seconds,
        search_fraction=search_fraction,
    )
