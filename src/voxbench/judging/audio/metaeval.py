"""The statistics of a judge against reference labels, per criterion.

Scores (ordinal labels on the rubric's scale): accuracy (the judge's mean score rounded half
up equals the label) and within-one, each with its 95% Wilson interval; Spearman's ρ and
Kendall's τ-b (labels against mean scores), Cohen's κ and quadratic-weighted κ (over the
scale's values), Krippendorff's α ordinal (rounded scores) and interval (mean scores), each
with a 95% bootstrap interval over files (seeded).

Classes (nominal labels, ``labels.LabelledSet.classes``): accuracy, Cohen's κ and
Krippendorff's α nominal, each class's recall.

Two baselines a judge must beat: the **constant answer** (the majority label: its accuracy,
and an exact one-sided binomial p-value of the judge's accuracy against it) and the **shuffled
labels** (the judge's answers paired with other files' labels: the mean accuracy and κ of
``agreement.PERMUTATIONS`` seeded shuffles, and the permutation p-values of the judge's).
``baseline.p_value`` is the p-value of the primary statistic — quadratic κ for scores, κ for
classes — the one the verdict reads.

With human ratings, the **ceiling**: Krippendorff's α among the raters (ordinal for scores,
nominal for classes, bootstrap interval over clips) against α with the judge added as one
more rater — a judge that lowers it below the raters' interval agrees with them less than
they agree with each other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import numpy as np
from scipy import stats

from voxbench.core.stats import wilson_interval
from voxbench.judging.audio.agreement import (
    bootstrap_interval,
    cohen_kappa,
    krippendorff_alpha,
    permutation_p,
    rounded,
)


def round_half_up(values: np.ndarray) -> np.ndarray:
    return np.floor(np.asarray(values, dtype=float) + 0.5)


def _with_ci(func: Callable[[np.ndarray], float | None], n: int) -> dict[str, Any]:
    value = func(np.arange(n)) if n else None
    return {
        "value": rounded(value),
        "ci95": bootstrap_interval(func, n) if value is not None else None,
    }


def _rank(kind: str) -> Callable[[np.ndarray, np.ndarray], float | None]:
    def func(a: np.ndarray, b: np.ndarray) -> float | None:
        if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
            return None
        result = stats.spearmanr(a, b) if kind == "spearman" else stats.kendalltau(a, b)
        value = float(result.statistic)
        return None if np.isnan(value) else value

    return func


def _pairwise(
    func: Callable[[np.ndarray, np.ndarray], float | None], x: np.ndarray, y: np.ndarray
) -> dict[str, Any]:
    return _with_ci(lambda pick: func(x[pick], y[pick]), len(x))


def score_stats(labels: np.ndarray, means: np.ndarray, scale: Sequence[int]) -> dict[str, Any]:
    """The statistics of mean scores ``means`` against whole-number ``labels``."""
    labels = np.asarray(labels, dtype=float)
    judged = round_half_up(means)
    n = len(labels)
    values = list(range(scale[0], scale[-1] + 1))

    def qwk(x: np.ndarray, y: np.ndarray) -> float | None:
        return cohen_kappa(list(x), list(y), [float(v) for v in values], "quadratic")

    def kappa(x: np.ndarray, y: np.ndarray) -> float | None:
        return cohen_kappa(list(x), list(y), [float(v) for v in values])

    def alpha(level: str) -> Callable[[np.ndarray, np.ndarray], float | None]:
        return lambda x, y: krippendorff_alpha(list(zip(x, y, strict=True)), level)  # type: ignore[arg-type]

    hits = int(np.sum(judged == labels))
    near = int(np.sum(np.abs(judged - labels) <= 1))
    out: dict[str, Any] = {
        "kind": "score",
        "files": n,
        "accuracy": round(hits / n, 3) if n else None,
        "accuracy_ci95": wilson_interval(hits, n),
        "within_one": round(near / n, 3) if n else None,
        "within_one_ci95": wilson_interval(near, n),
        "spearman": _pairwise(_rank("spearman"), labels, means),
        "kendall": _pairwise(_rank("kendall"), labels, means),
        "kappa": _pairwise(kappa, labels, judged),
        "kappa_quadratic": _pairwise(qwk, labels, judged),
        "alpha_ordinal": _pairwise(alpha("ordinal"), labels, judged),
        "alpha_interval": _pairwise(alpha("interval"), labels, np.asarray(means, float)),
        "confusion": {
            "scores": values,
            "rows_expected": [
                [int(np.sum((labels == e) & (judged == j))) for j in values] for e in values
            ],
        },
    }
    out["baseline"] = _baselines(labels, judged, hits, qwk, "kappa_quadratic")
    return out


def class_stats(
    labels: list[str], judged: list[str | None], classes: Sequence[str]
) -> dict[str, Any]:
    """The statistics of judged classes against class labels (nominal)."""
    n = len(labels)
    x = np.asarray(labels, dtype=object)
    y = np.asarray([j if j is not None else "" for j in judged], dtype=object)
    categories = [*classes, ""]

    def kappa(a: np.ndarray, b: np.ndarray) -> float | None:
        return cohen_kappa(list(a), list(b), categories)

    def alpha(a: np.ndarray, b: np.ndarray) -> float | None:
        return krippendorff_alpha(list(zip(a, b, strict=True)), "nominal")

    hits = int(np.sum(x == y))
    out: dict[str, Any] = {
        "kind": "class",
        "files": n,
        "accuracy": round(hits / n, 3) if n else None,
        "accuracy_ci95": wilson_interval(hits, n),
        "kappa": _pairwise(kappa, x, y),
        "alpha_nominal": _pairwise(alpha, x, y),
        "recall": {
            c: round(float(np.mean(y[x == c] == c)), 3) if np.any(x == c) else None for c in classes
        },
        "confusion": {
            "classes": list(classes),
            "rows_expected": [[int(np.sum((x == e) & (y == j))) for j in classes] for e in classes],
        },
    }
    out["baseline"] = _baselines(x, y, hits, kappa, "kappa")
    return out


def _baselines(
    labels: np.ndarray,
    judged: np.ndarray,
    hits: int,
    primary: Callable[[np.ndarray, np.ndarray], float | None],
    primary_name: str,
) -> dict[str, Any]:
    n = len(labels)
    if n == 0:
        return {"majority_accuracy": None, "shuffled_accuracy": None, "p_value": None}
    values, counts = np.unique(labels, return_counts=True)
    majority = counts.max() / n
    label = values[counts.argmax()]
    constant_p = stats.binomtest(hits, n, float(majority), alternative="greater").pvalue
    accuracy_mean, accuracy_p = permutation_p(
        lambda order: float(np.mean(judged[order] == labels)), n
    )
    primary_mean, primary_p = permutation_p(lambda order: primary(labels, judged[order]), n)
    return {
        "majority_label": _plain(label),
        "majority_accuracy": round(float(majority), 3),
        "majority_p_value": float(f"{constant_p:.3g}"),
        "shuffled_accuracy": accuracy_mean,
        "shuffled_accuracy_p_value": accuracy_p,
        f"shuffled_{primary_name}": primary_mean,
        "primary": primary_name,
        "p_value": primary_p,
    }


def _plain(value: Any) -> Any:
    """A numpy value as plain JSON: a whole float as an int."""
    value = value.item() if hasattr(value, "item") else value
    return int(value) if isinstance(value, float) and value.is_integer() else value


def ceiling(ratings: list[list[Any]], judged: list[Any], level: str) -> dict[str, Any] | None:
    """Krippendorff's α among the human raters (``ratings``: per clip, one value per rater,
    None where a rater gave none) and with the judge added as one more rater."""
    units = [r for r in ratings if sum(v is not None for v in r) >= 2]
    if not units:
        return None
    rows = list(range(len(ratings)))

    def among(pick: np.ndarray) -> float | None:
        return krippendorff_alpha([ratings[rows[i]] for i in pick], level)  # type: ignore[arg-type]

    humans = _with_ci(among, len(ratings))
    with_judge = krippendorff_alpha(
        [[*r, j] for r, j in zip(ratings, judged, strict=True)],
        level,  # type: ignore[arg-type]
    )
    raters = len(ratings[0]) if ratings else 0
    pairs = []
    for a, b in combinations(range(raters), 2):
        both = [(r[a], r[b]) for r in ratings if r[a] is not None and r[b] is not None]
        if both:
            pairs.append(float(np.mean([x == y for x, y in both])))
    low = (humans["ci95"] or (humans["value"], None))[0]
    return {
        "level": level,
        "raters": raters,
        "clips": len(units),
        "alpha_raters": humans,
        "alpha_with_judge": rounded(with_judge),
        "rater_pair_exact_agreement": round(float(np.mean(pairs)), 3) if pairs else None,
        "reaches_ceiling": None if low is None or with_judge is None else bool(with_judge >= low),
    }


def between(
    a: list[Any], b: list[Any], kind: str, scale: Sequence[int], classes: Sequence[str]
) -> dict[str, Any]:
    """Agreement between two judges' answers on the same files (None: undecided)."""
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    x = np.asarray([p[0] for p in pairs], dtype=object if kind == "class" else float)
    y = np.asarray([p[1] for p in pairs], dtype=object if kind == "class" else float)
    out: dict[str, Any] = {"files": len(pairs), "exact_agreement": (
        round(float(np.mean(x == y)), 3) if pairs else None)}  # fmt: skip
    if kind == "class":
        out["kappa"] = _pairwise(lambda p, q: cohen_kappa(list(p), list(q), list(classes)), x, y)
        out["alpha_nominal"] = _pairwise(
            lambda p, q: krippendorff_alpha(list(zip(p, q, strict=True)), "nominal"), x, y
        )
        return out
    values = [float(v) for v in range(scale[0], scale[-1] + 1)]
    x, y = round_half_up(x), round_half_up(y)
    out["within_one"] = round(float(np.mean(np.abs(x - y) <= 1)), 3) if pairs else None
    out["kappa_quadratic"] = _pairwise(
        lambda p, q: cohen_kappa(list(p), list(q), values, "quadratic"), x, y
    )
    out["alpha_ordinal"] = _pairwise(
        lambda p, q: krippendorff_alpha(list(zip(p, q, strict=True)), "ordinal"), x, y
    )
    out["spearman"] = _pairwise(_rank("spearman"), x, y)
    return out


def test_retest(samples: list[list[float]]) -> dict[str, Any] | None:
    """Agreement of a judge with itself over files judged twice or more."""
    samples = [s for s in samples if len(s) >= 2]
    if not samples:
        return None
    same = total = 0
    for s in samples:
        for i, j in combinations(range(len(s)), 2):
            total += 1
            same += s[i] == s[j]
    first = np.array([s[0] for s in samples], dtype=float)
    second = np.array([s[1] for s in samples], dtype=float)
    return {
        "files": len(samples),
        "exact_agreement": round(same / total, 3),
        "spearman_first_two": rounded(_rank("spearman")(first, second)),
        "mean_std": round(float(np.mean([np.std(s) for s in samples])), 3),
    }
