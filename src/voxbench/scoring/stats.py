"""Statistics for scorecards: bootstrap intervals and paired tests.

(Latency percentiles are the analysis's: ``voxbench.analysis.summarise``.)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BOOTSTRAP_SAMPLES = 2000


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


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (a sign test on them).

    ``a_only``: pairs where only A passed; ``b_only``: only B passed. With no discordant
    pair the runs cannot be told apart: p = 1.
    """
    n = a_only + b_only
    if n == 0:
        return 1.0
    from scipy.stats import binomtest  # scipy costs half a second to import: only when comparing

    return float(binomtest(min(a_only, b_only), n, 0.5, alternative="two-sided").pvalue)
