"""The one Wilson interval (``core.stats``) against a reference implementation."""

from __future__ import annotations

import pytest

from voxbench.core.stats import pooled_rate_interval, wilson_interval


def reference_wilson(passed: int, n: int) -> tuple[float, float]:
    """statsmodels' ``proportion_confint(method="wilson")`` when installed, else scipy's
    ``binomtest(...).proportion_ci(method="wilson")`` (another implementation, same formula)."""
    try:
        from statsmodels.stats.proportion import proportion_confint
    except ImportError:
        from scipy.stats import binomtest

        ci = binomtest(passed, n).proportion_ci(confidence_level=0.95, method="wilson")
        return float(ci.low), float(ci.high)
    lo, hi = proportion_confint(passed, n, alpha=0.05, method="wilson")
    return float(lo), float(hi)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 20, 37, 100, 1000])
def test_wilson_equals_the_reference_for_every_count(n: int) -> None:
    for passed in range(n + 1) if n <= 100 else range(0, n + 1, 7):
        ours = wilson_interval(passed, n)
        assert ours is not None
        lo, hi = reference_wilson(passed, n)
        assert ours == pytest.approx((lo, hi), abs=5e-5), (passed, n)


def test_ten_of_ten_is_not_a_point() -> None:
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(0, 0) is None


def test_one_outcome_per_cluster_is_the_binomial_limit() -> None:
    # Independent outcomes clustered one per cluster: n_eff is n - 1 at most (the variance's
    # small-sample factor), so the clustered interval is a little wider, never narrower.
    cells = [(i, i, i % 4 != 0) for i in range(40)]
    rate, ci, n_eff = pooled_rate_interval(cells)
    assert rate == 0.75 and n_eff == pytest.approx(39.0)
    plain = wilson_interval(30, 40)
    assert ci is not None and plain is not None
    assert ci[0] <= plain[0] and ci[1] >= plain[1]
