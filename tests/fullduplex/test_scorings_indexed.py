"""An FDB scoring joins the results store: a cell per category × target, one run per mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxbench.fullduplex.scoring import score_directory
from voxbench.fullduplex.transcripts import TranscriptStore
from voxbench.store import RunFilters, open_store


def _turn_taking_sample(out: Path, chunks: list[tuple[float, float]]) -> None:
    """One turn-taking sample under ``out``: the user ends at 2.4 s, the model says ``chunks``."""
    folder = out / "candor_turn_taking" / "1"
    folder.mkdir(parents=True)
    (folder / "turn_taking.json").write_text(
        json.dumps([{"text": "[TURN-TAKING]", "timestamp": [2.0, 2.4]}])
    )
    words = [{"text": f"w{i}", "timestamp": list(c)} for i, c in enumerate(chunks)]
    (folder / "output.json").write_text(json.dumps({"text": "", "chunks": words}))


def test_an_fdb_scoring_is_indexed_per_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outputs beside a corpus anywhere: the scoring joins the store of ./runs.
    monkeypatch.delenv("VOXBENCH_STORE")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "corpus" / "outputs"
    _turn_taking_sample(out, [(2.6, 2.9), (2.9, 3.3)])
    no_asr = TranscriptStore("local/none-such", write=False)
    summaries = {
        mode: score_directory(out, mode=mode, transcripts=no_asr, target="acme/duplex").summary  # type: ignore[arg-type]
        for mode in ("fdb-v1", "voxbench")
    }
    with open_store(None, tmp_path / "runs") as store:
        rows = store.runs(RunFilters(kind="fdb"))
        cells = store.leaderboard(RunFilters(mode="voxbench"))
    assert sorted(r.mode or "" for r in rows) == ["fdb-v1", "voxbench"]
    assert all(r.path == str(out.resolve()) for r in rows)
    (cell,) = cells
    assert (cell.benchmark, cell.target, cell.dimension) == (
        "fdb/smooth_turn_taking",
        "acme/duplex",
        "tor",
    )
    (row,) = summaries["voxbench"]["rows"]
    assert cell.value == row["metrics"]["tor"]["mean"] and cell.n == row["metrics"]["tor"]["n"]
    latency = next(r for r in rows[0].results if r.dimension == "latency")
    assert latency.unit == "s" and latency.higher_is_better is False


def test_the_viewer_shows_an_fdb_scoring(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from voxbench.viewer.app import create_app

    out = tmp_path / "runs" / "fdb" / "outputs"
    _turn_taking_sample(out, [(2.6, 3.0)])
    score_directory(
        out,
        mode="voxbench",
        transcripts=TranscriptStore("local/none-such", write=False),
        target="acme/duplex",
    )
    with open_store(None, tmp_path / "runs") as store:
        (row,) = store.runs()
        with TestClient(create_app(tmp_path / "runs", store), base_url="http://127.0.0.1") as http:
            board = http.get("/").text
            page = http.get(f"/run/{row.run_id}/").text
    assert "fdb/smooth_turn_taking" in board and "acme/duplex" in board
    assert "tor" in page and "fdb_summary_voxbench.json" in page


def test_a_judged_scoring_is_indexed_with_its_judge(tmp_path: Path) -> None:
    # A scoring with an LLM judge records the judge as {name, seed, temperature}; the store
    # read it as a plain string before and skipped the whole scoring.
    from voxbench.fullduplex.summary import write_json
    from voxbench.store.readers import read_runs

    summary = {
        "schema_version": 1,
        "mode": "voxbench",
        "judge": {"name": "openai/gpt-4o-mini", "seed": 0, "temperature": 0.0},
        "rows": [
            {
                "target": "acme/duplex",
                "category": "user_interruption",
                "subset": "v1",
                "samples": 2,
                "metrics": {"relevance": {"n": 2, "mean": 3.5, "std": 0.5}},
            }
        ],
    }
    write_json(summary, tmp_path / "fdb_summary_voxbench.json")
    (row,) = read_runs(tmp_path)
    assert row.judges == ["openai/gpt-4o-mini"]
    assert [(r.benchmark, r.dimension, r.value) for r in row.results] == [
        ("fdb/user_interruption", "relevance", 3.5)
    ]


def test_a_scoring_outside_the_served_folder_is_listed_without_dead_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``fdb score`` beside a corpus anywhere joins the store of ./runs; the viewer serves only
    # ./runs, so its cells linked to a 404 and the Runs page left it out.
    from starlette.testclient import TestClient

    from voxbench.viewer.app import create_app

    monkeypatch.delenv("VOXBENCH_STORE")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "elsewhere" / "outputs"
    _turn_taking_sample(out, [(2.6, 3.0)])
    score_directory(
        out,
        mode="voxbench",
        transcripts=TranscriptStore("local/none-such", write=False),
        target="acme/duplex",
    )
    runs = tmp_path / "runs"
    with open_store(None, runs) as store:
        (row,) = store.runs()
        with TestClient(create_app(runs, store), base_url="http://127.0.0.1") as http:
            board = http.get("/").text
            listing = http.get("/runs").text
    assert "acme/duplex" in board and f"/run/{row.run_id}/" not in board
    assert "outside the folder this viewer serves" in board
    assert row.run_id in listing and f"/run/{row.run_id}/" not in listing
