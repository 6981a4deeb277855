"""``voxbench store index`` and ``voxbench store ls``."""

from __future__ import annotations

import json

import pytest

from tests.cli_invoke import invoke
from tests.store.fixture_runs import Runs
from voxbench.core.rundir import RunDirectory


def test_index_then_ls(
    runs: Runs, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("VOXBENCH_STORE")
    (runs.paths["baseline"] / RunDirectory.RUN).write_text('{"run_id": ')  # torn by a kill
    code, out, err = invoke(monkeypatch, capsys, "store", "index", str(runs.root))
    assert code == 0
    assert "2 indexed, 0 unchanged, 1 skipped" in out
    assert "skipped" in err and "run.json" in err
    code, out, _ = invoke(monkeypatch, capsys, "store", "index", str(runs.root))
    assert "0 indexed, 2 unchanged, 1 skipped" in out

    code, out, _ = invoke(monkeypatch, capsys, "store", "ls", str(runs.root), "--json")
    listed = json.loads(out)
    assert code == 0 and {r["run_id"] for r in listed} == {
        runs.run_id("oracle"),
        runs.run_id("oracle_audio"),
    }
    assert all(r["results"][0]["dimension"] == "strict_pass" for r in listed)
    code, out, _ = invoke(
        monkeypatch, capsys, "store", "ls", str(runs.root), "--target", "local/baseline", "--json"
    )
    assert json.loads(out) == []
    code, out, _ = invoke(
        monkeypatch, capsys, "store", "ls", str(runs.root), "-b", "smoke", columns=250
    )
    assert runs.run_id("oracle_audio") in out and "strict_pass 100.0%" in out


def test_index_of_a_missing_directory_is_a_user_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = invoke(monkeypatch, capsys, "store", "index", "nowhere")
    assert code == 2 and "nowhere: DIR: no such directory" in err


def test_view_of_a_missing_directory_is_a_user_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = invoke(monkeypatch, capsys, "view", "nowhere")
    assert code == 2 and "nowhere: DIR: no such directory" in err


def test_an_unknown_store_scheme_is_a_user_error_that_creates_nothing(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # mysql://… used to be taken as a relative SQLite path: exit 0 and a file ./mysql:/x@y/z.
    code, _, err = invoke(monkeypatch, capsys, "store", "ls", "--store", "mysql://x@y/z")
    assert code == 2 and "unknown store scheme 'mysql'" in err and "postgresql://" in err
    assert not (tmp_path / "mysql:").exists()
    code, _, _ = invoke(
        monkeypatch, capsys, "store", "ls", "--store", f"sqlite:///{tmp_path / 'ok.db'}"
    )
    assert code == 0 and (tmp_path / "ok.db").is_file()
