"""Repeat statistics on hand-built outcomes: pass@k, pass^k, unstable turns, intervals, tests."""

from __future__ import annotations

import math

import pytest

from voxbench.scoring.repeats import (
    clustered_variance,
    compare_repeats,
    pass_at_k,
    pass_hat_k,
    summarise_repeats,
)
from voxbench.scoring.stats import wilson_interval


def _runs(table: dict[str, str]) -> list[dict[str, dict[str, bool | None]]]:
    """``{"t1": "PPF", ...}`` → one outcome dict per run (P pass, F fail, ? undecided)."""
    k = len(next(iter(table.values())))
    code = {"P": True, "F": False, "?": None}
    return [{"tool_use": {t: code[row[i]] for t, row in table.items()}} for i in range(k)]


def test_pass_at_k_and_pass_hat_k_per_turn_and_averaged():
    runs = _runs({"t1": "PPP", "t2": "PFP", "t3": "FFF", "t4": "FFP"})
    summary = summarise_repeats(["r1", "r2", "r3"], runs)
    dim = summary.dimension("tool_use")
    assert dim is not None
    by_turn = {r.turn: r for r in dim.per_turn}
    assert (by_turn["t1"].pass_at_k, by_turn["t1"].pass_hat_k) == (True, True)
    assert (by_turn["t2"].pass_at_k, by_turn["t2"].pass_hat_k) == (True, False)
    assert (by_turn["t3"].pass_at_k, by_turn["t3"].pass_hat_k) == (False, False)
    assert by_turn["t4"].passed == 1 and by_turn["t4"].decided == 3
    # k = K: the plain "at least one" / "all" shares.
    assert dim.pass_at[3] == 0.75
    assert dim.pass_hat[3] == 0.25
    # k = 1 is the mean pass rate.
    assert dim.pass_at[1] == dim.pass_hat[1] == round(6 / 12, 4) == dim.mean_rate
    # k = 2 with the unbiased estimators: t2 (c=2): pass@2 = 1, pass^2 = 1/3; t4 (c=1): 2/3, 0.
    assert dim.pass_at[2] == round((1 + 1 + 0 + 2 / 3) / 4, 4)
    assert dim.pass_hat[2] == round((1 + 1 / 3 + 0 + 0) / 4, 4)
    assert dim.unstable_turns == ["t2", "t4"]
    assert summary.unstable == {"t2": ["tool_use"], "t4": ["tool_use"]}
    assert dim.run_rates == [0.5, 0.25, 0.75]


def test_undecided_outcomes_are_left_out_not_counted_as_flips():
    runs = _runs({"t1": "P?P", "t2": "F?F"})
    dim = summarise_repeats(["a", "b", "c"], runs).dimension("tool_use")
    assert dim is not None
    assert dim.cells == 4 and dim.passed == 2
    assert dim.unstable_turns == []
    assert dim.run_rates == [0.5, None, 0.5]
    assert 3 not in dim.pass_at  # no turn was decided in all three runs


def test_estimators_match_their_definitions():
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 3, 3) == 1.0  # only 2 failures: any 3 runs hold a pass
    assert pass_hat_k(5, 5, 5) == 1.0
    assert pass_hat_k(5, 4, 2) == pytest.approx(math.comb(4, 2) / math.comb(5, 2))
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_interval_is_wider_than_naive_when_outcomes_cluster_by_turn():
    # 10 turns × 4 runs: each turn always passes or always fails: 40 cells, but only
    # 10 independent facts — the interval must be about as wide as 10 turns' Wilson.
    table = {f"t{i}": ("PPPP" if i < 6 else "FFFF") for i in range(10)}
    dim = summarise_repeats(["1", "2", "3", "4"], _runs(table)).dimension("tool_use")
    assert dim is not None and dim.ci95 is not None and dim.effective_n is not None
    naive = wilson_interval(24, 40)
    by_turns = wilson_interval(6, 10)
    assert naive is not None and by_turns is not None
    assert dim.ci95[1] - dim.ci95[0] > naive[1] - naive[0]
    assert dim.effective_n == pytest.approx(10, rel=0.35)
    assert dim.ci95[1] - dim.ci95[0] == pytest.approx(by_turns[1] - by_turns[0], rel=0.25)


def test_interval_of_a_perfect_agent_does_not_collapse():
    dim = summarise_repeats(["1", "2"], _runs({f"t{i}": "PP" for i in range(8)})).dimension(
        "tool_use"
    )
    assert dim is not None
    assert dim.mean_rate == 1.0
    assert dim.ci95 == wilson_interval(8, 8)  # counted as 8 turns, not 16 cells


def test_clustered_variance_of_independent_cells_is_near_binomial():
    import random

    rng = random.Random(4)
    cells = [(r, f"t{t}", rng.random() < 0.5) for r in range(6) for t in range(60)]
    p = sum(y for *_, y in cells) / len(cells)
    binomial = p * (1 - p) / len(cells)
    assert clustered_variance(cells) == pytest.approx(binomial, rel=0.5)


def test_compare_repeat_groups_permutes_runs_paired_by_turn():
    a = _runs({f"t{i}": "FFFF" for i in range(6)})
    b = _runs({f"t{i}": "PPPP" for i in range(6)})
    sa = summarise_repeats(list("abcd"), a)
    sb = summarise_repeats(list("efgh"), b)
    result = compare_repeats(sa, a, sb, b)
    row = result.dimensions[0]
    assert row.difference == 1.0
    assert row.paired_turns == 6
    assert row.exact and row.permutations == math.comb(8, 4)
    # Only the observed split and its mirror are as extreme: p = 2/70.
    assert row.p_value == pytest.approx(2 / 70, abs=1e-6)
    assert row.smallest_p == pytest.approx(2 / 70, abs=1e-6)


def test_compare_identical_groups_finds_no_difference():
    a = _runs({"t1": "PF", "t2": "PP"})
    result = compare_repeats(
        summarise_repeats(["1", "2"], a), a, summarise_repeats(["3", "4"], a), a
    )
    assert result.dimensions[0].difference == 0.0
    assert result.dimensions[0].p_value == 1.0
