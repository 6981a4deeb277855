"""Sample-rate conversion with soxr (high quality, linear phase)."""

from __future__ import annotations

import numpy as np
import soxr


def resample(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """``samples`` (frames,) or (frames, channels) converted from ``from_rate`` to ``to_rate`` Hz."""
    if from_rate <= 0 or to_rate <= 0:
        raise ValueError(f"sample rates must be positive, got {from_rate} -> {to_rate}")
    data = np.ascontiguousarray(samples, dtype=np.float32)
    if from_rate == to_rate or data.shape[0] == 0:
        return data.copy()
    return soxr.resample(data, from_rate, to_rate, quality="HQ").astype(np.float32, copy=False)
