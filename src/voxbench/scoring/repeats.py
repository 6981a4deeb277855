"""Repeats: K runs of one benchmark by one target, summarised as one result.

Each run gives, per dimension and turn, passed / failed / undecided (``turn_outcomes``).
Over K runs:

- the **mean pass rate** is pooled over every decided (run, turn) cell;
- its **95% interval** is a Wilson interval over an *effective* number of trials: the K
  outcomes of one turn are correlated (the same question), and the outcomes of one run are
  too (the same session, the same day of the provider). The variance of the pooled rate is
  estimated with two-way cluster-robust sums (Cameron, Gelbach & Miller: runs and turns are
  the clusters, their intersection — single cells — is subtracted once; never below either
  one-way estimate, nor below independent cells), and
  ``n_eff = p(1 - p) / variance``. When every cell agrees (0% or 100%) there is no variance
  to estimate and ``n_eff`` is the number of distinct turns: repeating a turn that always
  passes says nothing more about turns not in the benchmark;
- **pass@k** (the turn passed in at least one of k runs) and **pass^k** (in all k) per turn
  and, for k = 1..K, their mean over turns with the unbiased estimators over n decided runs
  with c passes: pass@k = 1 - C(n-c, k)/C(n, k), pass^k = C(c, k)/C(n, k);
- **unstable turns**: the turns whose decided outcome differs between runs.

Two repeat groups are compared with the runs as the unit: the statistic is the mean over
shared turns of (B's pass rate on the turn − A's), and its p-value comes from permuting which
runs belong to A and which to B (exact when there are few enough splits). Pairing by turn is
kept under every permutation, since each run answers every turn.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from voxbench.core.errors import RunError
from voxbench.core.stats import clustered_variance as clustered_variance  # re-exported
from voxbench.core.stats import pooled_rate_interval
from voxbench.scoring.compare import TurnOutcomes

EXACT_PERMUTATION_LIMIT = 20_000
"""Up to this many splits of the runs the permutation test enumerates them all."""
SAMPLED_PERMUTATIONS = 20_000
"""Otherwise it draws this many at random (seeded, so a comparison is reproducible)."""


class TurnRepeat(BaseModel):
    """One turn of one dimension over the K runs."""

    model_config = ConfigDict(extra="forbid")

    turn: str
    passed: int
    decided: int
    """Runs in which the turn was judged passed or failed (undecided runs left out)."""
    pass_at_k: bool
    """Passed in at least one run."""
    pass_hat_k: bool
    """Passed in every decided run (and decided in at least one)."""
    unstable: bool
    """Passed in some runs and failed in others."""


class DimensionRepeats(BaseModel):
    """One dimension over K runs."""

    model_config = ConfigDict(extra="forbid")

    dimension: str
    runs: int
    turns: int
    cells: int
    """Decided (run, turn) outcomes."""
    passed: int
    mean_rate: float | None
    ci95: tuple[float, float] | None
    """Cluster-robust Wilson interval (runs and turns as clusters)."""
    effective_n: float | None
    run_rates: list[float | None]
    """Each run's own pass rate, in run order."""
    run_spread: float | None
    """Standard deviation of the run rates (run-to-run noise)."""
    pass_at: dict[int, float]
    """k → mean pass@k over turns decided in at least k runs."""
    pass_hat: dict[int, float]
    """k → mean pass^k over turns decided in at least k runs."""
    per_turn: list[TurnRepeat]
    unstable_turns: list[str]


class RepeatSummary(BaseModel):
    """K runs of one benchmark by one target."""

    model_config = ConfigDict(extra="forbid")

    runs: list[str]
    dimensions: list[DimensionRepeats]
    unstable: dict[str, list[str]]
    """Turn id → the dimensions whose outcome flipped between runs."""

    def dimension(self, name: str) -> DimensionRepeats | None:
        """The summary of dimension ``name`` (None when no run scored it)."""
        return next((d for d in self.dimensions if d.dimension == name), None)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(at least one of k runs passes) from c passes in n runs."""
    if not 0 < k <= n:
        raise ValueError(f"k={k} must be in 1..n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(all of k runs pass) from c passes in n runs (τ-bench's pass^k)."""
    if not 0 < k <= n:
        raise ValueError(f"k={k} must be in 1..n={n}")
    return math.comb(c, k) / math.comb(n, k)


def summarise_dimension(dimension: str, runs: Sequence[dict[str, bool | None]]) -> DimensionRepeats:
    """Pool one dimension's outcomes over the runs (each: turn id → outcome)."""
    turns = list(dict.fromkeys(t for run in runs for t in run))
    cells = [(i, t, bool(v)) for i, run in enumerate(runs) for t, v in run.items() if v is not None]
    passed = sum(y for _, _, y in cells)
    rate, interval, n_eff = pooled_rate_interval(cells)
    run_rates: list[float | None] = []
    for run in runs:
        decided = [v for v in run.values() if v is not None]
        run_rates.append(round(sum(decided) / len(decided), 4) if decided else None)
    known = [r for r in run_rates if r is not None]
    spread = (
        round(
            math.sqrt(sum((r - sum(known) / len(known)) ** 2 for r in known) / (len(known) - 1)), 4
        )
        if len(known) > 1
        else None
    )
    per_turn: list[TurnRepeat] = []
    for t in turns:
        outcomes = [run[t] for run in runs if run.get(t) is not None]
        c, n = sum(bool(v) for v in outcomes), len(outcomes)
        per_turn.append(
            TurnRepeat(
                turn=t,
                passed=c,
                decided=n,
                pass_at_k=c > 0,
                pass_hat_k=n > 0 and c == n,
                unstable=0 < c < n,
            )
        )
    pass_at: dict[int, float] = {}
    pass_hat: dict[int, float] = {}
    for k in range(1, len(runs) + 1):
        eligible = [r for r in per_turn if r.decided >= k]
        if eligible:
            pass_at[k] = round(
                sum(pass_at_k(r.decided, r.passed, k) for r in eligible) / len(eligible), 4
            )
            pass_hat[k] = round(
                sum(pass_hat_k(r.decided, r.passed, k) for r in eligible) / len(eligible), 4
            )
    return DimensionRepeats(
        dimension=dimension,
        runs=len(runs),
        turns=len(turns),
        cells=len(cells),
        passed=passed,
        mean_rate=round(rate, 4) if rate is not None else None,
        ci95=interval,
        effective_n=round(n_eff, 2) if n_eff is not None else None,
        run_rates=run_rates,
        run_spread=spread,
        pass_at=pass_at,
        pass_hat=pass_hat,
        per_turn=per_turn,
        unstable_turns=[r.turn for r in per_turn if r.unstable],
    )


def summarise_repeats(run_ids: Sequence[str], outcomes: Sequence[TurnOutcomes]) -> RepeatSummary:
    """One summary of K judged runs (``outcomes[i]`` is run ``run_ids[i]``'s)."""
    if len(run_ids) != len(outcomes) or not outcomes:
        raise RunError("a repeat summary needs the outcomes of at least one run, one per run id")
    dimensions = list(dict.fromkeys(d for run in outcomes for d in run))
    summaries = [summarise_dimension(d, [run.get(d, {}) for run in outcomes]) for d in dimensions]
    unstable: dict[str, list[str]] = {}
    for summary in summaries:
        for turn in summary.unstable_turns:
            unstable.setdefault(turn, []).append(summary.dimension)
    return RepeatSummary(runs=list(run_ids), dimensions=summaries, unstable=unstable)


# -- comparing two repeat groups -----------------------------------------------------------


class RepeatDimensionComparison(BaseModel):
    """One dimension of group A against group B, runs as the unit, paired by turn."""

    model_config = ConfigDict(extra="forbid")

    dimension: str
    a_rate: float | None
    b_rate: float | None
    a_ci95: tuple[float, float] | None
    b_ci95: tuple[float, float] | None
    paired_turns: int
    difference: float | None
    """Mean over paired turns of (B's pass rate on the turn − A's)."""
    p_value: float | None
    """Two-sided permutation p-value over the splits of the runs into A and B."""
    permutations: int
    exact: bool
    smallest_p: float | None
    """The smallest p-value this many runs can give (with 2 + 2 runs: 1/3)."""


class RepeatComparison(BaseModel):
    """Repeat group A against repeat group B."""

    model_config = ConfigDict(extra="forbid")

    runs_a: int
    runs_b: int
    test: str = "permutation of run labels (runs as the unit), paired by turn, two-sided"
    dimensions: list[RepeatDimensionComparison]


def _turn_rates(runs: Sequence[dict[str, bool | None]], turns: Sequence[str]) -> list[float]:
    out = []
    for t in turns:
        decided = [bool(run[t]) for run in runs if run.get(t) is not None]
        out.append(sum(decided) / len(decided))
    return out


def _mean_difference(
    runs: Sequence[dict[str, bool | None]], a_index: Sequence[int], turns: Sequence[str]
) -> float | None:
    a = [runs[i] for i in a_index]
    b = [runs[i] for i in range(len(runs)) if i not in set(a_index)]
    usable = [
        t
        for t in turns
        if any(r.get(t) is not None for r in a) and any(r.get(t) is not None for r in b)
    ]
    if not usable:
        return None
    ra, rb = _turn_rates(a, usable), _turn_rates(b, usable)
    return sum(y - x for x, y in zip(ra, rb, strict=True)) / len(usable)


def permutation_test(
    a: Sequence[dict[str, bool | None]], b: Sequence[dict[str, bool | None]], *, seed: int = 0
) -> tuple[float | None, float | None, int, bool, list[str]]:
    """(difference, p-value, permutations, exact, paired turns) for one dimension."""
    pooled = [*a, *b]
    turns = [
        t
        for t in dict.fromkeys(t for run in pooled for t in run)
        if any(r.get(t) is not None for r in a) and any(r.get(t) is not None for r in b)
    ]
    observed = _mean_difference(pooled, range(len(a)), turns)
    if observed is None:
        return None, None, 0, True, []
    total = math.comb(len(pooled), len(a))
    if total <= EXACT_PERMUTATION_LIMIT:
        splits: list[tuple[int, ...]] = list(itertools.combinations(range(len(pooled)), len(a)))
        exact = True
    else:
        rng = random.Random(seed)
        splits = [tuple(range(len(a)))] + [
            tuple(sorted(rng.sample(range(len(pooled)), len(a))))
            for _ in range(SAMPLED_PERMUTATIONS - 1)
        ]
        exact = False
    extreme = 0
    for split in splits:
        d = _mean_difference(pooled, split, turns)
        if d is not None and abs(d) >= abs(observed) - 1e-12:
            extreme += 1
    return round(observed, 4), round(extreme / len(splits), 6), len(splits), exact, turns


def compare_repeats(a: RepeatSummary, a_outcomes: Sequence[TurnOutcomes], b: RepeatSummary,
                    b_outcomes: Sequence[TurnOutcomes]) -> RepeatComparison:  # fmt: skip
    """Per-dimension difference of group B against group A, runs as the unit."""
    order = [d.dimension for d in a.dimensions] + [
        d.dimension for d in b.dimensions if a.dimension(d.dimension) is None
    ]
    rows = []
    for name in order:
        da, db = a.dimension(name), b.dimension(name)
        diff, p, count, exact, turns = permutation_test(
            [run.get(name, {}) for run in a_outcomes], [run.get(name, {}) for run in b_outcomes]
        )
        total = math.comb(len(a_outcomes) + len(b_outcomes), len(a_outcomes))
        rows.append(
            RepeatDimensionComparison(
                dimension=name,
                a_rate=da.mean_rate if da else None,
                b_rate=db.mean_rate if db else None,
                a_ci95=da.ci95 if da else None,
                b_ci95=db.ci95 if db else None,
                paired_turns=len(turns),
                difference=diff,
                p_value=p,
                permutations=count,
                exact=exact,
                # The observed split and its mirror image are always at least as extreme
                # when the groups have the same size.
                smallest_p=round((2 if len(a_outcomes) == len(b_outcomes) else 1) / total, 6),
            )
        )
    return RepeatComparison(runs_a=len(a_outcomes), runs_b=len(b_outcomes), dimensions=rows)
