"""Refine frame-resolution speech boundaries to the signal's energy onset and offset.

Silero's boundaries sit on a 32 ms grid and trail the speech by up to a few frames. Near
each boundary we compute a 5 ms RMS envelope in 1 ms steps and find where it crosses a
level set per segment: 35 dB under the segment's loudest frame, and at least 10 dB over the
noise floor of the non-speech frames (so background noise does not pull boundaries out).
"""

from __future__ import annotations

import numpy as np

_RMS_WINDOW_S = 0.005
_HOP_S = 0.001
_BELOW_PEAK_DB = 35.0
_ABOVE_NOISE_DB = 10.0
_FLOOR_DB = -90.0
_START_BEFORE, _START_AFTER = 3, 2  # frames searched around a coarse start
_END_BEFORE, _END_AFTER = 4, 3  # and around a coarse end (Silero lets go late)


def _db(power: np.ndarray) -> np.ndarray:
    return 10.0 * np.log10(np.maximum(power, 10 ** (_FLOOR_DB / 10)))


def refine_segments(
    signal: np.ndarray, rate: int, frames: list[tuple[int, int]], frame_s: float
) -> list[tuple[float | None, float | None]]:
    """Refined (start, end) seconds for each [start, end) frame pair; None where none is found."""
    hop = round(frame_s * rate)
    n_frames = len(signal) // hop
    frame_db = _db((signal[: n_frames * hop].reshape(n_frames, hop) ** 2).mean(axis=1))
    speech = np.zeros(n_frames, bool)
    for a, b in frames:
        speech[a:b] = True
    quiet = frame_db[~speech] if (~speech).any() else frame_db
    noise_db = float(np.percentile(quiet, 10)) if quiet.size else _FLOOR_DB

    out: list[tuple[float | None, float | None]] = []
    for k, (a, b) in enumerate(frames):
        peak_db = float(frame_db[a:b].max()) if b > a and a < n_frames else noise_db
        level_db = max(noise_db + _ABOVE_NOISE_DB, peak_db - _BELOW_PEAK_DB)
        prev_end = frames[k - 1][1] * hop if k else 0
        next_start = frames[k + 1][0] * hop if k + 1 < len(frames) else len(signal)
        lo = max(prev_end, (a - _START_BEFORE) * hop)
        hi = min(b * hop, (a + _START_AFTER) * hop)
        start = _first_crossing(signal, lo, hi, rate, level_db)
        lo = max(a * hop, (b - _END_BEFORE) * hop)
        hi = min(next_start, (b + _END_AFTER) * hop, len(signal))
        end = _last_crossing(signal, lo, hi, rate, level_db)
        out.append((start, end))
    return out


def _envelope(signal: np.ndarray, lo: int, hi: int, rate: int) -> tuple[np.ndarray, int, int]:
    """5 ms RMS (in dB) of windows starting every 1 ms in [lo, hi); window and hop in samples."""
    win = max(1, round(_RMS_WINDOW_S * rate))
    hop = max(1, round(_HOP_S * rate))
    part = signal[lo : min(len(signal), hi + win)].astype(np.float64)
    if len(part) < win:
        return np.zeros(0), win, hop
    csum = np.concatenate([[0.0], np.cumsum(part * part)])
    starts = np.arange(0, min(hi - lo, len(part) - win + 1), hop)
    power = (csum[starts + win] - csum[starts]) / win
    return _db(power), win, hop


def _first_crossing(
    signal: np.ndarray, lo: int, hi: int, rate: int, level_db: float
) -> float | None:
    if hi <= lo:
        return None
    env, win, hop = _envelope(signal, lo, hi, rate)
    above = np.flatnonzero(env >= level_db)
    if above.size == 0:
        return None
    return (lo + above[0] * hop + win / 2) / rate


def _last_crossing(
    signal: np.ndarray, lo: int, hi: int, rate: int, level_db: float
) -> float | None:
    if hi <= lo:
        return None
    env, win, hop = _envelope(signal, lo, hi, rate)
    above = np.flatnonzero(env >= level_db)
    if above.size == 0:
        return None
    return (lo + above[-1] * hop + win / 2) / rate
