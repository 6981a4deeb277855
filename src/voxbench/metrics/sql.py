"""``sql_execution_match``: the predicted SQL returns what the gold SQL returns.

Both queries run on a copy of the record's SQLite database: the file is opened read-only and
copied into memory (``Connection.backup``), each query in a fresh connection whose authorizer
allows reading only (no writes, ``ATTACH`` or pragmas that change anything) and whose
progress handler interrupts it at the time limit — inside SQLite, so a runaway query really
stops (AU-Harness wrapped the blocking call in ``asyncio.wait_for``, which cannot).

Results are compared as the Spider test suite's ``eval_exec_match`` compares them by default:
``DISTINCT`` removed from both queries, rows as multisets (in order only when the gold query
says "order by"), cells by Python equality (no rounding), the predicted columns matched to the
gold's in any order (``SELECT a, b`` = ``SELECT b, a``). A gold query that fails is that record's error: counted and named in the
pooled result and left out of the value, never an exception that stops the metric.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from voxbench.benchmarks.audio import cache_root
from voxbench.core.errors import ConfigError
from voxbench.metrics.stats import Pooled, RecordStats

MAX_ROWS = 100_000
"""A result larger than this is an error (a cross join returning millions of rows)."""
_PROGRESS_STEPS = 1000
"""SQLite virtual-machine steps between two looks at the clock."""


class QueryError(Exception):
    """A query that could not run: a syntax error, a missing table, the time limit."""


# -- the built-in database ---------------------------------------------------------------------

_SPEAKERS = [
    (1, "Maria Lopez", "Spain"),
    (2, "John Smith", "United States"),
    (3, "Anna Berg", "Sweden"),
    (4, "Kenji Sato", "Japan"),
    (5, "Amara Okafor", "Nigeria"),
    (6, "Luca Rossi", "Italy"),
]
_ROOMS = [("Hall A", 400), ("Room 101", 60), ("Room 204", 40), ("Garden", 120)]
_SESSIONS = [
    # id, title, track, day, start, room, speaker
    ("H-101", "Opening keynote", "keynote", 1, "09:00", "Hall A", 2),
    ("B-204", "Speech recognition at scale", "speech", 1, "11:00", "Room 204", 4),
    ("B-205", "Evaluating voice agents", "speech", 1, "14:00", "Room 204", 1),
    ("C-310", "Privacy in audio data", "policy", 1, "16:00", "Room 101", 3),
    ("D-120", "Low-resource languages", "speech", 2, "09:30", "Room 101", 5),
    ("D-121", "Streaming text to speech", "speech", 2, "11:30", "Room 101", 4),
    ("E-400", "Closing panel", "keynote", 2, "16:30", "Hall A", 6),
    ("G-001", "Garden demos", "demo", 2, "13:00", "Garden", 5),
]
_REGISTRATIONS = [
    ("Maria Lopez", "H-101"),
    ("Maria Lopez", "B-205"),
    ("John Smith", "B-204"),
    ("Anna Berg", "H-101"),
    ("Anna Berg", "C-310"),
    ("Anna Berg", "D-120"),
    ("Peter Novak", "H-101"),
    ("Peter Novak", "B-204"),
    ("Peter Novak", "G-001"),
    ("Sofia Haddad", "E-400"),
]
_CONFERENCE_SQL = """
CREATE TABLE speakers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL);
CREATE TABLE rooms (name TEXT PRIMARY KEY, capacity INTEGER NOT NULL);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY, title TEXT NOT NULL, track TEXT NOT NULL, day INTEGER NOT NULL,
  start_time TEXT NOT NULL, room TEXT NOT NULL REFERENCES rooms(name),
  speaker_id INTEGER NOT NULL REFERENCES speakers(id));
CREATE TABLE registrations (
  attendee TEXT NOT NULL, session_id TEXT NOT NULL REFERENCES sessions(id),
  PRIMARY KEY (attendee, session_id));
"""


def _build_conference(conn: sqlite3.Connection) -> None:
    conn.executescript(_CONFERENCE_SQL)
    conn.executemany("INSERT INTO speakers VALUES (?, ?, ?)", _SPEAKERS)
    conn.executemany("INSERT INTO rooms VALUES (?, ?)", _ROOMS)
    conn.executemany("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?)", _SESSIONS)
    conn.executemany("INSERT INTO registrations VALUES (?, ?)", _REGISTRATIONS)


BUILTIN_DATABASES: dict[str, tuple[Callable[[sqlite3.Connection], None], str]] = {
    "conference": (
        _build_conference,
        repr((_CONFERENCE_SQL, _SPEAKERS, _ROOMS, _SESSIONS, _REGISTRATIONS)),
    ),
}
"""Name → (what fills an empty database, the content it is versioned by)."""


def builtin_database(name: str, root: Path | None = None) -> Path:
    """The SQLite file of built-in database ``name``, built on first use (and again when its
    content changes: the file name carries a hash of it)."""
    if name not in BUILTIN_DATABASES:
        raise ConfigError(
            f"unknown built-in database {name!r}",
            field="sql.builtin",
            expected="one of: " + ", ".join(BUILTIN_DATABASES),
        )
    build, content = BUILTIN_DATABASES[name]
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()[:12]
    folder = root or cache_root() / "tasks" / "sql"
    path = folder / f"{name}-{digest}.sqlite"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    conn = sqlite3.connect(partial)
    try:
        with conn:
            build(conn)
    finally:
        conn.close()
    os.replace(partial, path)  # atomic: a reader never sees a half-built database
    return path


@functools.lru_cache(maxsize=64)
def schema_text(database: str) -> str:
    """The ``CREATE`` statements of a database's tables (what ``{schema}`` in a prompt shows)."""
    try:
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            rows = conn.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL "
                "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise ConfigError(
            f"cannot read the schema of {database} for {{schema}}: {exc}", field="sql"
        ) from exc
    return "\n".join(" ".join(str(r[0]).split()) + ";" for r in rows)


# -- running a query ------------------------------------------------------------------------------

_READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)


def _read_only(action: int, *args: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


def _copy_of(database: str) -> sqlite3.Connection:
    source = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    copy = sqlite3.connect(":memory:")
    try:
        source.backup(copy)
    finally:
        source.close()
    # Some Spider databases hold text that is not UTF-8: read it, never fail on it.
    copy.text_factory = lambda data: data.decode("utf-8", errors="replace")
    return copy


def run_query(database: str, query: str, timeout_s: float) -> list[tuple[Any, ...]]:
    """The rows ``query`` returns on a read-only in-memory copy of ``database``; a
    ``QueryError`` when it fails, writes, returns over ``MAX_ROWS`` rows or runs past
    ``timeout_s`` (interrupted by SQLite's progress handler)."""
    try:
        conn = _copy_of(database)
    except sqlite3.Error as exc:
        raise QueryError(f"cannot open {database}: {exc}") from exc
    deadline = time.monotonic() + timeout_s
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)
    conn.set_authorizer(_read_only)
    try:
        cursor = conn.execute(query)
        rows: list[tuple[Any, ...]] = []
        while batch := cursor.fetchmany(1000):
            rows.extend(batch)
            if len(rows) > MAX_ROWS:
                raise QueryError(f"more than {MAX_ROWS} rows")
        return rows
    except sqlite3.Error as exc:
        if time.monotonic() > deadline:
            raise QueryError(f"time limit of {timeout_s:g} s reached") from exc
        raise QueryError(str(exc)) from exc
    except (ValueError, OverflowError) as exc:  # e.g. text that is not valid UTF-8
        raise QueryError(str(exc)) from exc
    finally:
        conn.close()


# -- comparing results ----------------------------------------------------------------------------


def _rows(rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Cells compared as Python compares them, as the Spider test suite does (18 == 18.0;
    floats exactly, never rounded)."""
    return [tuple(row) for row in rows]


def _same(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]], ordered: bool) -> bool:
    return gold == pred if ordered else Counter(gold) == Counter(pred)


def results_match(
    gold: Sequence[tuple[Any, ...]], pred: Sequence[tuple[Any, ...]], *, ordered: bool
) -> bool:
    """Same rows (as a multiset, or in order), the predicted columns in any order."""
    g, p = _rows(gold), _rows(pred)
    if len(g) != len(p):
        return False
    if not g:
        return True
    width = len(g[0])
    if any(len(r) != width for r in p):
        return False
    if _same(g, p, ordered):
        return True
    # Candidate predicted columns for each gold column: those holding the same values.
    gold_cols = [Counter(r[i] for r in g) for i in range(width)]
    pred_cols = [Counter(r[j] for r in p) for j in range(width)]
    candidates = [[j for j in range(width) if pred_cols[j] == gold_cols[i]] for i in range(width)]

    def search(i: int, used: tuple[int, ...]) -> bool:
        if i == width:
            return _same(g, [tuple(r[j] for j in used) for r in p], ordered)
        return any(search(i + 1, (*used, j)) for j in candidates[i] if j not in used)

    return search(0, ())


_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)
_STRINGS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")
_FENCE = re.compile(r"```[ \t]*(sql|sqlite)?[ \t]*\n?(.*?)```", re.IGNORECASE | re.DOTALL)
_START = re.compile(
    r"\bSELECT\b|\bWITH\s+(?:RECURSIVE\s+)?\w+\s*(?:\([^)]*\)\s*)?AS\s*\(", re.IGNORECASE
)
"""Where unfenced SQL starts: ``SELECT``, or ``WITH name AS (`` (not "with a join")."""


def extract_sql(text: str) -> str | None:
    """The SQL in a reply: the first ```sql fence, else the first fence, else the text from
    its first ``SELECT`` (or ``WITH … AS (``) to its first ``;`` or blank line; None when it
    holds none."""
    fences = _FENCE.findall(text)
    tagged = [body for tag, body in fences if tag]
    body = (tagged or [b for _, b in fences] or [None])[0]
    if body is None:
        found = _START.search(text)
        if found is None:
            return None
        tail = text[found.start() :]
        # The end: the first ";" or blank line outside a quoted string.
        masked = _STRINGS.sub(lambda m: "x" * len(m.group(0)), tail)
        end = re.search(r";|\n\s*\n", masked)
        body = tail[: end.start()] if end else tail
    query = body.strip().rstrip(";").strip()
    return query or None


def is_ordered(query: str) -> bool:
    """Whether a query's result order is part of its answer: "order by" in it, as the Spider
    test suite reads it (``'order by' in gold.lower()``)."""
    return "order by" in query.lower()


_DISTINCT = re.compile(r"\bdistinct\b", re.IGNORECASE)


def remove_distinct(query: str) -> str:
    """The query without its ``DISTINCT`` keywords (outside quoted strings and names), as the
    Spider test suite compares by default (``keep_distinct=False``): which rows come back,
    not how often."""
    out, last = [], 0
    for quoted in _STRINGS.finditer(query):
        out += [_DISTINCT.sub("", query[last : quoted.start()]), quoted.group(0)]
        last = quoted.end()
    return "".join([*out, _DISTINCT.sub("", query[last:])])


# -- the metric -----------------------------------------------------------------------------------


def score(prediction: str, ctx: Any) -> RecordStats:
    """One record: ``correct``, or why not (``outcome``); a failing gold is ``gold_error``."""
    database, timeout = ctx.database, ctx.query_timeout_s
    if database is None:
        return {"correct": 0, "outcome": "gold_error", "gold_error": "no database for the task"}
    # The gold is SQL as written (a fenced one unwrapped): never cut at a ";" in a string.
    fenced = extract_sql(ctx.reference) if "```" in ctx.reference else None
    gold_sql = fenced or ctx.reference.strip().rstrip(";").strip()
    try:
        gold = run_query(database, remove_distinct(gold_sql), timeout)
    except QueryError as exc:
        return {"correct": 0, "outcome": "gold_error", "gold_error": str(exc)}
    query = extract_sql(prediction)
    if query is None:
        return {"correct": 0, "outcome": "no_sql"}
    try:
        pred = run_query(database, remove_distinct(query), timeout)
    except QueryError as exc:
        outcome = "timeout" if str(exc).startswith("time limit") else "error"
        return {"correct": 0, "outcome": outcome, "error": str(exc)}
    ok = results_match(gold, pred, ordered=is_ordered(gold_sql))
    return {"correct": int(ok), "outcome": "match" if ok else "mismatch"}


def pool(
    stats: Sequence[RecordStats],
    rng: np.random.Generator | None,
    *,
    rate_pool: Callable[[str], Callable[..., Pooled]],
) -> Pooled:
    """Execution accuracy (%) over records whose gold ran; the others counted and named
    (``rate_pool`` is passed in by ``metrics.registry``)."""
    ran = [s for s in stats if s["outcome"] != "gold_error"]
    out = rate_pool("correct")(ran, rng)
    failed = Counter(s["gold_error"] for s in stats if s["outcome"] == "gold_error")
    out["gold_errors"] = sum(failed.values())
    if failed:
        out["gold_error_kinds"] = dict(failed.most_common(5))
    out["outcomes"] = dict(sorted(Counter(s["outcome"] for s in ran).items()))
    return out
