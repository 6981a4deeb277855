"""Statistics for scorecards: bootstrap intervals, percentiles and paired tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from scipy.stats import binomtest

BOOTSTRAP_SAMPLES = 2000
PERCENTILES = (50, 90, 95, 99)


def bootstrap_ci(
    outcomes: Sequence[bool], *, seed: int = 0, samples: int = BOOTSTRAP_SAMPLES
) -> tuple[float, float] | None:
    """95% percentile-bootstrap interval of a pass rate (None with no outcomes).

    Seeded, so the same outcomes always give the same interval.
    """
    if not outcomes:
        return None
    data = np.asarray(outcomes, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(samples, len(data)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (round(float(lo), 4), round(float(hi), 4))


def percentiles(values: Iterable[float | None]) -> dict[str, float]:
    """p50/p90/p95/p99, mean, min, max and count of the present values.

    Values ≤ 0 (an agent answering before the user finished) are kept: dropping them would
    flatter the agent.
    """
    data = np.asarray([v for v in values if v is not None], dtype=float)
    if data.size == 0:
        return {"count": 0}
    out = {f"p{p}": round(float(np.percentile(data, p)), 4) for p in PERCENTILES}
    out["mean"] = round(float(data.mean()), 4)
    out["min"] = round(float(data.min()), 4)
    out["max"] = round(float(data.max()), 4)
    out["count"] = int(data.size)
    return out


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (a sign test on them).

    ``a_only``: pairs where only A passed; ``b_only``: only B passed. With no discordant
    pair the runs cannot be told apart: p = 1.
    """
    n = a_only + b_only
    if n == 0:
        return 1.0
    return float(binomtest(min(a_only, b_only), n, 0.5, alternative="two-sided").pvalue)
