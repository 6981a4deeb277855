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
from pathlib import Path
from typing import Any


def request_key(payload: dict[str, Any]) -> str:
    """SHA-256 of a request's canonical JSON."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


PREFETCH_MAX = 500
"""Keys looked up in one query at most (SQLite allows 32,766 parameters; 999 before 3.32)."""


class ResponseCache:
    """Replies by request key, in SQLite (WAL: readers never block the writer)."""

    def __init__(self, path: Path, *, read: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # Replies are written and committed in batches (``commit``): records.jsonl, flushed per
        # record, is what resume trusts, so a kill costs the cache at most the last batch.
        # Waits for a lock from the start: shards of one run (``tasks.engine.shards``) open the
        # same file at once, and switching a new file to WAL needs it to themselves.
        self._db = sqlite3.connect(path, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses "
            "(key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL, stored REAL NOT NULL)"
        )
        self.read = read
        """False: ``get`` finds nothing (every request is made again; ``put`` still stores)."""
        self.hits = 0
        self.misses = 0
        self._pending: dict[str, tuple[str, str, str, float]] = {}
        """Replies stored since the last commit, written to SQLite in one statement then."""
        self._looked_up: dict[str, str | None] = {}
        """What ``prefetch`` found for keys not asked for yet (None: not stored), each
        dropped when ``get`` asks for it."""
        self._committed_at = time.monotonic()

    def get(self, key: str) -> str | None:
        """The stored reply for ``key``, or None (always None when not ``read``)."""
        if not self.read:
            self.misses += 1
            return None
        pending = self._pending.get(key)
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
        keys = [k for k in dict.fromkeys(keys) if k not in self._pending]
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

    def commit(self) -> None:
        """Make the replies stored so far durable."""
        if self._pending:
            self._db.executemany(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)", self._pending.values()
            )
            self._pending.clear()
        self._db.commit()
        self._committed_at = time.monotonic()

    def checkpoint(self, every: int = 256, seconds: float = 1.0) -> None:
        """Commit when ``every`` replies or ``seconds`` have passed since the last commit (a
        commit per finished record would cost more than the record's request)."""
        if len(self._pending) >= every or (
            self._pending and time.monotonic() - self._committed_at >= seconds
        ):
            self.commit()

    def close(self) -> None:
        """Commit and close the database."""
        self.commit()
        self._db.close()
