"""Error-rate pooling (WER, CER, MER, cpWER, WDER) gives the value and bootstrap interval of
the plain computation: the same draws, the rate of each summed from two float arrays
(issue 33 item 1: the pool sums packed whole-number counts instead)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from voxbench.metrics.registry import BOOTSTRAP_SAMPLES, METRICS, _error_rate, _packable


def _plain_pool(errors: list[Any], units: list[Any], seed: int) -> dict[str, Any]:
    """The pool as first written: float arrays gathered and summed per draw, the draws in
    blocks of at most 2,000,000 indices from ``default_rng(seed)``."""
    n = len(errors)
    if n == 0:
        return {"value": None, "ci": None, "n": 0, "interval": "bootstrap"}
    e, u = np.array(errors, dtype=float), np.array(units, dtype=float)

    def rate(idx: np.ndarray) -> np.ndarray:
        return 100 * e[idx].sum(axis=-1) / np.maximum(u[idx].sum(axis=-1), 1)

    rng = np.random.default_rng(seed)
    block = max(1, min(BOOTSTRAP_SAMPLES, 2_000_000 // n))
    samples = []
    for start in range(0, BOOTSTRAP_SAMPLES, block):
        size = min(block, BOOTSTRAP_SAMPLES - start)
        samples.append(np.asarray(rate(rng.integers(0, n, size=(size, n))), dtype=float))
    drawn = np.concatenate(samples)
    ci, kind = None, "none"
    if np.ptp(drawn) > 0:
        lo, hi = np.percentile(drawn, [2.5, 97.5])
        ci, kind = [round(float(lo), 2), round(float(hi), 2)], "bootstrap"
    value = round(float(rate(np.arange(n))), 2)
    return {"value": value, "ci": ci, "n": n, "interval": kind}


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
        assert pooled == {**_plain_pool(errors, units, 11), "normalizer": "basic"}


def test_whole_counts_that_fit_are_packed() -> None:
    for name, (errors, units) in CASES.items():
        packed = _packable(np.array(errors, dtype=float), np.array(units, dtype=float))
        assert packed == (name not in {"large counts", "fractions"}), name
    assert not _packable(np.array([1.0, np.nan]), np.array([2.0, 3.0]))
    assert not _packable(np.array([1.0, -1.0]), np.array([2.0, 3.0]))
    assert not _packable(np.array([2.0**31]), np.array([1.0]))


def test_no_records_have_no_value() -> None:
    assert METRICS["wer"].pool([], np.random.default_rng(0)) == _plain_pool([], [], 0)


@pytest.mark.parametrize("name", list(CASES))
def test_each_drawn_rate_is_the_same_float(name: str) -> None:
    """Stronger than the rounded interval: every draw's rate, bit for bit."""
    errors, units = CASES[name]
    e, u = np.array(errors, dtype=float), np.array(units, dtype=float)
    idx = np.random.default_rng(5).integers(0, len(e), size=(64, len(e)))
    plain = 100 * e[idx].sum(axis=-1) / np.maximum(u[idx].sum(axis=-1), 1)
    assert np.array_equal(_error_rate(e, u)(idx), plain)
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
