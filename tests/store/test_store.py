"""The results store on real runs: what it indexes, idempotence, the leaderboard, broken
run directories, automatic indexing, migrations (SQLite always, PostgreSQL when given)."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from tests.store.fixture_runs import Runs
from voxbench.core.errors import ConfigError, StoreError
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import evaluate_run
from voxbench.store import SCHEMA_VERSION, RunFilters, open_store
from voxbench.store.database import MIGRATIONS


def test_index_tree_stores_what_each_run_is_and_scored(runs: Runs, store_url: str) -> None:
    with open_store(store_url, runs.root) as store:
        report = store.index_tree(runs.root)
        assert sorted(report.indexed) == sorted(runs.run_id(n) for n in runs.paths)
        assert report.skipped == []
        row = store.get(runs.run_id("baseline"))
    assert row is not None
    info = RunDirectory(runs.paths["baseline"]).info()
    card = RunDirectory(runs.paths["baseline"]).scorecard()
    assert card is not None
    assert (row.kind, row.benchmark, row.target, row.mode) == (
        "conversation",
        "smoke",
        "local/baseline",
        "text",
    )
    assert row.benchmark_hash == info.benchmark_hash and row.status == "success"
    assert (row.started_at, row.ended_at) == (info.started_at, info.ended_at)
    assert row.versions == info.versions and row.versions
    assert row.judges == card.judges and row.path == str(runs.paths["baseline"].resolve())
    head = row.headline()
    assert head is not None and head.dimension == "strict_pass" and head.unit == "%"
    assert head.value == pytest.approx(100 * card.strict_pass.rate)
    assert head.note == card.strict_pass_note  # a strict pass without an LLM judge says so
    assert card.strict_pass.ci95 is not None
    assert (head.ci_low, head.ci_high) == pytest.approx([100 * x for x in card.strict_pass.ci95])
    assert {r.dimension for r in row.results} == {"strict_pass"} | {
        d.dimension for d in card.dimensions
    }
    assert {m.metric for m in row.latency} == set(card.latency)
    assert all(m.p50 is not None for m in row.latency if m.count)


def test_reindexing_is_idempotent(runs: Runs, store_url: str) -> None:
    with open_store(store_url, runs.root) as store:
        store.index_tree(runs.root)
        again = store.index_tree(runs.root)
        assert again.indexed == [] and len(again.unchanged) == 3
        forced = store.index_tree(runs.root, force=True)
        assert len(forced.indexed) == 3
        rows = store.runs()
        assert len(rows) == 3
        assert len({r.run_id for r in rows}) == 3
        assert all(len(r.results) == len({x.dimension for x in r.results}) for r in rows)


def test_leaderboard_is_targets_by_benchmarks_with_filters(runs: Runs, store_url: str) -> None:
    with open_store(store_url, runs.root) as store:
        store.index_tree(runs.root)
        board = store.leaderboard()
        cells = {(c.target, c.benchmark): c for c in board}
        assert set(cells) == {("local/baseline", "smoke"), ("local/oracle", "smoke")}
        # The oracle has a text and an audio run on smoke: the cell shows the latest.
        oracle = cells[("local/oracle", "smoke")]
        baseline = cells[("local/baseline", "smoke")]
        infos = [RunDirectory(runs.paths[n]).info() for n in ("oracle", "oracle_audio")]
        latest = max(infos, key=lambda i: (i.started_at, i.run_id))
        assert (oracle.run_id, oracle.mode) == (latest.run_id, latest.mode)
        assert oracle.runs == 2 and baseline.runs == 1
        assert oracle.value == 100.0 and baseline.value is not None and baseline.value < 100
        assert baseline.ci_low is not None and baseline.ci_low < baseline.value < baseline.ci_high
        assert baseline.judges and baseline.run_id == runs.run_id("baseline")
        audio = store.leaderboard(RunFilters(mode="audio"))
        assert [(c.target, c.run_id) for c in audio] == [
            ("local/oracle", runs.run_id("oracle_audio"))
        ]
        assert store.leaderboard(RunFilters(benchmark="conference")) == []
        assert store.leaderboard(RunFilters(judge="no-such-judge")) == []
        assert len(store.leaderboard(RunFilters(judge="deterministic"))) == 2
        assert store.leaderboard(RunFilters(since="2999-01-01")) == []
        day = (oracle.started_at or "")[:10]
        assert len(store.leaderboard(RunFilters(since=day, until=day))) == 2
        assert store.leaderboard(RunFilters(until="2000-01-01")) == []


def test_best_picks_the_better_run_latest_the_newer(runs: Runs, store_url: str) -> None:
    # The baseline's old run scored higher than its new one.
    newer = runs.paths["baseline"]
    card = json.loads((newer / RunDirectory.SCORECARD).read_text())
    older = newer.with_name(newer.name.replace("Z_", "Z_old_"))
    import shutil

    shutil.copytree(newer, older)
    info = json.loads((older / RunDirectory.RUN).read_text())
    info["run_id"] = older.name
    info["started_at"] = "2000-01-01T00:00:00+00:00"
    (older / RunDirectory.RUN).write_text(json.dumps(info))
    card["run_id"] = older.name
    card["strict_pass"]["rate"] = 0.99
    (older / RunDirectory.SCORECARD).write_text(json.dumps(card))
    with open_store(store_url, runs.root) as store:
        store.index_tree(runs.root)
        latest = store.leaderboard(RunFilters(target="local/baseline"))
        best = store.leaderboard(RunFilters(target="local/baseline"), pick="best")
    assert [c.run_id for c in latest] == [newer.name]
    assert [(c.run_id, c.value) for c in best] == [(older.name, 99.0)]
    assert latest[0].runs == best[0].runs == 2


@pytest.mark.parametrize(
    ("file", "damage", "reason"),
    [
        (RunDirectory.RUN, lambda t: t[: len(t) // 2], "run.json"),
        (RunDirectory.SCORECARD, lambda t: t[: len(t) // 2], "scorecard.json"),
        (RunDirectory.TRANSCRIPT, lambda t: "{not json\n" + t, "transcript.jsonl:1"),
    ],
)
def test_a_broken_run_is_reported_and_skipped(
    runs: Runs, store_url: str, file: str, damage, reason: str
) -> None:
    broken = runs.paths["baseline"] / file
    broken.write_text(damage(broken.read_text()))
    with open_store(store_url, runs.root) as store:
        report = store.index_tree(runs.root)
        assert [s.path for s in report.skipped] == [str(runs.paths["baseline"].resolve())]
        assert reason in report.skipped[0].reason
        assert store.get(runs.run_id("baseline")) is None
        assert {c.target for c in store.leaderboard()} == {"local/oracle"}


def test_a_run_in_progress_is_listed_but_not_ranked(runs: Runs, store_url: str) -> None:
    path = runs.paths["baseline"]
    info = json.loads((path / RunDirectory.RUN).read_text())
    info.update(status="started", ended_at=None)
    (path / RunDirectory.RUN).write_text(json.dumps(info))
    (path / RunDirectory.SCORECARD).unlink()
    with open_store(store_url, runs.root) as store:
        store.index_tree(runs.root)
        row = store.get(runs.run_id("baseline"))
        assert row is not None and row.status == "started" and row.results == []
        assert "local/baseline" not in {c.target for c in store.leaderboard()}
        assert [r.run_id for r in store.runs(RunFilters(status="started"))] == [row.run_id]


def test_filters_of_runs(runs: Runs, store_url: str) -> None:
    with open_store(store_url, runs.root) as store:
        store.index_tree(runs.root)
        assert len(store.runs(RunFilters(target="local/oracle"))) == 2
        assert len(store.runs(RunFilters(benchmark="smoke", mode="text"))) == 2
        assert store.runs(RunFilters(benchmark="conference")) == []
        assert len(store.runs(RunFilters(limit=1))) == 1


def test_a_judged_run_is_indexed_automatically(runs: Runs, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOXBENCH_STORE")
    evaluate_run(runs.paths["baseline"])  # re-judging finishes the run again
    db = runs.root / "voxbench.db"
    assert db.is_file()
    with open_store(None, runs.root) as store:
        assert [r.run_id for r in store.runs()] == [runs.run_id("baseline")]


def test_a_store_that_fails_never_fails_the_run(
    runs: Runs, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("VOXBENCH_STORE", str(tmp_path))  # a directory, not a database
    with caplog.at_level(logging.WARNING):
        evaluation = evaluate_run(runs.paths["oracle"])
    assert evaluation.card.strict_pass.rate == 1.0
    assert "could not index" in caplog.text and "is a directory" in caplog.text
    monkeypatch.setenv("VOXBENCH_STORE", "off")
    evaluate_run(runs.paths["oracle"])
    assert not (runs.root / "voxbench.db").exists()


def test_sqlite_store_is_wal_and_versioned(runs: Runs, tmp_path: Path) -> None:
    db = tmp_path / "v.db"
    open_store(str(db), runs.root).close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="upgrade voxbench"):
        open_store(str(db), runs.root)


def test_an_older_store_is_migrated_keeping_its_runs(runs: Runs, tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:  # a store written by the first schema
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (1)")
        conn.execute(
            "INSERT INTO results (run_id, benchmark, target, dimension, value, unit, headline) "
            "VALUES ('r1', 'smoke', 'x/y', 'strict_pass', 50.0, '%', 1)"
        )
    with open_store(str(db), runs.root) as store:
        assert store.db.version() == SCHEMA_VERSION
        store.index_tree(runs.root)
        row = store.get(runs.run_id("baseline"))
        assert row is not None and row.headline() is not None
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM results WHERE run_id = 'r1'").fetchone() == (50.0,)


def test_a_database_failure_names_the_store(runs: Runs, tmp_path: Path) -> None:
    db = tmp_path / "broken.db"
    with open_store(str(db), runs.root) as store:
        store.db.query("DROP TABLE latency")
        with pytest.raises(StoreError, match=r"results store .*broken\.db: .*latency"):
            store.index_tree(runs.root)


def test_a_store_url_password_is_never_shown(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        open_store("postgresql://alice:s3cret-pw@127.0.0.1:1/none", tmp_path)
    assert "s3cret-pw" not in str(caught.value)


def test_the_readers_spell_no_result_schema_of_their_own() -> None:
    # Every run kind is read through its contract in core (RunInfo/Scorecard, TaskRunInfo/
    # TaskScores, FdbSummary): a field added there reaches the store without a second schema.
    import ast

    import voxbench.store.readers as readers

    tree = ast.parse(Path(readers.__file__).read_text(encoding="utf-8"))
    classes = [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    assert classes == []


def test_the_store_reconnects_after_the_server_drops_its_connection() -> None:
    # A PostgreSQL restart (here: the server ending our session) left every later request a
    # bare 500 until the viewer was restarted; the next read now opens a new connection.
    import os

    dsn = os.environ.get("VOXBENCH_TEST_POSTGRES")
    if not dsn:
        pytest.skip("no PostgreSQL: set VOXBENCH_TEST_POSTGRES to a DSN (.ci/run starts one)")
    import psycopg

    from voxbench.store.database import Database

    db = Database(dsn)
    try:
        assert db.query("SELECT 1") == [(1,)]
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (db._conn.info.backend_pid,))
        assert db.query("SELECT 2") == [(2,)]  # read again on a fresh connection
        assert db.version() >= 1  # and every later transaction works
    finally:
        db.close()
