"""The leaderboard: one table per run kind, each cell's decided share, and a cell more than
20% undecided marked "not ranked", never the column's best (issue 27; issue 32 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.testclient import TestClient

from tests.report.html_checks import parse
from tests.store.fixture_runs import Runs
from tests.viewer.conftest import BASE_URL
from voxbench.store import open_store
from voxbench.viewer.app import create_app


def task_run(root: Path, metrics: dict[str, dict]) -> None:
    """A finished task run of the task ``tiny`` (accuracy) with these models' metric values."""
    run = root / "tasks" / "20261127T000000Z_kinds"
    run.mkdir(parents=True)
    info = {
        "schema": "voxbench.tasks/1",
        "id": run.name,
        "started": "2026-11-27T00:00:00+00:00",
        "finished": "2026-11-27T00:01:00+00:00",
        "status": "finished",
        "seed": 0,
        "models": [{"name": m, "model": m, "api": "chat", "endpoints": 1} for m in metrics],
        "tasks": {"tiny": {"fingerprint": "sha256:0", "records": 10, "metrics": ["accuracy"]}},
    }
    scores = {
        m: {"records": 10, "metrics": {"accuracy": {"higher_is_better": True, **v}}}
        for m, v in metrics.items()
    }
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    (run / "scores.json").write_text(json.dumps({"tasks": {"tiny": scores}}), encoding="utf-8")


def test_each_kind_has_its_table_and_an_undecided_cell_is_never_best(runs: Runs) -> None:
    task_run(
        runs.root,
        {
            "acme/good": {"value": 80.0, "n": 10, "undecided": 0},
            # The highest value, but half its records undecided: shown, not ranked.
            "acme/shaky": {"value": 95.0, "n": 5, "undecided": 5},
            "acme/mid": {"value": 70.0, "n": 9, "undecided": 1},
        },
    )
    with (
        open_store(str(runs.root / "voxbench.db"), runs.root) as store,
        TestClient(create_app(runs.root, store), base_url=BASE_URL) as client,
    ):
        page = parse(client.get("/").text)
    tables = {t.attrs["id"]: t for t in page.find("table", class_="leaderboard")}
    assert set(tables) == {"leaderboard-conversation", "leaderboard-tasks"}
    assert "tiny" not in tables["leaderboard-conversation"].text
    assert "smoke" not in tables["leaderboard-tasks"].text
    assert [h.text for h in page.find("h2")] == ["Conversation benchmarks", "Audio tasks"]
    cells = {
        row.attrs["data-target"]: row.text
        for row in page.find("tr")
        if row.attrs.get("data-target", "").startswith("acme/")
    }
    assert "50% decided" in cells["acme/shaky"] and "not ranked" in cells["acme/shaky"]
    assert "90% decided" in cells["acme/mid"] and "not ranked" not in cells["acme/mid"]
    assert "100% decided" in cells["acme/good"]
    unranked = page.find("td", class_="unranked")
    assert len(unranked) == 1 and unranked[0].attrs["data-unranked"] == "1"
    assert "95.0" in unranked[0].text
    best = page.find("td", class_="best")
    assert [b.text.split()[0] for b in best if "accuracy" in b.text] == ["80.0"]
    assert "★" not in unranked[0].text
