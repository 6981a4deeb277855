"""Intervals for pass rates: the one Wilson interval every yes/no result reports.

Pure statistics with no voxbench type in them, so that every room that reports a proportion —
the conversation scorecards and repeat groups (``scoring``), the task metrics (``metrics``) —
computes it the same way. The paired tests stay in ``scoring.stats``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

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
    times, several scored turns of one record) is worth fewer independent trials than it has
    cells (see ``pooled_rate_interval``)."""
    if n <= 0:
        return None
    spread = z * z / n
    centre = (rate + spread / 2) / (1 + spread)
    half = z / (1 + spread) * math.sqrt(rate * (1 - rate) / n + spread / (4 * n))
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def clustered_variance(cells: Sequence[tuple[Hashable, Hashable, bool]]) -> float:
    """Two-way cluster-robust variance of the pooled pass rate of (run, turn, passed) cells
    (Cameron, Gelbach & Miller: the intersection — single cells — subtracted once; never
    below either one-way estimate, nor below independent cells). One-way clustering: give
    each cell its own ``turn``."""
    n = len(cells)
    if n < 2:
        return 0.0
    p = sum(y for _, _, y in cells) / n
    by_run: dict[Hashable, float] = {}
    by_turn: dict[Hashable, float] = {}
    single = 0.0
    for run, turn, y in cells:
        e = y - p
        by_run[run] = by_run.get(run, 0.0) + e
        by_turn[turn] = by_turn.get(turn, 0.0) + e
        single += e * e

    def component(sums: list[float], groups: int) -> float:
        if groups < 2:
            return 0.0
        return groups / (groups - 1) * sum(s * s for s in sums) / (n * n)

    v_run = component(list(by_run.values()), len(by_run))
    v_turn = component(list(by_turn.values()), len(by_turn))
    v_cell = n / (n - 1) * single / (n * n)
    # The two-way sum undershoots when one way has no variance of its own (a deterministic
    # agent: every run has the same rate, so the run sums are 0 and subtracting the cell
    # term takes away variance that is really there). Never report less than either one-way
    # estimate, nor less than independent cells would have.
    return max(v_run + v_turn - v_cell, v_run, v_turn, v_cell)


def pooled_rate_interval(
    cells: Sequence[tuple[Hashable, Hashable, bool]],
) -> tuple[float | None, tuple[float, float] | None, float | None]:
    """The pass rate of (cluster, item, passed) cells, its clustered Wilson interval and the
    effective number of trials it rests on: ``n_eff = p(1 - p) / clustered variance`` (at most
    the number of cells). When every cell agrees (0% or 100%) there is no variance to estimate
    and ``n_eff`` is the number of distinct items."""
    if not cells:
        return None, None, None
    rate = sum(y for _, _, y in cells) / len(cells)
    if rate in (0.0, 1.0):
        n_eff = float(len({item for _, item, _ in cells}))
    else:
        variance = clustered_variance(cells)
        n_eff = min(float(len(cells)), max(1.0, rate * (1 - rate) / variance))
    return rate, wilson_interval_of_rate(rate, n_eff), n_eff
