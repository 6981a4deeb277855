"""Task metrics' 95% intervals: Wilson for yes/no rates (clustered where a record gives
several outcomes), bootstrap for the rest, and the output names which (issue 26, item 1)."""

from __future__ import annotations

import numpy as np
import pytest

from voxbench.metrics.registry import BOOTSTRAP, METRICS, WILSON, metric_setup

YES_NO = [
    "exact_match",
    "accuracy",
    "function_call_match",
    "llm_judge",
    "llm_judge_refusal",
    "instruction_following",
    "numeric_match",
    "sql_execution_match",
    "refusal",
    "joint_goal_accuracy",
    "slot_accuracy",  # one outcome per slot, clustered by record
]


def _sql(correct: int) -> dict[str, object]:
    return {"correct": correct, "outcome": "match" if correct else "mismatch"}


def test_every_yes_no_metric_declares_wilson_and_the_rest_bootstrap() -> None:
    assert {m.name for m in METRICS.values() if m.interval == WILSON} == set(YES_NO)
    setup = metric_setup(list(METRICS))["intervals"]
    assert set(setup) == set(METRICS)
    assert "Wilson" in setup["sql_execution_match"] and "bootstrap" in setup["wer"]


def test_ten_of_ten_gets_the_wilson_interval_not_a_point() -> None:
    # Before: sql_execution_match 100.00 [100.0, 100.0] n=10 (a bootstrap of 10 passes).
    pooled = METRICS["sql_execution_match"].pool([_sql(1)] * 10, np.random.default_rng(0))
    assert pooled["value"] == 100.0 and pooled["n"] == 10
    assert pooled["ci"] == [72.25, 100.0]
    assert pooled["interval"] == "wilson"


@pytest.mark.parametrize("name", ["exact_match", "accuracy", "numeric_match", "refusal"])
def test_yes_no_rates_equal_the_closed_form(name: str) -> None:
    key = "refused" if name == "refusal" else "correct"
    rng = np.random.default_rng(7)
    for n in (1, 3, 10, 29, 200):
        for passed in sorted({0, 1, n // 3, n // 2, n - 1, n} - {-1}):
            stats = [{key: int(i < passed), "answer": "1", "label": "1", "pattern": ""}
                     for i in range(n)]  # fmt: skip
            pooled = METRICS[name].pool(stats, rng)
            z, p = 1.959963984540054, passed / n
            centre = (p + z * z / (2 * n)) / (1 + z * z / n)
            half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
            lo, hi = max(0.0, centre - half), min(1.0, centre + half)
            assert pooled["ci"] == pytest.approx([100 * lo, 100 * hi], abs=0.006), (n, passed)
            assert pooled["value"] == round(100 * p, 2)


def test_simulated_coverage_is_near_95_where_the_bootstrap_collapsed() -> None:
    rng = np.random.default_rng(2026)
    pool = METRICS["exact_match"].pool
    for p, n in ((0.95, 10), (0.95, 20), (0.8, 10), (0.5, 20)):
        hits = 0
        draws = 1000
        for _ in range(draws):
            passes = rng.random(n) < p
            ci = pool([{"correct": int(x)} for x in passes], None)["ci"]
            hits += ci[0] <= 100 * p <= ci[1]
        # Bootstrap coverage was 42% at p=0.95, n=10 and 65% at n=20.
        assert hits / draws >= 0.90, (p, n, hits / draws)


def test_turns_of_one_record_are_clustered() -> None:
    # 20 records of 5 scored turns; a record passes all its turns or none: 20 trials, not 100.
    stats = [{"correct": int(r % 4 != 0), "cluster": f"r{r}"} for r in range(20) for _ in range(5)]
    pooled = METRICS["accuracy"].pool(stats, None)
    assert pooled["interval"] == "wilson-clustered"
    assert pooled["effective_n"] == pytest.approx(19.0, abs=0.5)
    naive = METRICS["accuracy"].pool([{"correct": s["correct"]} for s in stats], None)
    assert naive["interval"] == "wilson"
    assert pooled["ci"][1] - pooled["ci"][0] > 1.8 * (naive["ci"][1] - naive["ci"][0])


def test_clustered_coverage_under_correlated_turns() -> None:
    rng = np.random.default_rng(11)
    pool = METRICS["accuracy"].pool
    hits, draws, truth = 0, 400, 0.7
    for _ in range(draws):
        record_rates = rng.beta(1.4, 0.6, size=25)  # mean 0.7, strongly varying by record
        stats = [
            {"correct": int(rng.random() < q), "cluster": i}
            for i, q in enumerate(record_rates)
            for _ in range(4)
        ]
        ci = pool(stats, None)["ci"]
        hits += ci[0] <= 100 * truth <= ci[1]
    assert hits / draws >= 0.90


def test_ifeval_instruction_level_is_clustered_by_prompt() -> None:
    stats = [
        {"ids": ["a", "b"], "strict": [1, 0], "loose": [1, 1], "unchecked": [],
         "strict_prompt": 0, "loose_prompt": 1}
        for _ in range(10)
    ]  # fmt: skip
    pooled = METRICS["instruction_following"].pool(stats, np.random.default_rng(0))
    assert pooled["interval"] == "wilson" and pooled["value"] == 0.0
    assert pooled["strict_instruction"]["interval"] == "wilson-clustered"
    assert pooled["strict_instruction"]["value"] == 50.0
    assert pooled["loose_instruction"]["ci"] == [83.89, 100.0]  # all 20 followed: Wilson(20)


def test_bootstrap_only_where_records_vary() -> None:
    rng = np.random.default_rng(0)
    same = [{"errors": 0, "units": 4, "normalizer": "basic"}] * 10
    pooled = METRICS["wer"].pool(same, rng)
    assert pooled["ci"] is None and pooled["interval"] == "none"
    varied = [{"errors": i % 3, "units": 4, "normalizer": "basic"} for i in range(10)]
    pooled = METRICS["wer"].pool(varied, rng)
    assert pooled["interval"] == BOOTSTRAP and pooled["ci"][0] < pooled["value"] < pooled["ci"][1]
