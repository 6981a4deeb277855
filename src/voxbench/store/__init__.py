"""The results store: every finished run indexed in SQLite (default) or PostgreSQL.

``open_store(url, runs_dir)`` → ``Store`` with ``index_run``, ``index_tree``, ``runs``,
``leaderboard`` and ``get``; ``index_finished_run`` is what a finishing run calls.
"""

from voxbench.store.database import SCHEMA_VERSION, STORE_ENV, resolve_store_url
from voxbench.store.models import (
    UNDECIDED_LIMIT,
    IndexReport,
    Latency,
    LeaderRow,
    Result,
    RunFilters,
    RunRow,
    Skipped,
)
from voxbench.store.store import Store, find_run_dirs, index_finished_run, open_store

__all__ = [
    "SCHEMA_VERSION",
    "STORE_ENV",
    "UNDECIDED_LIMIT",
    "IndexReport",
    "Latency",
    "LeaderRow",
    "Result",
    "RunFilters",
    "RunRow",
    "Skipped",
    "Store",
    "find_run_dirs",
    "index_finished_run",
    "open_store",
    "resolve_store_url",
]
