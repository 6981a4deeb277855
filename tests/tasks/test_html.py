"""A task run's ``report.html``: the tasks × models table and the worst records with players."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_invoke import invoke
from tests.report.html_checks import external_links, parse, player_files
from tests.tasks.conftest import FakeEndpoints, run_yaml
from voxbench.report.tasks_html import badness, render_tasks_html

TWO_MODELS = (
    "models: [{name: good, model: vllm/a, endpoints: [{base_url: 'http://good'}]},"
    " {name: bad, model: vllm/b, endpoints: [{base_url: 'http://bad'}]}]\n"
    "tasks: [tiny]\ntasks_dirs: [mytasks]\n"
)


MISHEARD = {"four five six": "", "sept huit neuf": "x y z", "one two three": "one two three"}
"""The bad model stays silent on one clip, mishears another and gets the third right.
(A near miss on "one two three" is no longer partial: Whisper's English normaliser writes
spelled digits as one number, "123".)"""


class PerModel:
    """Each model its own fake endpoints."""

    def __init__(self, **fakes: FakeEndpoints) -> None:
        self.fakes = fakes

    def factory(self, model, endpoint, api):
        return self.fakes[model.name].factory(model, endpoint, api)


def test_worst_records_come_first_with_players(
    tmp_path: Path, tasks_dir: Path, monkeypatch, capsys
) -> None:
    bad = FakeEndpoints(reply=lambda r: MISHEARD.get(r.reference, r.reference))
    result = run_yaml(TWO_MODELS, tmp_path, PerModel(good=FakeEndpoints(), bad=bad))
    run = result.run.path
    page = parse(render_tasks_html(run, worst=2, copy_clips=True))
    # The table: one row per (task, metric) with a cell per model.
    rows = page.find("tr", class_="tasks-row")
    assert len(rows) == 1 and "tiny" in rows[0].text and "wer" in rows[0].text
    scores = json.loads((run / "scores.json").read_text())
    for model in ("good", "bad"):
        value = scores["tasks"]["tiny"][model]["metrics"]["wer"]["value"]
        assert f"{value:.2f}" in rows[0].text
    # Worst first, at most two per model; the good model has none.
    shown = [r.attrs["data-record"] for r in page.find("tr", class_="worst-record")]
    assert shown == ["b", "c"]  # empty reply (1.5), then 3/3 words wrong (1.0); "a" is right
    headings = [h.text for h in page.find("h3")]
    assert headings[0].startswith("tiny · good (0 of 6") and headings[1].startswith(
        "tiny · bad (2 of 6"
    )
    assert "Every record right." in page.find("p", class_="muted")[-1].text
    # The clips (beside the dataset, outside the run) are copied into the run and played
    # from there: no link climbs out of the run folder (it failed in the viewer and in a
    # folder sent to someone).
    files = player_files(page, run)
    assert [f.name.split("-", 1)[1] for f in files] == ["b.wav", "c.wav"]
    assert all(f.is_file() and f.parent == run / "clips" for f in files)
    assert all(".." not in a.attrs["src"] for a in page.find("audio"))
    assert not external_links(page)
    code, out, err = invoke(monkeypatch, capsys, "tasks", "show", str(run), "--html")
    assert code == 0, err
    assert (run / "report.html").is_file()
    (run / "report.html").unlink()
    code, out, err = invoke(monkeypatch, capsys, "report", str(run))  # the same page
    assert code == 0, err
    assert (run / "report.html").is_file() and "report.html" in out


def test_badness_ranks_errors_then_empty_then_wrong() -> None:
    error = {"error": {"category": "server", "message": "503"}, "prediction": None}
    empty = {"error": None, "prediction": "", "scores": {}}
    wrong = {"error": None, "prediction": "x", "scores": {"accuracy": {"correct": 0}}}
    half = {"error": None, "prediction": "x", "scores": {"wer": {"errors": 1, "units": 2}}}
    right = {"error": None, "prediction": "x", "scores": {"exact_match": {"correct": 1}}}
    assert [badness(r) for r in (error, empty, wrong, half, right)] == [2.0, 1.5, 1.0, 0.5, 0.0]


def test_the_viewer_shows_a_task_run_with_its_players(tmp_path: Path, tasks_dir: Path) -> None:
    # The viewer's task-run page had no players: it now shows the run's page, whose players
    # reach the clips copied into the run, served under /run/<id>/.
    from starlette.testclient import TestClient

    from voxbench.report.tasks_html import write_tasks_html
    from voxbench.store import open_store
    from voxbench.viewer.app import create_app

    bad = FakeEndpoints(reply=lambda r: MISHEARD.get(r.reference, r.reference))
    text = TWO_MODELS + "output_dir: runs/tasks\n"
    run = run_yaml(text, tmp_path, PerModel(good=FakeEndpoints(), bad=bad)).run.path
    write_tasks_html(run)
    runs = run.parent.parent
    with (
        open_store(str(tmp_path / "v.db"), runs) as store,
        TestClient(create_app(runs, store), base_url="http://127.0.0.1") as http,
    ):
        page = parse(http.get(f"/run/{run.name}/").text)
        sources = [a.attrs["src"] for a in page.find("audio")]
        assert len(sources) == 2 and all(s.startswith("clips/") for s in sources)
        for src in sources:
            clip = http.get(f"/run/{run.name}/{src}")
            assert clip.status_code == 200 and clip.content[:4] == b"RIFF"


def test_an_undecided_record_is_neither_right_nor_wrong() -> None:
    # A judge metric with no verdict: badness counts only what was decided.
    undecided = {
        "error": None,
        "prediction": "x",
        "scores": {"llm_judge": {"correct": None, "undecided": 1}},
    }
    assert badness(undecided) == 0.0
