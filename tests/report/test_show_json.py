"""``voxbench show RUN --json``: the run, its scorecard and its turns as JSON, alone on stdout
(issue 27)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.cli_invoke import invoke
from tests.report.runs import judged_run
from voxbench.core.rundir import RunDirectory


def test_show_json_prints_the_scorecard_and_turns(monkeypatch, capsys, tmp_path: Path) -> None:
    run = asyncio.run(judged_run(tmp_path, "local/baseline"))
    code, out, err = invoke(monkeypatch, capsys, "show", str(run), "--json")
    assert code == 0, err
    data = json.loads(out)  # stdout is JSON and nothing else
    saved = RunDirectory(run)
    assert data["run"]["run_id"] == saved.info().run_id
    assert data["scorecard"] == json.loads(saved.scorecard().model_dump_json())
    turns = [t.turn for t in saved.turns()]
    assert [t["turn"] for t in data["turns"]] == turns
    verdicts = [v for t in data["turns"] for v in t["verdicts"]]
    assert len(verdicts) == len(saved.judgments() or [])
    assert any(v["passed"] is False for v in verdicts)  # the baseline fails some
    code, out, err = invoke(monkeypatch, capsys, "show", str(run), "--json", "--failures")
    assert code == 0, err
    failed = json.loads(out)["turns"]
    assert 0 < len(failed) < len(turns)
