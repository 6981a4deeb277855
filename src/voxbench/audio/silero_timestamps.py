"""Speech timestamps exactly as Silero's ``get_speech_timestamps`` turns probabilities into
segments (silero-vad 6.0, default arguments, no maximum segment length).

Public scorers (Full-Duplex-Bench's backchannel script among them) call that function with
its defaults and ``return_seconds=True``; reproducing their numbers needs its rules, quirks
included, which differ from voxbench's own VAD post-processing (``SileroVAD``):

- windows of 512 samples at 16 kHz (256 at 8 kHz); a window at or above ``threshold`` starts
  speech; below ``neg_threshold`` (``threshold - 0.15``) it may end it; values in between
  neither start nor end anything;
- speech ends at the first quiet window once the quiet has lasted ``min_silence_ms`` (measured
  from that window's start to the current one's, so 100 ms needs four 32 ms windows);
  a loud window before then cancels the pending end;
- a segment must be longer than ``min_speech_ms`` (strictly) to be kept; one still open at the
  end of the audio ends there;
- padding: every segment grows by ``speech_pad_ms`` each side, except that two segments closer
  than twice the pad meet in the middle of their gap (integer halves);
- seconds are rounded to ``time_resolution`` decimals with Python's ``round`` (ties to even),
  and an end never passes the audio's length.

This module only post-processes probabilities; ``voxbench.audio.vad`` computes them.
"""

from __future__ import annotations

from collections.abc import Sequence


def window_samples(sample_rate: int) -> int:
    """Samples per probability window at ``sample_rate`` (8 or 16 kHz)."""
    if sample_rate not in (8000, 16000):
        raise ValueError(f"Silero windows exist at 8 and 16 kHz, not {sample_rate} Hz")
    return 512 if sample_rate == 16000 else 256


def silero_speech_samples(
    probs: Sequence[float],
    audio_samples: int,
    *,
    sample_rate: int = 16000,
    threshold: float = 0.5,
    neg_threshold: float | None = None,
    min_speech_ms: int = 250,
    min_silence_ms: int = 100,
    speech_pad_ms: int = 30,
) -> list[tuple[int, int]]:
    """Speech segments as ``(start, end)`` sample indices, padded, from per-window ``probs``."""
    hop = window_samples(sample_rate)
    low = max(threshold - 0.15, 0.01) if neg_threshold is None else neg_threshold
    min_speech = sample_rate * min_speech_ms / 1000
    min_silence = sample_rate * min_silence_ms / 1000
    pad = sample_rate * speech_pad_ms / 1000

    segments: list[list[float]] = []
    start: int | None = None
    quiet_from = 0  # where the pending end began; 0 means none pending
    for i, p in enumerate(probs):
        here = hop * i
        if p >= threshold and quiet_from:
            quiet_from = 0
        if p >= threshold and start is None:
            start = here
            continue
        if p < low and start is not None:
            if not quiet_from:
                quiet_from = here
            if here - quiet_from < min_silence:
                continue
            if quiet_from - start > min_speech:
                segments.append([start, quiet_from])
            start, quiet_from = None, 0
    if start is not None and audio_samples - start > min_speech:
        segments.append([start, audio_samples])

    for i, seg in enumerate(segments):
        if i == 0:
            seg[0] = int(max(0, seg[0] - pad))
        if i < len(segments) - 1:
            following = segments[i + 1]
            gap = following[0] - seg[1]
            if gap < 2 * pad:
                seg[1] += int(gap // 2)
                following[0] = int(max(0, following[0] - gap // 2))
            else:
                seg[1] = int(min(audio_samples, seg[1] + pad))
                following[0] = int(max(0, following[0] - pad))
        else:
            seg[1] = int(min(audio_samples, seg[1] + pad))
    return [(int(a), int(b)) for a, b in segments]


def silero_speech_seconds(
    probs: Sequence[float],
    audio_samples: int,
    *,
    sample_rate: int = 16000,
    time_resolution: int = 1,
    **rules: float | int | None,
) -> list[tuple[float, float]]:
    """``silero_speech_samples`` in seconds, rounded as ``return_seconds=True`` rounds them."""
    length = audio_samples / sample_rate
    return [
        (
            max(round(a / sample_rate, time_resolution), 0),
            min(round(b / sample_rate, time_resolution), length),
        )
        for a, b in silero_speech_samples(probs, audio_samples, sample_rate=sample_rate, **rules)  # type: ignore[arg-type]
    ]
