"""A finished task run joins the results store: one leaderboard cell per task × model."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.store import RunFilters, open_store

from .conftest import run_yaml

TINY = "tasks: [tiny]\ntasks_dirs: [mytasks]\n"


def test_a_finished_task_run_is_indexed_with_its_scores(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VOXBENCH_STORE")  # the default store: two levels above the run
    text = "models: [{name: m, model: vllm/q}]\noutput_dir: runs/tasks\n" + TINY
    result = run_yaml(text, tmp_path)
    runs_dir = result.run.path.parent.parent
    with open_store(None, runs_dir) as store:
        (row,) = store.runs()
        cells = store.leaderboard(RunFilters(kind="tasks"))
    wer = result.scores["tasks"]["tiny"]["m"]["metrics"]["wer"]
    assert (row.run_id, row.kind, row.status) == (result.run.path.name, "tasks", "finished")
    assert row.path == str(result.run.path.resolve())
    assert [(c.benchmark, c.target, c.dimension, c.value) for c in cells] == [
        ("tiny", "m", "wer", wer["value"])
    ]
    assert cells[0].higher_is_better is False and cells[0].n == wer["n"]
