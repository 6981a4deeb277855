"""Chance-corrected agreement: Cohen's κ (unweighted, linear, quadratic), Krippendorff's α
(nominal, ordinal, interval) with missing values, seeded bootstrap intervals and
permutation tests. Pure numpy; no voxbench type in them.

Definitions (the formulas, not any package's code):

- Cohen's κ over the categories ``categories`` (for a rubric: every value of its scale, so a
  distance is a distance on the scale): ``κ = 1 − Σ w·O / Σ w·E`` with O the observed
  confusion counts, E the counts expected from the two margins, and w the disagreement
  weight of two category *positions* i, j: 1 − [i = j] (unweighted), |i − j| (linear),
  (i − j)² (quadratic). It equals scikit-learn's ``cohen_kappa_score(a, b, labels=categories,
  weights=...)``; ``tests/judging/audio/test_agreement.py`` checks it on scikit-learn's own
  fixtures (Artstein & Poesio 2008, table 4: 0.8013; the weighting example 0.9315 / 0.9412 /
  0.9541).
- Krippendorff's α from the coincidence matrix (Krippendorff 2011, "Computing
  Krippendorff's Alpha-Reliability"): every unit with m ≥ 2 values adds 1/(m − 1) for each
  ordered pair of its values; ``α = 1 − (n − 1)·Σ o_ck δ²_ck / Σ n_c n_k δ²_ck`` with
  δ² = [c ≠ k] (nominal), (c − k)² (interval), or for ordinal the squared count of values
  between c and k, ends halved: ``(Σ_{g=c..k} n_g − (n_c + n_k)/2)²``. The paper's worked
  example (4 coders, 12 units, missing values) gives nominal 0.743, ordinal 0.815,
  interval 0.849 — the values the ``krippendorff`` package reproduces; the test checks them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal

import numpy as np

SEED = 0
BOOTSTRAP = 1000
PERMUTATIONS = 2000

Weights = Literal["none", "linear", "quadratic"]
Level = Literal["nominal", "ordinal", "interval"]


def cohen_kappa(
    a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable],
    weights: Weights = "none",
) -> float | None:  # fmt: skip
    """Cohen's κ of two raters over ``categories`` (None when chance agreement is total:
    both raters gave one and the same category everywhere)."""
    if len(a) != len(b):
        raise ValueError("the two raters rated different numbers of items")
    index = {c: i for i, c in enumerate(categories)}
    k = len(categories)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    n = observed.sum()
    if n == 0:
        return None
    expected = np.outer(observed.sum(1), observed.sum(0)) / n
    i, j = np.indices((k, k))
    if weights == "none":
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j).astype(float)
    else:
        w = ((i - j) ** 2).astype(float)
    denominator = float((w * expected).sum())
    if denominator == 0:
        return None
    return 1.0 - float((w * observed).sum()) / denominator


def krippendorff_alpha(units: Sequence[Sequence[Any]], level: Level = "interval") -> float | None:
    """Krippendorff's α of ``units`` (one list of values per unit, one per rater; ``None``
    or NaN where a rater gave none). None when there is nothing to disagree about (fewer
    than two pairable values, or a single value used throughout)."""
    cleaned = [
        [v for v in unit if v is not None and not (isinstance(v, float) and math.isnan(v))]
        for unit in units
    ]
    pairable = [u for u in cleaned if len(u) >= 2]
    values = sorted({v for u in pairable for v in u})
    if len(values) < 2:
        return None
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    coincidence = np.zeros((k, k))
    for unit in pairable:
        m = len(unit)
        for p, x in enumerate(unit):
            for q, y in enumerate(unit):
                if p != q:
                    coincidence[index[x], index[y]] += 1.0 / (m - 1)
    marginals = coincidence.sum(1)
    n = marginals.sum()
    delta = _delta(values, marginals, level)
    expected = float((np.outer(marginals, marginals) * delta).sum())
    if expected == 0:
        return None
    return 1.0 - (n - 1) * float((coincidence * delta).sum()) / expected


def _delta(values: list[Any], marginals: np.ndarray, level: Level) -> np.ndarray:
    k = len(values)
    i, j = np.indices((k, k))
    if level == "nominal":
        return (i != j).astype(float)
    if level == "interval":
        x = np.asarray(values, dtype=float)
        return (x[:, None] - x[None, :]) ** 2
    cumulative = np.concatenate([[0.0], np.cumsum(marginals)])
    low, high = np.minimum(i, j), np.maximum(i, j)
    between = cumulative[high + 1] - cumulative[low] - (marginals[i] + marginals[j]) / 2
    return between**2


def bootstrap_interval(
    statistic: Callable[[np.ndarray], float | None], n: int, *, resamples: int = BOOTSTRAP
) -> tuple[float, float] | None:
    """The 95% percentile bootstrap interval of ``statistic(indices)`` over ``n`` units
    resampled with replacement (seeded: the same data, the same interval). None when fewer
    than half the resamples give a value (too few units, or no spread)."""
    if n < 3:
        return None
    rng = np.random.default_rng(SEED)
    values = []
    for _ in range(resamples):
        value = statistic(rng.integers(0, n, n))
        if value is not None and not math.isnan(value):
            values.append(value)
    if len(values) < resamples // 2:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return round(float(low), 3), round(float(high), 3)


def permutation_p(
    statistic: Callable[[np.ndarray], float | None], n: int, *, permutations: int = PERMUTATIONS
) -> tuple[float | None, float | None]:
    """(mean of the statistic under shuffled pairings, one-sided p-value of the observed
    one): ``statistic(order)`` pairs unit i's reference with the judged value of unit
    ``order[i]``; p = (1 + #shuffles ≥ observed) / (1 + shuffles), seeded."""
    observed = statistic(np.arange(n))
    if observed is None or n < 2:
        return None, None
    rng = np.random.default_rng(SEED)
    shuffled = []
    for _ in range(permutations):
        value = statistic(rng.permutation(n))
        shuffled.append(0.0 if value is None else value)
    array = np.asarray(shuffled)
    p = (1 + int(np.sum(array >= observed - 1e-12))) / (1 + permutations)
    return round(float(array.mean()), 3), round(p, 4)


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)
