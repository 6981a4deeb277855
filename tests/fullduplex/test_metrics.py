"""The take-over rule, latencies and backchannel scoring, on hand-built word timings."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from voxbench.fullduplex import backchannel as bc
from voxbench.fullduplex.annotations import TimedWord
from voxbench.fullduplex.takeover import (
    latency_fdb_v1,
    latency_signed,
    take_over,
    words_in_window,
)


def words(*spans: tuple[float | None, float | None]) -> list[TimedWord]:
    return [TimedWord(text=f"w{i}", timestamp=span) for i, span in enumerate(spans)]


@pytest.mark.parametrize(
    ("spans", "tor"),
    [
        ((), 0),
        (((1.0, 1.3),), 0),
        (((1.0, 1.3), (1.3, 1.6), (1.6, 1.9)), 0),  # 3 words, 0.9 s
        (((1.0, 1.2), (1.2, 1.4), (1.4, 1.6), (1.6, 1.8)), 1),  # 4 words
        (((1.0, 1.3), (1.5, 2.0)), 1),  # span exactly 1 s
        (((1.0, 1.3), (1.5, None)), 0),  # null end: last start, 0.5 s
        (((1.0, 1.3), (2.5, None)), 1),
    ],
)
def test_take_over_rule(spans: tuple, tor: int) -> None:
    assert take_over(words(*spans)) == tor


def test_latencies_clamped_and_signed() -> None:
    w = words((1.5, 1.8), (1.8, 2.4))
    assert latency_fdb_v1(w, 2.0) == 0.0
    assert latency_signed(w, 2.0) == pytest.approx(-0.5)
    assert latency_fdb_v1(w, 1.0) == pytest.approx(0.5)
    assert latency_fdb_v1([], 1.0) is None and latency_signed([], 1.0) is None


def test_window_keeps_the_utterance_live_at_the_cue_from_its_start() -> None:
    w = words((0.1, 0.4), (1.2, 1.5), (1.6, 2.1), (3.0, 3.5))
    assert [x.text for x in words_in_window(w, 2.0)] == ["w1", "w2", "w3"]
    assert [x.text for x in words_in_window(w, 2.2)] == ["w3"]
    assert [x.text for x in words_in_window(w, 0.3)] == ["w0", "w1", "w2", "w3"]
    assert words_in_window(w, 4.0) == []


def test_segment_words_follow_the_public_overlap_rules() -> None:
    w = words((0.9, 1.2), (1.3, 1.5), (1.9, 2.3), (2.5, 2.8), (None, 1.4), (1.1, None), (2.6, None))
    # inside, straddling the start, straddling the end; nulls as the public script treats them
    assert bc.words_overlapping((1.0, 2.0), w) == ["w0", "w1", "w2"]
    assert bc.words_overlapping((2.0, 2.55), w) == ["w2", "w3"]
    assert bc.words_overlapping((1.0, 2.7), w) == ["w0", "w1", "w2", "w3"]  # w6: null end


def test_segment_classification() -> None:
    yeah = words((1.0, 1.3))
    assert not bc.is_take_over_segment((1.0, 1.4), yeah)
    assert bc.is_take_over_segment((1.0, 4.2), yeah)  # longer than 3 s
    assert bc.is_take_over_segment((1.0, 2.2), yeah)  # ≥ 1 s
    many = words((1.0, 1.1), (1.1, 1.2), (1.2, 1.3), (1.3, 1.4))
    assert bc.is_take_over_segment((1.0, 1.45), many)


def test_fdb_v1_keeps_the_last_verdict_and_lists_every_short_segment() -> None:
    gt = list(np.full(51, 1 / 51))
    w = words((1.0, 1.2), (2.0, 2.2), (2.2, 2.4), (2.4, 2.6), (2.6, 2.8), (5.0, 5.2))
    segments = [(1.0, 1.3), (2.0, 2.9), (5.0, 5.3)]  # backchannel, take-over (4 words), backchannel
    v1 = bc.score_fdb_v1(segments, w, 10.0, gt)
    assert v1.tor == 0  # the last segment's verdict wins
    assert v1.backchannels == segments
    assert v1.frequency == pytest.approx(0.3)
    fixed = bc.score_voxbench(segments, w, 10.0, gt)
    assert fixed.tor == 1
    assert fixed.backchannels == [(1.0, 1.3), (5.0, 5.3)]
    assert fixed.frequency == pytest.approx(0.2)


def test_fdb_v1_stops_at_a_long_segment() -> None:
    segments = [(1.0, 1.3), (2.0, 6.0), (7.0, 7.3)]
    v1 = bc.score_fdb_v1(segments, words((1.0, 1.2), (7.0, 7.2)), 10.0, None)
    assert v1.tor == 1 and v1.backchannels == [(1.0, 1.3)]


def test_no_backchannel_jsd_placeholder_versus_none() -> None:
    gt = list(np.full(51, 1 / 51))
    assert bc.score_fdb_v1([], [], 10.0, gt).jsd == 1.0
    assert bc.score_voxbench([], [], 10.0, gt).jsd is None


def test_jsd_is_scipy_distance_with_stretched_ground_truth() -> None:
    gt = np.zeros(26) + 1e-10
    gt[10] = 1.0
    gt = gt / gt.sum()
    spans = [(2.0, 2.1)]
    # Output of 10 s → 51 bins; ground truth (5.2 s) is stretched onto them.
    pred = np.full(51, 1e-10)
    pred[10] += 1
    pred /= pred.sum()
    stretched = np.interp(np.linspace(0, 1, 51), np.linspace(0, 1, 26), gt)
    expected = jensenshannon(pred, stretched)
    assert bc.jsd_stretched(spans, 10.0, gt) == pytest.approx(expected)
    # On the ground truth's own grid the same backchannel lands in the right bin.
    assert bc.jsd_on_gt_grid(spans, gt) == pytest.approx(0.0, abs=1e-4)
    assert bc.jsd_stretched(spans, 10.0, gt) > 0.5
    assert bc.jsd_stretched(spans, 10.0, gt) <= np.sqrt(np.log(2)) + 1e-9
