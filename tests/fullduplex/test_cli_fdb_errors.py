"""Issue 11: ``fdb run`` and ``fdb score`` end every bad input in a message and a non-zero code."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fullduplex.test_cli_fdb import voxbench

USER_ERROR, INCOMPLETE = 2, 4
TONE = "tests.fullduplex.tone_session:ToneSession"


def test_fdb_run_on_a_missing_corpus_is_a_user_error(monkeypatch, capsys, tmp_path) -> None:
    missing = tmp_path / "nonexistent"
    code, out, err = voxbench(monkeypatch, capsys, "fdb", "run", str(missing), "-t", TONE)
    assert code == USER_ERROR, out + err
    assert str(missing) in err and "not found" in err and "completed 0" not in out


def test_fdb_run_on_a_corpus_without_samples_is_a_user_error(monkeypatch, capsys, tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = voxbench(
        monkeypatch, capsys, "fdb", "run", str(empty), "-t", TONE, "--virtual"
    )
    assert code == USER_ERROR, out + err
    assert "no sample to run" in err and "input.wav" in err


def test_fdb_score_on_a_missing_directory_is_a_user_error(monkeypatch, capsys, tmp_path) -> None:
    missing = tmp_path / "nonexistent"
    code, out, err = voxbench(monkeypatch, capsys, "fdb", "score", str(missing))
    assert code == USER_ERROR, out + err
    assert str(missing) in err and "Traceback" not in out + err


def test_fdb_score_with_a_missing_gt_file_is_one_error(
    monkeypatch, capsys, mini_outputs: Path
) -> None:
    code, out, err = voxbench(
        monkeypatch, capsys, "fdb", "score", str(mini_outputs), "--gt", "missing.json"
    )
    assert code == USER_ERROR, out + err
    assert "missing.json" in err and "file not found" in err
    assert len(err.strip().splitlines()) == 1, err
    assert not list(mini_outputs.glob("fdb_scores_*.jsonl"))  # nothing scored


def test_fdb_score_with_a_corrupt_output_names_it_and_exits_4(
    monkeypatch, capsys, mini_outputs: Path
) -> None:
    wav = next((mini_outputs / "v1_0" / "candor_pause_handling").rglob("output.wav"))
    wav.write_bytes(b"not a wave file at all " * 20)
    (wav.parent / "output.json").unlink(missing_ok=True)
    code, out, err = voxbench(monkeypatch, capsys, "fdb", "score", str(mini_outputs))
    assert code == INCOMPLETE, out + err
    text = out + err
    assert "could not be scored" in text and "Traceback" not in text
    assert wav.parent.name in text


def test_fdb_score_without_ground_truth_says_the_file_is_missing(
    monkeypatch, capsys, mini_outputs: Path
) -> None:
    (mini_outputs / "v1_0" / "icc_gt_distribution.json").unlink()
    code, out, err = voxbench(
        monkeypatch, capsys, "fdb", "score", str(mini_outputs / "v1_0" / "icc_backchannel"),
        "--json",
    )  # fmt: skip
    assert code == 0, out + err
    summary = json.loads(out)
    (row,) = summary["rows"]
    assert not row["metrics"].get("jsd", {}).get("n"), row  # no placeholder 1.0
    assert any("icc_gt_distribution.json" in note for note in summary["notes"]), summary["notes"]
