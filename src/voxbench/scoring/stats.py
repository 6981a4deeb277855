"""Statistics for scorecards: intervals for pass rates (``core.stats``) and paired tests.

(Latency percentiles are the analysis's: ``voxbench.analysis.summarise``.)
"""

from __future__ import annotations

from voxbench.core.stats import Z95, wilson_interval, wilson_interval_of_rate

__all__ = ["Z95", "mcnemar_exact", "wilson_interval", "wilson_interval_of_rate"]
"""The Wilson interval lives in ``core.stats`` (task metrics use it too); re-exported here."""


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (a sign test on them).

    ``a_only``: pairs where only A passed; ``b_only``: only B passed. With no discordant
    pair the runs cannot be told apart: p = 1.
    """
    n = a_only + b_only
    if n == 0:
        return 1.0
    # scipy costs half a second to import: only when comparing; it ships no types
    from scipy.stats import binomtest

    return float(binomtest(min(a_only, b_only), n, 0.5, alternative="two-sided").pvalue)
