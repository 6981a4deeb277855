"""One connection to SQLite or PostgreSQL, spoken through the same SQL, and the schema's
versioned migrations.

The store writes its SQL once, with ``?`` placeholders and types both engines know
(``TEXT``, ``INTEGER``, ``DOUBLE PRECISION``); for PostgreSQL the placeholders become
``%s``. Migrations are numbered steps kept in code; ``schema_version`` says how many ran.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from voxbench.core.errors import ConfigError, StoreError
from voxbench.core.secrets import redact_text

STORE_ENV = "VOXBENCH_STORE"
"""Where the store is when ``--store`` is not given (a PostgreSQL URL or an SQLite path)."""
STORE_OFF = "off"
"""``VOXBENCH_STORE=off``: finished runs are not indexed automatically."""
DEFAULT_DB_NAME = "voxbench.db"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: runs, their judges, scores and latency percentiles.
    (
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            benchmark TEXT NOT NULL,
            benchmark_hash TEXT,
            target TEXT NOT NULL,
            mode TEXT,
            status TEXT NOT NULL,
            started_at TEXT,
            ended_at TEXT,
            path TEXT NOT NULL,
            versions TEXT NOT NULL,
            signature TEXT NOT NULL,
            indexed_at TEXT NOT NULL
        )""",
        "CREATE INDEX runs_started_at ON runs (started_at)",
        "CREATE INDEX runs_path ON runs (path)",
        """CREATE TABLE run_judges (
            run_id TEXT NOT NULL,
            judge TEXT NOT NULL,
            PRIMARY KEY (run_id, judge)
        )""",
        """CREATE TABLE results (
            run_id TEXT NOT NULL,
            benchmark TEXT NOT NULL,
            target TEXT NOT NULL,
            dimension TEXT NOT NULL,
            value DOUBLE PRECISION,
            ci_low DOUBLE PRECISION,
            ci_high DOUBLE PRECISION,
            n INTEGER,
            unit TEXT NOT NULL,
            higher_is_better INTEGER,
            headline INTEGER NOT NULL,
            PRIMARY KEY (run_id, benchmark, target, dimension)
        )""",
        "CREATE INDEX results_cell ON results (headline, benchmark, target)",
        """CREATE TABLE latency (
            run_id TEXT NOT NULL,
            metric TEXT NOT NULL,
            count INTEGER NOT NULL,
            mean DOUBLE PRECISION,
            p50 DOUBLE PRECISION,
            p90 DOUBLE PRECISION,
            p95 DOUBLE PRECISION,
            p99 DOUBLE PRECISION,
            PRIMARY KEY (run_id, metric)
        )""",
    ),
    # 2: a score's note (a strict pass that cannot be set beside published numbers).
    ("ALTER TABLE results ADD COLUMN note TEXT",),
    # 3: how many units the judge left undecided (the decided share beside every rate).
    ("ALTER TABLE results ADD COLUMN undecided INTEGER",),
)
"""Step *i* brings the schema from version *i* to *i + 1*; append, never edit, a step."""
SCHEMA_VERSION = len(MIGRATIONS)


def resolve_store_url(url: str | None, runs_dir: Path) -> str:
    """``--store``, else ``VOXBENCH_STORE``, else ``<runs_dir>/voxbench.db``.

    ``off`` turns a run's automatic indexing off; given to a command that reads or writes
    the store it is an error, never an SQLite file named ``off``."""
    if url is not None and url.strip().lower() == STORE_OFF:
        raise ConfigError(
            "'off' turns automatic indexing off; this command needs a store",
            field="--store",
            expected=f"postgresql://… or an SQLite file (default: <runs_dir>/{DEFAULT_DB_NAME})",
        )
    env = os.environ.get(STORE_ENV, "").strip()
    if env.lower() == STORE_OFF:
        env = ""
    return url or env or str(Path(runs_dir) / DEFAULT_DB_NAME)


def describe_url(url: str) -> str:
    """The store's URL as it may be printed (a password in it is redacted)."""
    return redact_text(url)


class Database:
    """A connection used by one thread at a time (the viewer's threads take turns)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.postgres = url.startswith(POSTGRES_SCHEMES)
        self._lock = threading.RLock()
        self._conn: Any = _connect_postgres(url) if self.postgres else _connect_sqlite(url)
        self._migrate()

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A cursor whose statements commit together, or roll back on an error; a database
        error becomes a ``StoreError`` naming the store.

        A PostgreSQL connection the server dropped (a restart, an idle timeout) is opened again
        on the next transaction: the one under way fails, the ones after it work."""
        with self._lock:
            if self.postgres and self._conn.closed:
                self._conn = _connect_postgres(self.url)
            cur = self._conn.cursor()
            try:
                yield _Cursor(cur, self._sql)
                self._conn.commit()
            except BaseException as exc:
                with suppress(Exception):  # a dropped connection cannot roll back
                    self._conn.rollback()
                if _is_database_error(exc):
                    if self.postgres and _connection_lost(self._conn):
                        with suppress(Exception):
                            self._conn.close()  # reopened by the next transaction
                        raise StoreConnectionLost(
                            f"results store {describe_url(self.url)}: the connection was "
                            f"lost ({redact_text(str(exc)).strip()})"
                        ) from exc
                    raise StoreError(
                        f"results store {describe_url(self.url)}: {redact_text(str(exc)).strip()}"
                    ) from exc
                raise
            finally:
                with suppress(Exception):
                    cur.close()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one SELECT (asked once more on a new connection when the server dropped
        the old one: a read is safe to repeat)."""
        for attempt in (1, 2):
            try:
                with self.transaction() as cur:
                    cur.execute(sql, params)
                    return list(cur.fetchall())
            except StoreConnectionLost:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def version(self) -> int:
        """How many migrations this database has run."""
        with self.transaction() as cur:
            cur.execute("SELECT version FROM schema_version")
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def _migrate(self) -> None:
        with self.transaction() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        if self.postgres:  # two processes opening a new database migrate one after the other
            with self.transaction() as cur:
                cur.execute("SELECT pg_advisory_lock(7161)")
        try:
            current = self.version()
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"results store {describe_url(self.url)}: it has schema {current}; this "
                    f"voxbench knows 1-{SCHEMA_VERSION}: upgrade voxbench"
                )
            for version in range(current, SCHEMA_VERSION):
                with self.transaction() as cur:
                    for statement in MIGRATIONS[version]:
                        cur.execute(statement)
                    cur.execute("DELETE FROM schema_version")
                    cur.execute("INSERT INTO schema_version (version) VALUES (?)", (version + 1,))
        finally:
            if self.postgres:
                with self.transaction() as cur:
                    cur.execute("SELECT pg_advisory_unlock(7161)")

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class _Cursor:
    """A DB-API cursor that takes the store's ``?`` placeholders on either engine."""

    def __init__(self, cur: Any, translate: Any) -> None:
        self._cur = cur
        self._translate = translate

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._cur.execute(self._translate(sql), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._cur.executemany(self._translate(sql), [tuple(r) for r in rows])

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        return self._cur.fetchall()


class StoreConnectionLost(StoreError):
    """The server dropped the connection; the next transaction opens a new one."""


def _connection_lost(conn: Any) -> bool:
    """Whether a PostgreSQL connection is gone (closed, or broken by the server)."""
    return bool(getattr(conn, "closed", False) or getattr(conn, "broken", False))


def _is_database_error(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return True
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(exc, psycopg.Error)


SQLITE_SCHEMES = ("sqlite:///", "sqlite://")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def _connect_sqlite(url: str) -> sqlite3.Connection:
    scheme = _SCHEME.match(url)
    if scheme is not None and not url.startswith(SQLITE_SCHEMES):
        # mysql://… was taken as a relative file path and created a database there.
        raise ConfigError(
            f"unknown store scheme {scheme.group(1)!r} in {describe_url(url)}",
            field="--store",
            expected="postgresql://USER@HOST/DB, sqlite:///PATH or a file path",
        )
    path = Path(url.removeprefix("sqlite:///").removeprefix("sqlite://"))
    if path.exists() and path.is_dir():
        raise ConfigError("is a directory", file=path, field="--store", expected="a database file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
        # WAL: the viewer reads while a finishing run writes its row.
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(
            f"cannot open the results store: {exc}", file=path, field="--store"
        ) from None
    return conn


def _connect_postgres(url: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigError(
            "PostgreSQL needs psycopg: pip install 'voxbench[store-postgres]'",
            field="--store",
        ) from None
    try:
        return psycopg.connect(url, connect_timeout=10)
    except psycopg.Error as exc:
        raise ConfigError(
            f"cannot connect to the results store: {redact_text(str(exc)).strip()}",
            file=describe_url(url),
            field="--store",
        ) from None
