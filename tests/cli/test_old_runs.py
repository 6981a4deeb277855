"""Runs recorded before the typed timeline (events schema 1, latencies in the transcript)
still open with ``show``, ``judge``, ``analyze`` and ``run --resume``.

The fixture is a text run of the oracle on ``smoke`` recorded by voxbench before events were
typed: ``run.json``, ``events.jsonl`` (``data`` nested), ``transcript.jsonl`` (with ``ttfb`` and
``ttft`` in its timings) and ``checkpoints.jsonl``. Its ``benchmark_path`` points where no
benchmark is (voxbench was installed elsewhere): the built-in is found by name.
Its ``benchmark_hash`` is kept equal to today's ``smoke`` (the fixture tests the format, not a
benchmark change, which ``load_run_benchmark`` refuses with a message naming both hashes).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.test_cli import voxbench
from voxbench.core.rundir import RunDirectory

FIXTURE = Path(__file__).parent.parent / "fixtures" / "runs" / "schema1_smoke_oracle"


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE, tmp_path / "run"))


def test_show_and_judge_an_old_run(monkeypatch, capsys, old_run: Path) -> None:
    code, out = voxbench(monkeypatch, capsys, "show", str(old_run))
    assert code == 0, out
    assert "10/10 100%" in out
    code, out = voxbench(monkeypatch, capsys, "judge", str(old_run))
    assert code == 0, out
    card = json.loads(RunDirectory(old_run).scorecard_file.read_text())
    assert card["strict_pass"]["rate"] == 1.0
    assert "ttfb" in card["latency"]  # measured from the old timeline


def test_analyze_an_old_run(monkeypatch, capsys, old_run: Path) -> None:
    code, out = voxbench(monkeypatch, capsys, "analyze", str(old_run), "--json", "--write")
    assert code == 0, out
    analysis = json.loads(out)
    assert analysis["mode"] == "text" and len(analysis["turns"]) == 10
    assert all(t["ttfb"] is not None and t["ttfb"] >= 0 for t in analysis["turns"])
    assert RunDirectory(old_run).analysis_file.is_file()


def test_resuming_an_old_run_migrates_its_timeline(monkeypatch, capsys, old_run: Path) -> None:
    before = len(RunDirectory(old_run).events())
    code, out = voxbench(monkeypatch, capsys, "run", "--resume", str(old_run))
    assert code == 0, out
    rows = [json.loads(line) for line in RunDirectory(old_run).events_file.read_text().splitlines()]
    assert rows[0]["type"] == "timeline_opened" and not any("data" in r for r in rows)
    events = RunDirectory(old_run).events()
    assert len(events) == before + 3  # header, run_resumed, run_finished
    assert [r.turn for r in RunDirectory(old_run).turns()] == [str(i) for i in range(10)]


def test_piped_show_and_compare_keep_every_text_on_its_line(
    monkeypatch, capsys, old_run: Path
) -> None:
    # Into a pipe or a file the tables print at their natural width: a sentence, a tool call
    # or a dimension name is never folded across lines (grep finds it whole).
    code, out = voxbench(monkeypatch, capsys, "show", str(old_run))
    assert code == 0, out
    lines = out.splitlines()
    assert any(
        "Hi! What time do the doors open tomorrow, and where do I check in?" in line
        for line in lines
    )
    assert any("register_for_session(" in line for line in lines)
    code, out = voxbench(monkeypatch, capsys, "compare", str(old_run), str(old_run))
    assert code == 0, out
    assert any("strict per-turn pass" in line for line in out.splitlines())
