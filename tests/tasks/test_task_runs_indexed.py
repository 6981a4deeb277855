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


def test_the_viewer_shows_a_task_run(tmp_path: Path, tasks_dir: Path) -> None:
    from starlette.testclient import TestClient

    from voxbench.viewer.app import create_app

    text = "models: [{name: m, model: vllm/q}]\noutput_dir: runs/tasks\n" + TINY
    result = run_yaml(text, tmp_path)
    runs_dir = result.run.path.parent.parent
    with (
        open_store(str(tmp_path / "view.db"), runs_dir) as store,
        TestClient(create_app(runs_dir, store), base_url="http://127.0.0.1") as http,
    ):
        board = http.get("/").text
        page = http.get(f"/run/{result.run.path.name}/")
        report = http.get(f"/run/{result.run.path.name}/report.md")
    assert "tiny" in board and ">m<" in board
    assert page.status_code == 200 and "wer" in page.text and "report.md" in page.text
    assert report.status_code == 200 and report.text.strip()
