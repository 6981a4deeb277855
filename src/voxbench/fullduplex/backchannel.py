"""Backchannel scoring: VAD segments of the output, classified by length and words.

Every speech segment of the model's output is classified: longer than 3 s is a take-over;
otherwise the ASR words overlapping it decide (more than 3 words → take-over; under 1 s
with at most 2 words → backchannel; anything else → take-over). Frequency is backchannels
per output second; JSD compares where the backchannels fall (0.2 s bins) with the human
ground truth of ``icc_gt_distribution.json`` as scipy's Jensen-Shannon *distance*.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from voxbench.fullduplex.annotations import TimedWord

WINDOW_S = 0.2
EPSILON = 1e-10
LONG_SEGMENT_S = 3.0
SHORT_SEGMENT_S = 1.0
MAX_WORDS = 3
MAX_BACKCHANNEL_WORDS = 2
NO_BACKCHANNEL_JSD = 1.0
"""The public scripts' placeholder JSD for a sample without any backchannel."""

Span = tuple[float, float]


@dataclass
class BackchannelResult:
    """One sample's backchannel verdict."""

    tor: int
    frequency: float
    jsd: float | None
    backchannels: list[Span] = field(default_factory=list)
    take_overs: list[Span] = field(default_factory=list)


def words_overlapping(segment: Span, words: Sequence[TimedWord]) -> list[str]:
    """Texts of the words inside ``segment`` or straddling either of its ends.

    Null bounds follow the public script: a word without a start is dropped, a word without
    an end is dropped when it starts before the segment end, else treated as instantaneous.
    """
    seg_start, seg_end = segment
    found = []
    for w in words:
        start, end = w.start, w.end
        if start is None or (end is None and start < seg_end):
            continue
        if end is None:
            end = start
        inside = start >= seg_start and end <= seg_end
        over_end = start <= seg_end and end > seg_end
        over_start = start <= seg_start and end > seg_start
        if inside or over_end or over_start:
            found.append(w.text)
    return found


def is_take_over_segment(segment: Span, words: Sequence[TimedWord]) -> bool:
    """Whether one VAD segment is the model taking the turn rather than backchannelling."""
    duration = segment[1] - segment[0]
    if duration > LONG_SEGMENT_S:
        return True
    n = len(words_overlapping(segment, words))
    if n > MAX_WORDS:
        return True
    return not (duration < SHORT_SEGMENT_S and n <= MAX_BACKCHANNEL_WORDS)


def _histogram(spans: Sequence[Span], bins: int) -> np.ndarray:
    counts = np.zeros(bins, dtype=float)
    for start, end in spans:
        lo, hi = int(start / WINDOW_S), int(end / WINDOW_S)
        for i in range(lo, hi + 1):
            if 0 <= i < bins:
                counts[i] += 1
    counts += EPSILON
    return counts / counts.sum()


def jsd_stretched(spans: Sequence[Span], duration: float, gt: Sequence[float]) -> float:
    """The public JSD: prediction binned over the output, ground truth stretched onto it."""
    pred = _histogram(spans, int(duration / WINDOW_S) + 1)
    gt_arr = np.asarray(gt, dtype=float)
    # Linear resampling over a common [0, 1] axis, as the public script does with interp1d.
    resized = np.interp(np.linspace(0, 1, len(pred)), np.linspace(0, 1, len(gt_arr)), gt_arr)
    # scipy is slow to import: only here; it ships no types (scipy-stubs is not installed)
    from scipy.spatial.distance import jensenshannon

    return float(jensenshannon(pred, resized))


def jsd_on_gt_grid(spans: Sequence[Span], gt: Sequence[float]) -> float:
    """voxbench JSD: prediction binned on the ground truth's own 0.2 s grid, no stretching.

    The ground-truth bins are seconds of the input; an output shorter or longer than the
    input would be mis-aligned by stretching, so bins past the ground truth are dropped.
    """
    gt_arr = np.asarray(gt, dtype=float)
    pred = _histogram(spans, len(gt_arr))
    from scipy.spatial.distance import jensenshannon

    return float(jensenshannon(pred, gt_arr))


def score_fdb_v1(
    segments: Sequence[Span],
    words: Sequence[TimedWord],
    duration: float,
    gt: Sequence[float] | None,
) -> BackchannelResult:
    """The public script (HEAD logic): the last classified segment sets TOR, a segment
    longer than 3 s ends the walk with TOR 1, and every segment up to 3 s is listed as a
    backchannel whatever its classification; JSD is 1.0 without any backchannel."""
    tor = 0
    listed: list[Span] = []
    take_overs: list[Span] = []
    for seg in segments:
        if seg[1] - seg[0] > LONG_SEGMENT_S:
            tor = 1
            take_overs.append(seg)
            break
        tor = int(is_take_over_segment(seg, words))
        if tor:
            take_overs.append(seg)
        listed.append(seg)
    frequency = len(listed) / duration if duration > 0 else 0.0
    if not listed:
        jsd: float | None = NO_BACKCHANNEL_JSD
    else:
        jsd = jsd_stretched(listed, duration, gt) if gt is not None else None
    return BackchannelResult(tor, frequency, jsd, listed, take_overs)


def score_voxbench(
    segments: Sequence[Span],
    words: Sequence[TimedWord],
    duration: float,
    gt: Sequence[float] | None,
) -> BackchannelResult:
    """Corrected scoring: any take-over segment makes the sample a take-over; only segments
    classified as backchannels count for frequency and JSD; no backchannel → JSD None (the
    summary reports the no-backchannel rate beside the JSD instead of a 1.0 placeholder)."""
    backchannels: list[Span] = []
    take_overs: list[Span] = []
    for seg in segments:
        (take_overs if is_take_over_segment(seg, words) else backchannels).append(seg)
    frequency = len(backchannels) / duration if duration > 0 else 0.0
    jsd = jsd_on_gt_grid(backchannels, gt) if backchannels and gt is not None else None
    return BackchannelResult(int(bool(take_overs)), frequency, jsd, backchannels, take_overs)
