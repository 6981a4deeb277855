"""Which SQLite file a SQL task's record runs on (``sql_execution_match``, ``{schema}``).

A task's ``sql`` block names a built-in database (``metrics.sql.BUILTIN_DATABASES``), one
``.sqlite`` file, or a folder of them picked per record by a column (Spider's layout);
``check_sql_task`` checks, before any request, that every selected record's file exists.
The metric itself (running and comparing the queries) is ``metrics.sql``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import substitute_env
from voxbench.metrics.sql import builtin_database
from voxbench.tasks.spec import SqlDatabase, TaskSpec


def _database_root(sql: SqlDatabase, file: Path | None) -> Path:
    if sql.builtin is not None:
        return builtin_database(sql.builtin)
    assert sql.database is not None
    text = substitute_env(sql.database, file=file, path="sql.database")
    return Path(text).expanduser()


def database_for(sql: SqlDatabase, record: Any, file: Path | None = None) -> str:
    """The SQLite file ``record``'s queries run on: the file itself, or in a folder
    ``<db_id>/<db_id>.sqlite`` (Spider's layout) or ``<db_id>.sqlite``."""
    root = _database_root(sql, file)
    if root.is_file() or sql.db_id_column is None:
        return str(root)
    db_id = str(record.columns.get(sql.db_id_column, ""))
    nested = root / db_id / f"{db_id}.sqlite"
    return str(nested if nested.is_file() or not (root / f"{db_id}.sqlite").is_file() else
               root / f"{db_id}.sqlite")  # fmt: skip


def check_sql_task(spec: TaskSpec, file: Path, records: Sequence[Any]) -> None:
    """Before any request: the task says where its database is, and every selected record's
    database file exists (an error naming the missing ones and where they go)."""
    sql = spec.sql
    if sql is None:
        raise ConfigError(
            "sql_execution_match needs the task's database",
            file=file,
            field="sql",
            expected="sql: {builtin: conference} or sql: {database: DIR, db_id_column: db_id}",
        )
    root = _database_root(sql, file)
    if sql.db_id_column is not None:
        lacking = [r.id for r in records if sql.db_id_column not in r.columns]
        if lacking:
            raise ConfigError(
                f"records {', '.join(lacking[:5])} have no column {sql.db_id_column!r}",
                file=file,
                field="sql.db_id_column",
            )
    elif not root.is_file():
        raise ConfigError(
            f"SQLite database {root} does not exist",
            file=file,
            field="sql.database",
            expected="a .sqlite file, or a folder of them with db_id_column",
        )
    missing = sorted({p for r in records if not Path(p := database_for(sql, r, file)).is_file()})
    if missing:
        raise ConfigError(
            f"{len(missing)} database file(s) missing under {root}, e.g. {missing[0]}",
            file=file,
            field="sql.database",
            expected="the databases in <dir>/<db_id>/<db_id>.sqlite (see the task's comment "
            "for where to get them)",
        )
