"""Statistics for scorecards: intervals for pass rates and paired tests.

(Latency percentiles are the analysis's: ``voxbench.analysis.summarise``.)
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def wilson_interval(passed: int, n: int, *, z: float = Z95) -> tuple[float, float] | None:
    """95% Wilson score interval of a pass rate (None with nothing scored).

    Unlike a percentile bootstrap, it does not collapse to [100%–100%] at 10/10 (a bootstrap
    cannot resample a failure that never happened), and its coverage stays near 95% for the
    small numbers of turns a benchmark has."""
    if n <= 0:
        return None
    return wilson_interval_of_rate(passed / n, n, z=z)


def wilson_interval_of_rate(rate: float, n: float, *, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson interval of ``rate`` observed over an *effective* sample size ``n``.

    ``n`` may be fractional: a pass rate over correlated outcomes (the same turns run K
    times) is worth fewer independent trials than it has cells (see ``scoring.repeats``)."""
    if n <= 0:
        return None
    spread = z * z / n
    centre = (rate + spread / 2) / (1 + spread)
    half = z / (1 + spread) * math.sqrt(rate * (1 - rate) / n + spread / (4 * n))
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


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
