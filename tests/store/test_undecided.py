"""Issue 32 item 4: a run whose judge decided 1 turn of 10 is not ranked at 100%.

Every stored rate carries its undecided count (the decided share beside it); a leaderboard
cell above ``UNDECIDED_LIMIT`` undecided is shown but not ranked, and ``best`` never prefers
it over a run whose rate rests on its decisions.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli.test_cli import voxbench
from tests.store.fixture_runs import Runs
from voxbench.core.rundir import RunDirectory
from voxbench.store import UNDECIDED_LIMIT, RunFilters, open_store


def _mostly_undecided(path: Path) -> None:
    """The run's scorecard as a judge that exited 4 leaves it: 9 of 10 turns undecided."""
    card = json.loads((path / RunDirectory.SCORECARD).read_text())
    card["strict_pass"].update(
        {"passed": 1, "scored": 1, "rate": 1.0, "ci95": [0.2, 1.0], "failed_turns": [],
         "undecided": 9, "undecided_turns": [str(i) for i in range(1, 10)]}
    )  # fmt: skip
    (path / RunDirectory.SCORECARD).write_text(json.dumps(card))


def _older_copy(path: Path, rate: float) -> Path:
    older = path.with_name(path.name.replace("Z_", "Z_old_"))
    shutil.copytree(path, older)
    info = json.loads((older / RunDirectory.RUN).read_text())
    info["run_id"] = older.name
    info["started_at"] = "2000-01-01T00:00:00+00:00"
    (older / RunDirectory.RUN).write_text(json.dumps(info))
    card = json.loads((older / RunDirectory.SCORECARD).read_text())
    card["run_id"] = older.name
    card["strict_pass"]["rate"] = rate
    (older / RunDirectory.SCORECARD).write_text(json.dumps(card))
    return older


def test_a_mostly_undecided_run_is_shown_with_its_decided_share_but_not_ranked(
    runs: Runs, store_url: str
) -> None:
    path = runs.paths["baseline"]
    older = _older_copy(path, 0.5)  # fully decided, a lower rate
    _mostly_undecided(path)
    with open_store(store_url, runs.root) as store:
        store.index_tree(runs.root)
        (latest,) = store.leaderboard(RunFilters(target="local/baseline"))
        (best,) = store.leaderboard(RunFilters(target="local/baseline"), pick="best")
        (row,) = [r for r in store.runs() if r.run_id == path.name]
        (oracle,) = store.leaderboard(RunFilters(target="local/oracle"))
    assert latest.run_id == path.name and latest.value == 100.0
    assert latest.n == 1 and latest.undecided == 9 and latest.decided_share == 0.1
    assert latest.ranked is False and 1 - latest.decided_share > UNDECIDED_LIMIT
    assert best.run_id == older.name and best.ranked is True  # not the 100% nobody decided
    assert row.headline().undecided == 9 and row.headline().decided_share == 0.1
    assert oracle.ranked is True and oracle.undecided == 0 and oracle.decided_share == 1.0


def test_store_ls_shows_the_decided_share(monkeypatch, capsys, runs: Runs, tmp_path) -> None:
    _mostly_undecided(runs.paths["baseline"])
    db = str(tmp_path / "store.db")
    code, out = voxbench(monkeypatch, capsys, "store", "index", str(runs.root), "--store", db)
    assert code == 0, out
    code, out = voxbench(monkeypatch, capsys, "store", "ls", str(runs.root), "--store", db)
    assert code == 0, out
    assert "decided 1/10" in " ".join(out.split()) and "not ranked" in out


def test_store_off_given_to_a_store_command_creates_no_file_named_off(
    monkeypatch, capsys, runs: Runs, tmp_path
) -> None:
    """Issue 32 item 11: ``--store off`` is an error there, not an SQLite file ``./off``."""
    monkeypatch.chdir(tmp_path)
    for args in (("store", "index", str(runs.root)), ("store", "ls", str(runs.root))):
        code, out = voxbench(monkeypatch, capsys, *args, "--store", "off")
        assert code == 2 and "--store" in out and "off" in out, out
    assert not (tmp_path / "off").exists()
