"""Issue 30 item 3: ``fdb score --csv`` has fdb_bench's per-stage p50/p90/p99 columns."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.fullduplex.test_cli_fdb import voxbench
from voxbench.fullduplex.summary import write_csv

STAGE_COLUMNS = [f"{s}_{p}" for s in ("stt", "llm", "tts", "ttft", "total") for p in ("p50", "p90", "p99")]  # fmt: skip


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_stage_columns_come_from_the_summary_stage_timings() -> None:
    stats = {"n": 3, "mean": 0.5, "p50": 0.4, "p90": 0.8, "p99": 0.9}
    summary = {
        "mode": "voxbench",
        "rows": [
            {"target": "cascade/x", "category": "pause_handling", "subset": s, "samples": 1,
             "errors": 0, "judge_errors": 0, "metrics": {"tor": {"n": 1, "mean": 0.0, "std": 0.0}}}
            for s in ("candor_pause_handling", "synthetic_pause_handling", "all")
        ],
        "stage_timings": [
            {"target": "cascade/x", "category": "pause_handling", "samples": 2,
             "errored_excluded": 0,
             "stages": {"stt": stats, "llm": {**stats, "p50": 0.1}, "tts": stats,
                        "ttft": stats, "total": stats, "vad": stats}},
        ],
    }  # fmt: skip
    out = io.StringIO()
    write_csv(summary, out)
    header = out.getvalue().splitlines()[0].split(",")
    assert header[-18:-3] == STAGE_COLUMNS and header[-3:] == ["vad_p50", "vad_p90", "vad_p99"]
    rows = _rows(out.getvalue())
    assert len(rows) == 3
    for row in rows:  # every subset row of the category carries its stage timings
        assert row["stt_p50"] == "0.4" and row["llm_p50"] == "0.1" and row["total_p99"] == "0.9"


def test_stage_columns_are_there_even_when_nothing_was_timed() -> None:
    summary = {"mode": "fdb-v1", "rows": [
        {"target": "t", "category": "backchannel", "subset": "icc_backchannel", "samples": 1,
         "errors": 0, "judge_errors": 0, "metrics": {}}]}  # fmt: skip
    out = io.StringIO()
    write_csv(summary, out)
    (row,) = _rows(out.getvalue())
    assert all(row[c] == "" for c in STAGE_COLUMNS)


def test_fdb_score_csv_after_a_run(monkeypatch, capsys, mini_corpus: Path, tmp_path: Path) -> None:
    out_dir, table = tmp_path / "outputs", tmp_path / "summary.csv"
    code, out, err = voxbench(
        monkeypatch, capsys, "fdb", "run", str(mini_corpus / "v1_0"),
        "--target", "tests.fullduplex.tone_session:ToneSession", "--virtual",
        "--out", str(out_dir), "--category", "smooth_turn_taking",
    )  # fmt: skip
    assert code == 0, out + err
    code, out, err = voxbench(
        monkeypatch, capsys, "fdb", "score", str(out_dir), "--csv", str(table)
    )
    assert code == 0, out + err
    summary = json.loads((out_dir / "fdb_summary_fdb-v1.json").read_text())
    (timing,) = summary["stage_timings"]
    (row,) = _rows(table.read_text())
    for stage in ("ttft", "total"):
        for p in ("p50", "p90", "p99"):
            assert float(row[f"{stage}_{p}"]) == pytest.approx(timing["stages"][stage][p])
    assert row["stt_p50"] == ""  # a tone session has no STT stage
