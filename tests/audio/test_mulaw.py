"""G.711 μ-law: byte-exact with the reference implementation, and a faithful round trip."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from voxbench.audio.mulaw import mulaw_decode, mulaw_encode

EVERY_SAMPLE = np.arange(-32768, 32768, dtype=np.int32).astype("<i2").tobytes()


def test_matches_the_reference_codec_on_every_sample() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop")  # CPython's G.711 (gone in 3.13)
    assert mulaw_encode(EVERY_SAMPLE) == audioop.lin2ulaw(EVERY_SAMPLE, 2)
    assert mulaw_decode(bytes(range(256))) == audioop.ulaw2lin(bytes(range(256)), 2)


def test_round_trip_error_stays_within_the_segment_step() -> None:
    x = np.frombuffer(EVERY_SAMPLE, dtype="<i2").astype(np.int32)
    y = np.frombuffer(mulaw_decode(mulaw_encode(EVERY_SAMPLE)), dtype="<i2").astype(np.int32)
    error = np.abs(x - y)
    assert error[np.abs(x) < 100].max() <= 8  # fine steps near zero
    loud = (np.abs(x) >= 256) & (np.abs(x) <= 32000)  # below the clip
    assert (error[loud] <= np.abs(x[loud]) // 16).all()  # half a step: ~6% at most
    assert len(mulaw_encode(EVERY_SAMPLE)) == len(EVERY_SAMPLE) // 2
