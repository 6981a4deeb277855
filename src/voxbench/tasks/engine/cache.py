"""The content-addressed response cache: (model, request payload) hash → reply text.

One SQLite file beside the run directories (``<output_dir>/cache.sqlite``), shared by every
run: a resumed run, or a new run that only changes metrics, finds every reply it already paid
for. The key hashes the model's ``provider/model`` and api, the servers of its pool (their
base URLs: a rerun against another server asks it), the rendered prompt and system text, the
generation params and the WAV bytes sent (so resampling and cutting are in it). The pool's
servers are keyed as one set: any endpoint of a pool serves the same model.
``read=False`` (``tasks run --no-cache``) asks every request again and stores the new replies.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any


def request_key(payload: dict[str, Any]) -> str:
    """SHA-256 of a request's canonical JSON."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


PREFETCH_MAX = 500
"""Keys looked up in one query at most (SQLite allows 32,766 parameters; 999 before 3.32)."""


class ResponseCache:
    """Replies by request key, in SQLite (WAL: readers never block the writer).

    Reads go through this thread's connection. Writes go through a writer thread's own
    connection (``checkpoint`` hands each batch over and returns): inserting and committing
    a batch of 256 replies took ~6% of a 5,000-requests-a-second run's event loop, and SQLite
    runs without the GIL. A batch handed over is found by ``get`` until it is committed."""

    def __init__(self, path: Path, *, read: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # Replies are written and committed in batches (``commit``): records.jsonl, flushed per
        # record, is what resume trusts, so a kill costs the cache at most the last batches.
        self._db = _connect(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses "
            "(key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL, stored REAL NOT NULL)"
        )
        self.read = read
        """False: ``get`` finds nothing (every request is made again; ``put`` still stores)."""
        self.hits = 0
        self.misses = 0
        self._pending: dict[str, tuple[str, str, str, float]] = {}
        """Replies stored since the last hand-over, written to SQLite in one statement then."""
        self._writing: list[tuple[dict[str, tuple[str, str, str, float]], Future[None]]] = []
        """Batches handed to the writer thread, oldest first, kept until committed."""
        self._writer: ThreadPoolExecutor | None = None
        self._writer_db: sqlite3.Connection | None = None
        """The writer thread's connection (used in that thread only)."""
        self._looked_up: dict[str, str | None] = {}
        """What ``prefetch`` found for keys not asked for yet (None: not stored), each
        dropped when ``get`` asks for it."""
        self._committed_at = time.monotonic()

    def get(self, key: str) -> str | None:
        """The stored reply for ``key``, or None (always None when not ``read``)."""
        if not self.read:
            self.misses += 1
            return None
        pending = self._pending.get(key) or self._in_transit(key)
        if pending is not None:
            self.hits += 1
            return pending[2]
        if key in self._looked_up:
            text = self._looked_up.pop(key)
        else:
            row = self._db.execute("SELECT text FROM responses WHERE key = ?", (key,)).fetchone()
            text = None if row is None else str(row[0])
        if text is None:
            self.misses += 1
            return None
        self.hits += 1
        return text

    def prefetch(self, keys: list[str]) -> None:
        """Look up ``keys`` in one query (a window of upcoming requests), for ``get`` to find
        at no query each: one statement for many keys costs about what one costs."""
        if not self.read or not keys:
            return
        # A key being written is not looked up: the query could run before its commit, and
        # its "absent" outlive the batch.
        keys = [
            k for k in dict.fromkeys(keys) if k not in self._pending and not self._in_transit(k)
        ]
        for start in range(0, len(keys), PREFETCH_MAX):
            window = keys[start : start + PREFETCH_MAX]
            marks = ",".join("?" * len(window))
            found = dict(
                self._db.execute(
                    f"SELECT key, text FROM responses WHERE key IN ({marks})",  # noqa: S608
                    window,
                ).fetchall()
            )
            self._looked_up.update({k: found.get(k) for k in window})

    def put(self, key: str, model: str, text: str) -> None:
        """Store a reply (in SQLite at the next ``commit``; ``get`` finds it at once)."""
        self._pending[key] = (key, model, text, time.time())
        self._looked_up.pop(key, None)  # what was looked up before is not what is stored now

    def checkpoint(self, every: int = 256, seconds: float = 1.0) -> None:
        """Hand the stored replies to the writer thread when ``every`` replies or ``seconds``
        have passed since the last hand-over (a commit per finished record would cost more
        than the record's request); a batch the writer failed to write raises here."""
        self._reap()
        if len(self._pending) >= every or (
            self._pending and time.monotonic() - self._committed_at >= seconds
        ):
            self._hand_over()

    def commit(self) -> None:
        """Make the replies stored so far durable (returns once they are)."""
        if self._pending:
            self._hand_over()
        while self._writing:
            self._writing.pop(0)[1].result()  # a failed write raises (its batch is lost)

    def close(self) -> None:
        """Commit and close the database."""
        try:
            self.commit()
        finally:
            if self._writer is not None:
                self._writer.submit(self._close_writer).result()
                self._writer.shutdown()
                self._writer = None
            self._db.close()

    def _hand_over(self) -> None:
        batch, self._pending = self._pending, {}
        self._committed_at = time.monotonic()
        if self._writer is None:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="response-cache")
        self._writing.append((batch, self._writer.submit(self._write, batch)))

    def _reap(self) -> None:
        """Forget the batches committed (found in SQLite now); a failed write raises."""
        while self._writing and self._writing[0][1].done():
            self._writing.pop(0)[1].result()

    def _in_transit(self, key: str) -> tuple[str, str, str, float] | None:
        for batch, _ in reversed(self._writing):  # the newest reply for the key
            found = batch.get(key)
            if found is not None:
                return found
        return None

    def _write(self, batch: dict[str, tuple[str, str, str, float]]) -> None:
        """In the writer thread: insert ``batch`` and commit."""
        if self._writer_db is None:
            self._writer_db = _connect(self.path)
        self._writer_db.executemany(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)", batch.values()
        )
        self._writer_db.commit()

    def _close_writer(self) -> None:
        if self._writer_db is not None:
            self._writer_db.close()
            self._writer_db = None


def _connect(path: Path) -> sqlite3.Connection:
    """A connection to the cache file in WAL mode. It waits for a lock from the start: shards
    of one run (``tasks.engine.shards``) open the same file at once, and switching a new file
    to WAL needs it to themselves."""
    db = sqlite3.connect(path, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=5000")
    return db
