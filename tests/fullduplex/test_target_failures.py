"""Issue 30 item 1: a sample whose target failed is an error row, never a score.

A target that failed on every sample (a dead endpoint) used to score as perfect on pause
handling (take-over rate 0.000, errors 0) while ``fdb run`` and ``fdb score`` exited 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fullduplex.test_cli_fdb import voxbench

INCOMPLETE = 4
DEAD = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there


@pytest.fixture
def dead_run(monkeypatch, capsys, mini_corpus: Path, tmp_path: Path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dead-endpoint-000")
    out = tmp_path / "out"
    code, stdout, stderr = voxbench(
        monkeypatch, capsys, "fdb", "run", str(mini_corpus / "v1_0"),
        "-t", "cascade/openai/gpt-4o-mini", "--base-url", DEAD, "--stt", "none",
        "--category", "pause_handling", "--concurrency", "2", "--out", str(out),
    )  # fmt: skip
    return out, code, stdout, stderr


def test_fdb_run_against_a_dead_endpoint_lists_every_sample_and_exits_4(dead_run) -> None:
    out, code, stdout, stderr = dead_run
    text = stdout + stderr
    assert code == INCOMPLETE, text
    assert "completed 0" in text and "failed 2" in text, text
    for subset in ("synthetic_pause_handling", "candor_pause_handling"):
        assert f"{subset}/1" in text, text  # each failed sample is listed
        record = json.loads((out / subset / "1" / "voxbench_fdb.json").read_text())
        assert record["status"] == "failed" and "cannot connect" in record["error"]
        assert not (out / subset / "1" / "output.wav").exists()  # no silent output to score


def test_fdb_score_of_a_dead_endpoint_is_error_rows_never_a_perfect_score(
    dead_run, monkeypatch, capsys
) -> None:
    out = dead_run[0]
    for mode in ("fdb-v1", "voxbench"):
        code, stdout, stderr = voxbench(
            monkeypatch, capsys, "fdb", "score", str(out), "--mode", mode, "--no-asr"
        )
        text = stdout + stderr
        assert code == INCOMPLETE, text
        for subset in ("synthetic_pause_handling", "candor_pause_handling"):
            assert f"{subset}/1" in text and "target failed" in text, text
        summary = json.loads((out / f"fdb_summary_{mode}.json").read_text())
        rows = [r for r in summary["rows"] if r["category"] == "pause_handling"]
        assert rows and all(r["errors"] == r["samples"] for r in rows), rows
        for row in rows:  # no take-over rate at all, least of all 0.000
            assert not (row["metrics"].get("tor") or {}).get("n"), row


def test_a_completed_record_whose_streams_errored_is_not_resumed_nor_scored(
    mini_outputs: Path,
) -> None:
    """Records the earlier driver wrote (status completed, errors in the stream) are failures."""
    from voxbench.fullduplex.driver import is_complete
    from voxbench.fullduplex.scoring import score_directory
    from voxbench.fullduplex.transcripts import TranscriptStore

    sample = mini_outputs / "v1_0" / "synthetic_pause_handling" / "1"
    record = {
        "target": "cascade/openai/gpt-4o-mini",
        "status": "completed",
        "streams": [{"output": "output.wav", "errors": ["cascade: ProviderError: cannot connect"]}],
    }
    (sample / "voxbench_fdb.json").write_text(json.dumps(record))
    assert not is_complete(sample)
    report = score_directory(
        mini_outputs / "v1_0" / "synthetic_pause_handling", mode="fdb-v1",
        transcripts=TranscriptStore(None), write=False,
    )  # fmt: skip
    (score,) = report.scores
    assert score.error and "target failed" in score.error and "cannot connect" in score.error
    assert score.metrics == {}
