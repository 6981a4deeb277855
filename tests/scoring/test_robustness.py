"""The robustness analysis: paired drops with exact tests and intervals, latency shifts, task
records paired by id, the ladder's axis, and the report's files (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest

from voxbench.core.measures import RunAnalysis, TurnMeasures
from voxbench.core.records import Judgment, TurnRecord, TurnTimings
from voxbench.scoring.robustness import (
    ConversationRun,
    conversation_robustness,
    drop_interval,
    is_monotone,
    ladder_axis,
    level_of,
    median_interval,
    paired_drop,
    task_robustness,
)


def test_a_paired_drop_is_tested_with_exact_mcnemar_and_has_an_exact_interval() -> None:
    clean = {f"t{i}": True for i in range(20)}
    noisy = {f"t{i}": i >= 8 for i in range(20)}  # 8 turns lost
    noisy["t19"] = None  # undecided: left out of the pairs
    d = paired_drop("tool_use", clean, noisy)
    assert (d.paired, d.worse, d.better) == (19, 8, 0)
    assert d.clean == 1.0 and d.value == round(11 / 19, 4)
    assert d.drop == round(1 - 11 / 19, 4)
    assert d.p_value == pytest.approx(binomtest(0, 8, 0.5).pvalue, abs=1e-6)
    lo, hi = d.drop_ci
    assert 0 < lo < d.drop <= hi  # a significant drop: the interval excludes 0
    # No discordant pair: no difference, an interval of exactly nothing.
    same = paired_drop("x", clean, clean)
    assert same.drop == 0 and same.drop_ci == (0.0, 0.0) and same.p_value == 1.0


def test_the_drop_interval_holds_zero_exactly_when_mcnemar_cannot_reject() -> None:
    for worse, better in [(3, 1), (5, 0), (6, 0), (9, 2), (10, 10)]:
        lo, hi = drop_interval(worse, better, 40)
        p = binomtest(worse, worse + better, 0.5).pvalue
        assert (lo <= 0 <= hi) == (p >= 0.05), (worse, better)


def test_lower_is_better_outcomes_count_a_rise_as_worse() -> None:
    clean = {"a": False, "b": False, "c": False}
    noisy = {"a": True, "b": True, "c": False}  # two turns now get no response
    d = paired_drop("no_response", clean, noisy, higher_is_better=False)
    assert (d.worse, d.better, d.drop) == (2, 0, round(2 / 3, 4))


def test_median_interval_is_distribution_free_and_needs_six_values() -> None:
    assert median_interval([1, 2, 3, 4, 5]) is None
    assert median_interval([1, 2, 3, 4, 5, 6]) == (1, 6)
    values = list(range(1, 21))
    lo, hi = median_interval(values)
    assert lo < 10.5 < hi and (lo, hi) == (6, 15)


def _run(
    seed: int, passes: list[bool], v2v: list[float | None], silent: frozenset[int] = frozenset()
):
    records = [
        TurnRecord(
            turn=f"t{i}",
            index=i,
            user_text="u",
            timings=TurnTimings(start=0),
            status="no_response" if i in silent else "ok",
        )
        for i in range(len(passes))
    ]
    judgments = [
        Judgment(turn=f"t{i}", dimension="tool_use", passed=p) for i, p in enumerate(passes)
    ]
    analysis = RunAnalysis(
        mode="audio",
        turns=[TurnMeasures(turn=f"t{i}", voice_to_voice=v) for i, v in enumerate(v2v)],
    )
    return ConversationRun(f"run{seed}", seed, records, judgments, analysis)


def test_conversation_runs_pair_turns_within_each_seed() -> None:
    n = 12
    clean = [_run(s, [True] * n, [1.0] * n) for s in (0, 1)]
    noisy = [
        _run(0, [i % 3 != 0 for i in range(n)], [1.5] * n, silent={0}),
        _run(1, [True] * n, [1.25] * n),
    ]
    report = conversation_robustness("smoke", "t", clean, {"noise:pink@5dB": noisy})
    (c,) = report.conditions
    assert c.level == 5.0 and report.axis == "SNR (dB)"
    drops = {d.name: d for d in c.drops}
    assert drops["tool_use"].paired == 2 * n and drops["tool_use"].worse == 4
    assert drops["no_response"].worse == 1 and drops["no_response"].higher_is_better is False
    (shift,) = c.latency
    assert shift.paired == 2 * n and shift.slower == 2 * n
    assert shift.median_shift == pytest.approx(0.375) and shift.clean_p50 == 1.0


def test_task_records_are_paired_by_id_per_metric() -> None:
    def rows(errors: list[int], correct: list[int]) -> list[dict]:
        return [
            {"task": "asr", "model": "w", "id": f"r{i}", "error": None,
             "scores": {"wer": {"errors": e, "units": 10}, "acc": {"correct": c}}}
            for i, (e, c) in enumerate(zip(errors, correct, strict=True))
        ]  # fmt: skip

    clean = rows([0, 1, 0, 2, 0, 1, 0, 0], [1] * 8)
    noisy = rows([3, 4, 2, 5, 1, 1, 6, 2], [0, 1, 0, 1, 1, 1, 1, 1])
    report = task_robustness("c", clean, {"noise:pink@0dB": ("n", noisy)}, seed=1)
    drops = {d.name: d for d in report.conditions[0].drops}
    wer = drops["asr · w · wer"]
    assert wer.clean == 0.05 and wer.value == 0.3 and wer.drop == 0.25
    assert (wer.worse, wer.better) == (7, 0) and wer.higher_is_better is False
    assert wer.drop_ci[0] > 0 and wer.p_value == pytest.approx(binomtest(0, 7).pvalue, abs=1e-6)
    # The bootstrap is seeded: the same report twice.
    again = task_robustness("c", clean, {"noise:pink@0dB": ("n", noisy)}, seed=1)
    assert again == report
    acc = drops["asr · w · acc"]
    assert (acc.worse, acc.better, acc.drop) == (2, 0, 0.25)


def test_the_ladder_axis_and_monotone_curves() -> None:
    assert level_of("noise:babble@-5dB") == ("SNR (dB)", -5.0)
    assert level_of("loss:5%,burst=3") == ("loss (%)", 5.0)
    assert level_of("noise:pink@5dB+codec:mulaw") == (None, None)
    assert ladder_axis(["noise:pink@20dB", "noise:white@0dB"]) == "SNR (dB)"
    assert ladder_axis(["noise:pink@20dB", "loss:5%"]) is None
    assert is_monotone([0.9, 0.8, 0.8, 0.5]) and not is_monotone([0.9, 0.95])
    assert is_monotone([0.1, 0.2, 0.4], worse_down=False)


def test_the_report_is_written_as_json_markdown_and_html_with_curves(tmp_path: Path) -> None:
    from voxbench.report.robustness import write_report

    n = 10
    clean = [_run(0, [True] * n, [1.0] * n)]
    ladder = {
        f"noise:pink@{snr}dB": [_run(0, [i >= k for i in range(n)], [1.0 + k / 10] * n)]
        for k, snr in enumerate((20, 10, 5, 0))
    }
    report = conversation_robustness("smoke", "cascade/local/baseline", clean, ladder)
    page = write_report(report, tmp_path)
    html = page.read_text()
    assert html.count("<svg") >= 2 and "tool_use under the ladder" in html
    assert "SNR (dB)" in html and "<script src" not in html
    md = (tmp_path / "robustness.md").read_text()
    assert "| noise:pink@0dB | tool_use |" in md
    data = json.loads((tmp_path / "robustness.json").read_text())
    rates = [c["drops"][1]["value"] for c in data["conditions"]]
    assert is_monotone(rates)
