"""Bootstrap pools give the value and interval of the plain computation: the same draws,
each statistic gathered into a new array per draw (issue 33 item 1: error rates sum packed
whole-number counts instead, and every gather fills the draw's own index array). Error
rates: WER, CER, MER, cpWER, WDER; means: METEOR, BERTScore, COMET, judge scores, DNSMOS."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from voxbench.metrics.registry import (
    BOOTSTRAP_SAMPLES,
    METRICS,
    _error_rate,
    _mean_of,
    _mean_pool,
    _packable,
)


def _plain_pool(statistic: Callable[[np.ndarray], Any], n: int, seed: int) -> dict[str, Any]:
    """The pool as first written: the draws in blocks of at most 2,000,000 indices from
    ``default_rng(seed)``, the statistic of each, their 2.5 and 97.5 percentiles."""
    if n == 0:
        return {"value": None, "ci": None, "n": 0, "interval": "bootstrap"}
    rng = np.random.default_rng(seed)
    block = max(1, min(BOOTSTRAP_SAMPLES, 2_000_000 // n))
    samples = []
    for start in range(0, BOOTSTRAP_SAMPLES, block):
        size = min(block, BOOTSTRAP_SAMPLES - start)
        samples.append(np.asarray(statistic(rng.integers(0, n, size=(size, n))), dtype=float))
    drawn = np.concatenate(samples)
    ci, kind = None, "none"
    if np.ptp(drawn) > 0:
        lo, hi = np.percentile(drawn, [2.5, 97.5])
        ci, kind = [round(float(lo), 2), round(float(hi), 2)], "bootstrap"
    value = round(float(statistic(np.arange(n))), 2)
    return {"value": value, "ci": ci, "n": n, "interval": kind}


def _plain_rate(errors: list[Any], units: list[Any]) -> Callable[[np.ndarray], Any]:
    """Σ errors / Σ units from two float arrays, each gathered anew."""
    e, u = np.array(errors, dtype=float), np.array(units, dtype=float)
    return lambda idx: 100 * e[idx].sum(axis=-1) / np.maximum(u[idx].sum(axis=-1), 1)


def _plain_mean(values: list[float], scale: float = 1.0) -> Callable[[np.ndarray], Any]:
    v = np.array(values, dtype=float)
    return lambda idx: scale * v[idx].mean(axis=-1)


def _counts(n: int, seed: int, top: int = 12) -> tuple[list[int], list[int]]:
    rng = np.random.default_rng(seed)
    units = rng.integers(0, top, n).tolist()
    errors = [int(x) for x in rng.integers(0, top + 3, n)]  # insertions: above the units
    return errors, units


CASES = {
    "one record": ([3], [7]),
    "two records": ([0, 5], [4, 9]),
    "all the same": ([2] * 50, [6] * 50),
    "no errors": ([0] * 40, list(range(1, 41))),
    "no units": ([1, 0, 2], [0, 0, 0]),
    "small": _counts(7, 1),
    "hundred": _counts(100, 2),
    "six thousand": _counts(6000, 3),
    "large counts": _counts(500, 4, top=40_000_000),  # past 32 bits: the float arrays
    "fractions": ([0.5, 1.0, 2.25, 0.0], [3, 4, 5, 6]),  # not whole: the float arrays
}


@pytest.mark.parametrize("name", list(CASES))
def test_pool_equals_the_plain_computation(name: str) -> None:
    errors, units = CASES[name]
    stats = [
        {"errors": e, "units": u, "normalizer": "basic"} for e, u in zip(errors, units, strict=True)
    ]
    for metric in ("wer", "cer", "mer"):
        pooled = METRICS[metric].pool(stats, np.random.default_rng(11))
        plain = _plain_pool(_plain_rate(errors, units), len(errors), 11)
        assert pooled == {**plain, "normalizer": "basic"}


def test_whole_counts_that_fit_are_packed() -> None:
    for name, (errors, units) in CASES.items():
        packed = _packable(np.array(errors, dtype=float), np.array(units, dtype=float))
        assert packed == (name not in {"large counts", "fractions"}), name
    assert not _packable(np.array([1.0, np.nan]), np.array([2.0, 3.0]))
    assert not _packable(np.array([1.0, -1.0]), np.array([2.0, 3.0]))
    assert not _packable(np.array([2.0**31]), np.array([1.0]))


def test_no_records_have_no_value() -> None:
    plain = _plain_pool(_plain_rate([], []), 0, 0)
    assert METRICS["wer"].pool([], np.random.default_rng(0)) == plain
    assert _mean_pool("f1")([], np.random.default_rng(0)) == plain


@pytest.mark.parametrize("name", list(CASES))
def test_each_drawn_rate_is_the_same_float(name: str) -> None:
    """Stronger than the rounded interval: every draw's rate, bit for bit."""
    errors, units = CASES[name]
    e, u = np.array(errors, dtype=float), np.array(units, dtype=float)
    idx = np.random.default_rng(5).integers(0, len(e), size=(64, len(e)))
    plain = _plain_rate(errors, units)(idx)
    assert np.array_equal(_error_rate(e, u)(idx.copy()), plain)
    whole = 100 * e.sum() / max(u.sum(), 1)
    assert float(_error_rate(e, u)(np.arange(len(e)))) == whole


def test_numpy_counts_pool_as_python_ints_do() -> None:
    errors, units = _counts(300, 6)
    as_python = [{"errors": e, "units": u} for e, u in zip(errors, units, strict=True)]
    as_numpy = [
        {"errors": np.int64(e), "units": np.int32(u)} for e, u in zip(errors, units, strict=True)
    ]
    pool = METRICS["wer"].pool
    assert pool(as_numpy, np.random.default_rng(2)) == pool(as_python, np.random.default_rng(2))


MEANS = {
    "one record": [0.37],
    "all the same": [0.25] * 30,
    "graded": np.random.default_rng(7).random(250).tolist(),
    "six thousand": np.random.default_rng(8).random(6000).tolist(),
    "judge points": [float(x) for x in np.random.default_rng(9).integers(0, 10, 900)],
}


@pytest.mark.parametrize("name", list(MEANS))
def test_mean_pool_equals_the_plain_computation(name: str) -> None:
    values = MEANS[name]
    pooled = _mean_pool("f1")([{"f1": v} for v in values], np.random.default_rng(3))
    assert pooled == _plain_pool(_plain_mean(values, 100), len(values), 3)
    stats = [{"score": v * 5, "undecided": 0} for v in values] + [{"score": 0, "undecided": 1}]
    detailed = METRICS["llm_judge_detailed"].pool(stats, np.random.default_rng(4))
    plain = _plain_pool(_plain_mean([v * 5 for v in values]), len(values), 4)
    assert {k: detailed[k] for k in plain} == plain


@pytest.mark.parametrize("name", list(MEANS))
def test_each_drawn_mean_is_the_same_float(name: str) -> None:
    values = MEANS[name]
    idx = np.random.default_rng(5).integers(0, len(values), size=(64, len(values)))
    for scale in (1.0, 100):
        plain = _plain_mean(values, scale)(idx)
        assert np.array_equal(_mean_of(np.array(values), scale)(idx.copy()), plain)
        whole = _plain_mean(values, scale)(np.arange(len(values)))
        assert float(_mean_of(np.array(values), scale)(np.arange(len(values)))) == whole


def test_indices_of_another_width_are_gathered_anew() -> None:
    values = np.array(MEANS["graded"])
    idx = np.random.default_rng(6).integers(0, len(values), size=(8, len(values)))
    narrow = idx.astype(np.int32)
    assert np.array_equal(_mean_of(values)(narrow), _plain_mean(MEANS["graded"])(idx))
    assert np.array_equal(narrow, idx)  # left as drawn
