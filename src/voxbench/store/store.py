"""The results store: index run directories, list runs, rank targets on benchmarks.

``open_store(url, runs_dir)`` opens SQLite (default ``<runs_dir>/voxbench.db``) or PostgreSQL
(``postgresql://…``); both speak the same code. Indexing is idempotent: a run is keyed by
its run id and replaced whole when its files change; an unchanged run is left alone.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from voxbench.core.errors import VoxbenchError
from voxbench.core.rundir import REPEAT_GROUP_FILE
from voxbench.store.database import STORE_ENV, STORE_OFF, Database, describe_url, resolve_store_url
from voxbench.store.models import (
    RESULT_STATUSES,
    UNDECIDED_LIMIT,
    IndexReport,
    Latency,
    LeaderRow,
    Result,
    RunFilters,
    RunRow,
    Skipped,
    decided_share,
)
from voxbench.store.readers import is_run_dir, read_runs, signature_of

log = logging.getLogger(__name__)

Pick = Literal["latest", "best"]

_RUN_COLUMNS = (
    "run_id, kind, benchmark, benchmark_hash, target, mode, status, started_at, ended_at, "
    "path, versions, signature"
)
_RESULT_COLUMNS = (
    "benchmark, target, dimension, value, ci_low, ci_high, n, unit, higher_is_better, headline, "
    "note, undecided"
)
_LATENCY_COLUMNS = "metric, count, mean, p50, p90, p95, p99"
_CHILD_TABLES = ("run_judges", "results", "latency")


class Store:
    """An open results store (``open_store``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def __repr__(self) -> str:
        return f"Store({self.where!r})"

    @property
    def where(self) -> str:
        """The store's location, printable (no password)."""
        return describe_url(self.db.url)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- indexing ------------------------------------------------------------------------

    def index_run(self, path: str | Path, *, force: bool = False) -> IndexReport:
        """Index the run(s) in directory ``path``; a directory that cannot be read is
        reported in ``skipped`` and leaves the store as it was."""
        path = Path(path).resolve()
        known = None if force else self._signatures_at(path)
        return self._index(path, known)

    def index_tree(self, root: str | Path, *, force: bool = False) -> IndexReport:
        """Index every run directory under ``root`` (hidden directories are not searched;
        nothing inside a run directory is taken for another run)."""
        report = IndexReport()
        known = {} if force else self._all_signatures()
        for path in find_run_dirs(Path(root)):
            path = path.resolve()
            report.merge(self._index(path, None if force else known.get(str(path), {})))
        return report

    def _index(self, path: Path, known: dict[str, str] | None) -> IndexReport:
        """Index ``path`` unless ``known`` (run id → signature stored for it) is current."""
        report = IndexReport()
        if known and set(known.values()) == {signature_of(path)}:
            report.unchanged += sorted(known)
            return report
        try:
            rows = read_runs(path)
        except (VoxbenchError, OSError) as exc:
            report.skipped.append(Skipped(path=str(path), reason=str(exc)))
            return report
        with self.db.transaction() as cur:
            for row in rows:
                _write_run(cur, row)
        report.indexed += [r.run_id for r in rows]
        return report

    def _signatures_at(self, path: Path) -> dict[str, str]:
        """Run id → stored signature of the runs indexed from ``path``."""
        rows = self.db.query("SELECT run_id, signature FROM runs WHERE path = ?", (str(path),))
        return {run_id: sig for run_id, sig in rows}

    def _all_signatures(self) -> dict[str, dict[str, str]]:
        """Path → run id → stored signature, for every run (one query for a whole tree)."""
        out: dict[str, dict[str, str]] = {}
        for run_id, where, sig in self.db.query("SELECT run_id, path, signature FROM runs"):
            out.setdefault(where, {})[run_id] = sig
        return out

    def forget(self, run_id: str) -> None:
        """Remove one run from the store (its directory is untouched)."""
        with self.db.transaction() as cur:
            _delete_run(cur, run_id)

    # -- reading -------------------------------------------------------------------------

    def runs(self, filters: RunFilters | None = None) -> list[RunRow]:
        """Runs matching ``filters``, newest first, with their scores and latencies."""
        filters = filters or RunFilters()
        where, params = _where(filters)
        sql = f"SELECT {_RUN_COLUMNS} FROM runs r {where} ORDER BY started_at DESC, run_id"
        if filters.limit is not None:
            sql += f" LIMIT {int(filters.limit)}"
        return self._hydrate(self.db.query(sql, params))

    def choices(self) -> dict[str, list[str]]:
        """The benchmarks, targets, modes and judges the store holds (for filter menus)."""
        return {
            "benchmark": [
                b
                for (b,) in self.db.query(
                    "SELECT DISTINCT benchmark FROM results ORDER BY benchmark"
                )
            ],
            "target": [
                t for (t,) in self.db.query("SELECT DISTINCT target FROM results ORDER BY target")
            ],
            "mode": [
                m
                for (m,) in self.db.query(
                    "SELECT DISTINCT mode FROM runs WHERE mode IS NOT NULL ORDER BY mode"
                )
            ],
            "judge": [
                j for (j,) in self.db.query("SELECT DISTINCT judge FROM run_judges ORDER BY judge")
            ],
        }

    def count(self) -> int:
        """How many runs the store holds."""
        return int(self.db.query("SELECT COUNT(*) FROM runs")[0][0])

    def get(self, run_id: str) -> RunRow | None:
        """One run by its id, or None."""
        rows = self.db.query(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,))
        found = self._hydrate(rows)
        return found[0] if found else None

    def leaderboard(
        self,
        filters: RunFilters | None = None,
        pick: Pick = "latest",
        *,
        undecided_limit: float = UNDECIDED_LIMIT,
    ) -> list[LeaderRow]:
        """Targets × benchmarks: each cell the headline score of the latest (or best) finished
        run of that target on that benchmark, with its interval and how many runs it has.

        A cell whose judge left more than ``undecided_limit`` of its units undecided is not
        ranked (``ranked`` False), and ``best`` never picks such a run over a ranked one."""
        filters = (filters or RunFilters()).model_copy(update={"limit": None})
        where, params = _where(filters, results_alias="s")
        statuses = ", ".join("?" for _ in RESULT_STATUSES)
        sql = (
            f"SELECT s.benchmark, s.target, s.dimension, s.value, s.ci_low, s.ci_high, s.n, "
            f"s.unit, s.higher_is_better, r.run_id, r.kind, r.mode, r.started_at, s.note, r.path, "
            f"s.undecided "
            f"FROM results s JOIN runs r ON r.run_id = s.run_id "
            f"{where} {'AND' if where else 'WHERE'} s.headline = 1 "
            f"AND r.status IN ({statuses})"
        )
        rows = self.db.query(sql, [*params, *RESULT_STATUSES])
        cells: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        for row in rows:
            cells.setdefault((row[0], row[1]), []).append(row)
        chosen = {key: _pick(found, pick, undecided_limit) for key, found in cells.items()}
        judges = self._judges({row[9] for row in chosen.values()})
        out = [
            LeaderRow(
                benchmark=row[0],
                target=row[1],
                dimension=row[2],
                value=row[3],
                ci_low=row[4],
                ci_high=row[5],
                n=row[6],
                unit=row[7],
                higher_is_better=_bool(row[8]),
                run_id=row[9],
                kind=row[10],
                mode=row[11],
                started_at=row[12],
                note=row[13],
                path=row[14],
                undecided=row[15],
                ranked=_ranked(row, undecided_limit),
                judges=judges.get(row[9], []),
                runs=len(cells[key]),
            )
            for key, row in chosen.items()
        ]
        return sorted(out, key=lambda c: (c.benchmark, c.target))

    def _judges(self, run_ids: set[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        ids = sorted(run_ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for run_id, judge in self.db.query(
                f"SELECT run_id, judge FROM run_judges WHERE run_id IN ({marks}) ORDER BY judge",
                chunk,
            ):
                out.setdefault(run_id, []).append(judge)
        return out

    def _hydrate(self, rows: list[tuple[Any, ...]]) -> list[RunRow]:
        if not rows:
            return []
        ids = [r[0] for r in rows]
        results: dict[str, list[Result]] = {}
        latency: dict[str, list[Latency]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for row in self.db.query(
                f"SELECT run_id, {_RESULT_COLUMNS} FROM results WHERE run_id IN ({marks}) "
                "ORDER BY run_id, headline DESC, benchmark, target, dimension",
                chunk,
            ):
                results.setdefault(row[0], []).append(
                    Result(
                        **dict(zip(_RESULT_COLUMNS.split(", "), row[1:], strict=True))
                        | {"higher_is_better": _bool(row[9]), "headline": bool(row[10])}
                    )
                )
            for row in self.db.query(
                f"SELECT run_id, {_LATENCY_COLUMNS} FROM latency WHERE run_id IN ({marks}) "
                "ORDER BY run_id, metric",
                chunk,
            ):
                latency.setdefault(row[0], []).append(
                    Latency(**dict(zip(_LATENCY_COLUMNS.split(", "), row[1:], strict=True)))
                )
        judges = self._judges(set(ids))
        out = []
        for row in rows:
            fields = dict(zip(_RUN_COLUMNS.split(", "), row, strict=True))
            fields["versions"] = json.loads(fields["versions"])
            run_id = fields["run_id"]
            out.append(
                RunRow(
                    **fields,
                    judges=judges.get(run_id, []),
                    results=results.get(run_id, []),
                    latency=latency.get(run_id, []),
                )
            )
        return out


def open_store(url: str | None, runs_dir: str | Path) -> Store:
    """The store at ``url`` (``postgresql://…`` or an SQLite file), else ``VOXBENCH_STORE``,
    else ``<runs_dir>/voxbench.db``; created and migrated as needed."""
    return Store(Database(resolve_store_url(url, Path(runs_dir))))


def find_run_dirs(root: Path) -> list[Path]:
    """Run directories under ``root`` (``root`` itself when it is one)."""
    found = []
    for here, dirs, _files in os.walk(root):
        path = Path(here)
        if is_run_dir(path):
            found.append(path)
            dirs[:] = []  # an FDB scoring's sample folders are not runs
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    return found


def runs_dir_of(run_path: Path) -> Path:
    """The runs directory of a run voxbench laid out: ``runs/<benchmark>/<run>`` and
    ``runs/tasks/<run>`` are two levels below it; a run of a repeat group
    (``runs/<benchmark>/<group>/<run>``) three."""
    parent = run_path.resolve().parent
    if (parent / REPEAT_GROUP_FILE).is_file():
        parent = parent.parent
    return parent.parent


def index_finished_run(
    run_path: str | Path, url: str | None = None, *, runs_dir: str | Path | None = None
) -> None:
    """Index a run that just finished or was judged, in ``url``, else ``VOXBENCH_STORE``,
    else the store of ``runs_dir`` (default: the run's own runs directory, two levels up);
    a failure is logged as a warning and never fails the run.

    ``VOXBENCH_STORE=off`` turns automatic indexing off."""
    path = Path(run_path)
    if (url or os.environ.get(STORE_ENV, "")).strip().lower() == STORE_OFF:
        return
    try:
        with open_store(url, runs_dir if runs_dir is not None else runs_dir_of(path)) as store:
            report = store.index_run(path, force=True)
    except Exception as exc:  # the run is done: indexing it must never undo that
        log.warning("could not index %s in the results store: %s", path, exc)
        return
    for skipped in report.skipped:
        log.warning("not indexed in the results store: %s", skipped.reason)


# -- SQL helpers -------------------------------------------------------------------------------


def _write_run(cur: Any, row: RunRow) -> None:
    _delete_run(cur, row.run_id)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    cur.execute(
        f"INSERT INTO runs ({_RUN_COLUMNS}, indexed_at) VALUES ({', '.join('?' * 13)})",
        (
            row.run_id,
            row.kind,
            row.benchmark,
            row.benchmark_hash,
            row.target,
            row.mode,
            row.status,
            row.started_at,
            row.ended_at,
            row.path,
            json.dumps(row.versions, sort_keys=True),
            row.signature,
            now,
        ),
    )
    cur.executemany(
        "INSERT INTO run_judges (run_id, judge) VALUES (?, ?)",
        [(row.run_id, j) for j in dict.fromkeys(row.judges)],
    )
    cur.executemany(
        f"INSERT INTO results (run_id, {_RESULT_COLUMNS}) VALUES ({', '.join('?' * 13)})",
        [
            (
                row.run_id,
                r.benchmark,
                r.target,
                r.dimension,
                r.value,
                r.ci_low,
                r.ci_high,
                r.n,
                r.unit,
                None if r.higher_is_better is None else int(r.higher_is_better),
                int(r.headline),
                r.note,
                r.undecided,
            )
            for r in _unique_results(row.results)
        ],
    )
    cur.executemany(
        f"INSERT INTO latency (run_id, {_LATENCY_COLUMNS}) VALUES ({', '.join('?' * 8)})",
        [(row.run_id, m.metric, m.count, m.mean, m.p50, m.p90, m.p95, m.p99) for m in row.latency],
    )


def _unique_results(results: list[Result]) -> list[Result]:
    # A scorecard lists strict_pass beside its dimensions; a dimension named alike is one score.
    seen: dict[tuple[str, str, str], Result] = {}
    for r in results:
        seen.setdefault((r.benchmark, r.target, r.dimension), r)
    return list(seen.values())


def _delete_run(cur: Any, run_id: str) -> None:
    for table in _CHILD_TABLES:
        cur.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
    cur.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))


def _where(filters: RunFilters, results_alias: str | None = None) -> tuple[str, list[Any]]:
    """A WHERE clause over ``runs r`` (and ``results`` as ``results_alias`` when joined)."""
    clauses: list[str] = []
    params: list[Any] = []
    for name in ("benchmark", "target"):
        value = getattr(filters, name)
        if value is None:
            continue
        if results_alias is not None:
            clauses.append(f"{results_alias}.{name} = ?")
            params.append(value)
        else:  # a task run holds several benchmarks and targets: match its results too
            clauses.append(
                f"(r.{name} = ? OR EXISTS (SELECT 1 FROM results x "
                f"WHERE x.run_id = r.run_id AND x.{name} = ?))"
            )
            params += [value, value]
    for name in ("kind", "mode", "status"):
        value = getattr(filters, name)
        if value is not None:
            clauses.append(f"r.{name} = ?")
            params.append(value)
    if filters.judge is not None:
        clauses.append(
            "EXISTS (SELECT 1 FROM run_judges j WHERE j.run_id = r.run_id AND j.judge LIKE ?)"
        )
        params.append(f"%{filters.judge}%")
    if filters.since is not None:
        clauses.append("r.started_at >= ?")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append("r.started_at < ?")
        params.append(filters.until + "\uffff")  # the whole day (or moment) given counts
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), params


def _ranked(row: tuple[Any, ...], undecided_limit: float) -> bool:
    share = decided_share(row[6], row[15])
    return share is None or 1.0 - share <= undecided_limit


def _pick(rows: list[tuple[Any, ...]], pick: Pick, undecided_limit: float) -> tuple[Any, ...]:
    latest = max(rows, key=lambda r: (r[12] or "", r[9]))
    if pick == "latest":
        return latest
    better = _bool(latest[8])
    scored = [r for r in rows if r[3] is not None and _ranked(r, undecided_limit)]
    if better is None or not scored:
        return latest
    return (max if better else min)(scored, key=lambda r: (r[3], r[12] or ""))


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)
