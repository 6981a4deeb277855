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
    # A label that names more than the model part is a named configuration of it.
    assert [(c.benchmark, c.target, c.dimension, c.value) for c in cells] == [
        ("tiny", "vllm/q (m)", "wer", wer["value"])
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
    assert "tiny" in board and "vllm/q (m)" in board
    assert page.status_code == 200 and "wer" in page.text and "report.md" in page.text
    assert report.status_code == 200 and report.text.strip()


def test_the_oracle_is_one_model_across_run_kinds(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The eval config labels it ``oracle``, a conversation run names it ``local/oracle``: one
    # model, one identity in every run kind, so ``store ls -t local/oracle`` finds both.
    import asyncio

    from voxbench.runner.config import RunConfig
    from voxbench.runner.launch import run_conversation

    monkeypatch.setenv("VOXBENCH_STORE", "off")
    text = "models: [{name: oracle, model: local/oracle}]\noutput_dir: runs/tasks\n" + TINY
    task_run = run_yaml(text, tmp_path).run.path
    runs_dir = task_run.parent.parent
    asyncio.run(
        run_conversation(RunConfig(benchmark="smoke", target="local/oracle", runs_dir=runs_dir))
    )
    with open_store(str(tmp_path / "s.db"), runs_dir) as store:
        store.index_tree(runs_dir)
        kinds = sorted(r.kind for r in store.runs(RunFilters(target="local/oracle")))
        task_cells = store.leaderboard(RunFilters(kind="tasks"))
    assert kinds == ["conversation", "tasks"]
    assert {c.target for c in task_cells} == {"local/oracle"}


def test_an_old_task_run_names_its_models_by_label_and_reads_with_one_identity(
    tmp_path: Path, tasks_dir: Path
) -> None:
    # run.json written before models carried a resolved spec: the label is read as the model.
    import json

    from voxbench.store.readers import read_runs

    text = "models: [{name: oracle, model: local/oracle}]\noutput_dir: runs/tasks\n" + TINY
    run = run_yaml(text, tmp_path).run.path
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    for model in info["models"]:
        del model["spec"]
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    (row,) = read_runs(run)
    assert row.target == "local/oracle"
    assert {r.target for r in row.results} == {"local/oracle"}
