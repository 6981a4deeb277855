"""``voxbench fdb run|score`` as a user types them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_invoke import invoke


def voxbench(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    return invoke(monkeypatch, capsys, *args)


def test_score_json_reproduces_the_reference_values(
    monkeypatch, capsys, fdb_examples: Path
) -> None:
    code, out, err = voxbench(
        monkeypatch,
        capsys,
        "fdb",
        "score",
        str(fdb_examples),
        "--json",
        "--target",
        "example/model",
    )
    assert code == 0, err
    summary = json.loads(out)
    rows = {r["category"]: r for r in summary["rows"]}
    assert rows["pause_handling"]["metrics"]["tor"]["mean"] == 1.0
    assert rows["smooth_turn_taking"]["metrics"]["latency"]["mean"] == pytest.approx(1.35, abs=0.01)
    assert rows["user_interruption"]["metrics"]["latency"]["mean"] == pytest.approx(4.08, abs=0.01)
    assert {r["target"] for r in summary["rows"]} == {"example/model"}


def _shift_words(path: Path, by: float) -> None:
    data = json.loads(path.read_text())
    for chunk in data["chunks"]:
        chunk["timestamp"] = [t + by for t in chunk["timestamp"]]
    path.write_text(json.dumps(data))


def test_baseline_gate_fails_on_regression_only(
    monkeypatch, capsys, mini_outputs: Path, tmp_path: Path
) -> None:
    turn = mini_outputs / "v1_0" / "candor_turn_taking"
    csv_file = tmp_path / "base.csv"
    code, out, err = voxbench(
        monkeypatch, capsys, "fdb", "score", str(turn), "--csv", str(csv_file)
    )
    assert code == 0, out + err
    baseline = turn / "fdb_summary_fdb-v1.json"
    saved = tmp_path / "baseline.json"
    saved.write_text(baseline.read_text())
    assert "latency" in out and csv_file.read_text().startswith("mode,target,category")

    _shift_words(turn / "1" / "output.json", 0.5)  # answers 0.5 s later
    code, out, err = voxbench(
        monkeypatch, capsys, "fdb", "score", str(turn), "--baseline", str(saved)
    )
    assert code == 1, out + err
    assert "REGRESSED" in out and "latency" in out

    _shift_words(turn / "1" / "output.json", -0.8)  # now faster than the baseline
    code, out, err = voxbench(
        monkeypatch, capsys, "fdb", "score", str(turn), "--baseline", str(csv_file)
    )
    assert code == 0, out + err
    assert "REGRESSED" not in out


def test_run_then_score(monkeypatch, capsys, mini_corpus: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "outputs"
    args = ("fdb", "run", str(mini_corpus / "v1_0"), "--target", "tests.fullduplex.tone_session:ToneSession",
            "--virtual", "--out", str(out_dir), "--option", "delay=0.05", "--concurrency", "2")  # fmt: skip
    code, out, err = voxbench(monkeypatch, capsys, *args)
    assert code == 0, out + err
    assert "completed 5" in out
    assert "fdb · " in err and "fdb · " not in out  # the progress bar goes to stderr
    assert len(list(out_dir.rglob("output.wav"))) == 5
    code, out, err = voxbench(monkeypatch, capsys, *args)
    assert code == 0 and "already done 5" in out


def test_bad_mode_and_bad_option_are_messages(monkeypatch, capsys, mini_corpus: Path) -> None:
    code, out, err = voxbench(monkeypatch, capsys, "fdb", "score", str(mini_corpus), "--mode", "v2")
    assert code == 2 and "unknown mode" in err
    code, out, err = voxbench(
        monkeypatch,
        capsys,
        "fdb",
        "run",
        str(mini_corpus),
        "--target",
        "local/oracle",
        "--option",
        "oops",
    )
    assert code == 2 and "key=value" in err


def test_score_tables_piped_into_a_narrow_file_keep_each_row_whole(
    monkeypatch, capsys, mini_outputs: Path
) -> None:
    """Issue 27 item 8: piped (not a terminal, 40 columns) a long target name and every
    metric cell stay on their row's one line, as ``grep`` needs them."""
    target = "openai/gpt-4o-mini-realtime-preview-2024-12-17 (a long label)"
    code, out, err = invoke(
        monkeypatch, capsys, "fdb", "score", str(mini_outputs), "--target", target, columns=40
    )
    assert code == 0, err
    rows = [line for line in out.splitlines() if target in line]
    assert rows, out
    assert all("v1" in line or "v1.5" in line or "│" in line for line in rows)
    assert not any(line.rstrip().endswith("…") for line in out.splitlines())
