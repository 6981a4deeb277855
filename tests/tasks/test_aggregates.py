"""Aggregates state what they hold: per task its weight, value and records; what was left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.core.errors import ConfigError

from .conftest import FakeEndpoints, run_yaml
from .fake_judge import GullibleJudge, TrackingServer
from .test_http import serving

MODEL = "models: [{name: m, model: vllm/q}]\n"


@pytest.fixture
def two_tasks(tasks_dir: Path) -> Path:
    """``tiny`` (wer) and ``other`` (wer, exact_match), both in the group ``mine``."""
    (tasks_dir / "mine" / "other.yaml").write_text(
        "extends: tiny\nmetrics: [wer, exact_match]\nprompt: {user: other}\n"
    )
    return tasks_dir


def _fakes() -> FakeEndpoints:
    # tiny: "one two three" fails for good; other: "four five six" answered wrong.
    def reply(request) -> str:
        if request.prompt == "other" and request.reference == "four five six":
            return "four five"
        return request.reference

    return FakeEndpoints(reply=reply, fatal={"one two three"})


def test_weighted_aggregate_lists_tasks_weights_and_records(
    tmp_path: Path, two_tasks: Path
) -> None:
    config = (
        MODEL + "tasks: [mine]\ntasks_dirs: [mytasks]\n"
        "aggregate:\n"
        "  - {name: w, metric: wer, tasks: {tiny: 1, other: 3}}\n"
        "  - {name: em, metric: exact_match, tasks: [mine]}\n"
    )
    fakes = _fakes()
    fakes.fatal = set()
    result = run_yaml(config, tmp_path, fakes)
    tasks = result.scores["tasks"]
    wer_other = tasks["other"]["m"]["metrics"]["wer"]["value"]
    assert wer_other > 0  # one word left out
    agg = result.scores["aggregates"]["w"]
    assert agg["weights"] == {"tiny": 1.0, "other": 3.0} and agg["higher_is_better"] is False
    entry = agg["models"]["m"]
    assert entry["value"] == pytest.approx((0 * 1 + wer_other * 3) / 4, abs=0.01)
    assert set(entry["tasks"]) == {"tiny", "other"} and entry["excluded"] == {}
    assert entry["tasks"]["other"] == {
        "weight": 3.0, "value": wer_other, "n": 6, "records": 6, "errors": 0, "missing": 0,
        "undecided": 0,
    }  # fmt: skip
    assert (entry["n"], entry["records"], entry["errors"]) == (12, 12, 0)
    assert "Σ weight × task value" in agg["rule"]
    em = result.scores["aggregates"]["em"]["models"]["m"]
    assert set(em["tasks"]) == {"other"}
    assert em["excluded"] == {"tiny": "the task does not compute exact_match"}
    report = (result.run.path / "report.md").read_text()
    assert "### Aggregate w (wer)" in report and "| other | 3 |" in report
    assert "(2/2 tasks, n=12)" in report and "(1/2 tasks, n=6)" in report
    assert "left out: the task does not compute exact_match" in report


def test_errors_are_left_out_and_counted(tmp_path: Path, two_tasks: Path) -> None:
    config = (
        MODEL + "tasks: [mine]\ntasks_dirs: [mytasks]\n"
        "aggregate: [{name: w, metric: wer, tasks: [mine]}]\n"
    )
    result = run_yaml(config, tmp_path, _fakes())
    entry = result.scores["aggregates"]["w"]["models"]["m"]
    # The failing record fails in both tasks: 5 scored of 6 in each.
    assert entry["tasks"]["tiny"]["n"] == 5 and entry["tasks"]["tiny"]["errors"] == 1
    assert (entry["n"], entry["records"], entry["errors"]) == (10, 12, 2)
    assert "2 errors" in (result.run.path / "report.md").read_text()


def test_undecided_judge_records_are_counted(tmp_path: Path, tasks_dir: Path) -> None:
    (tasks_dir / "mine" / "qa.yaml").write_text("extends: tiny\nmetrics: [llm_judge]\n")
    with serving(TrackingServer(GullibleJudge(unusable={"four five six": 9}))) as server:
        config = (
            MODEL + f"judge: {{model: openai-compatible/j, base_url: '{server.url}', "
            "retries: 1, backoff_base_s: 0}\ntasks: [qa]\ntasks_dirs: [mytasks]\n"
            "aggregate: [{name: judged, metric: llm_judge, tasks: [qa]}]\n"
        )
        result = run_yaml(config, tmp_path, FakeEndpoints())
    entry = result.scores["aggregates"]["judged"]["models"]["m"]
    assert entry["tasks"]["qa"]["undecided"] == 1 and entry["undecided"] == 1
    assert entry["n"] == 5 and entry["value"] == 100.0


def test_a_task_with_two_weights_is_an_error(tmp_path: Path, two_tasks: Path) -> None:
    config = (
        MODEL + "tasks: [mine]\ntasks_dirs: [mytasks]\n"
        "aggregate: [{name: w, metric: wer, tasks: {mine: 2, tiny: 1}}]\n"
    )
    with pytest.raises(ConfigError, match="tiny gets weight 2 from mine and 1 from tiny") as caught:
        run_yaml(config, tmp_path, _fakes())
    assert caught.value.field == "aggregate[0].tasks"
    same = config.replace("tiny: 1", "tiny: 2")  # the same weight twice is fine
    result = run_yaml(same, tmp_path, _fakes())
    assert result.scores["aggregates"]["w"]["weights"] == {"other": 2.0, "tiny": 2.0}


def test_a_negative_weight_is_an_error(tmp_path: Path, two_tasks: Path) -> None:
    config = (
        MODEL + "tasks: [mine]\ntasks_dirs: [mytasks]\n"
        "aggregate: [{name: w, metric: wer, tasks: {tiny: -1}}]\n"
    )
    with pytest.raises(ConfigError, match="negative weight") as caught:
        run_yaml(config, tmp_path, _fakes())
    assert caught.value.field == "aggregate[0].tasks"


def test_an_interval_does_not_depend_on_what_else_the_run_holds(
    tmp_path: Path, two_tasks: Path
) -> None:
    """Each task × model resamples from its own stream: running ``other`` alone, after
    ``tiny`` or under another label gives the same interval."""

    def fakes() -> FakeEndpoints:
        found = _fakes()
        found.fatal = set()
        return found

    def interval(config: str, folder: str, label: str = "m") -> list[float]:
        (tmp_path / folder).mkdir()
        result = run_yaml(config + "tasks_dirs: [../mytasks]\n", tmp_path / folder, fakes())
        return result.scores["tasks"]["other"][label]["metrics"]["wer"]["ci"]

    alone = interval(MODEL + "tasks: [other]\n", "a")
    assert alone[0] < alone[1]  # a real interval: "four five" misses a word in 1 of 6
    assert interval(MODEL + "tasks: [tiny, other]\n", "b") == alone
    assert interval("models: [{name: n, model: vllm/q}]\ntasks: [other, tiny]\n", "c", "n") == alone
