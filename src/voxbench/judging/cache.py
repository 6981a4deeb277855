"""An on-disk cache of LLM judgments, keyed by the hash of everything the judge was given.

Re-judging an unchanged run therefore makes no call: same judge, same version, same
prompt text → same file. Only validated verdicts are stored (a failure is retried next
time). The cache lives in ``$VOXBENCH_CACHE_DIR/judgments`` (default
``~/.cache/voxbench/judgments``), one small JSON file per judgment, written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CACHE_ENV = "VOXBENCH_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$VOXBENCH_CACHE_DIR/judgments`` or ``~/.cache/voxbench/judgments``."""
    root = os.environ.get(CACHE_ENV)
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "voxbench"
    return base / "judgments"


def cache_key(*parts: str) -> str:
    """SHA-256 of the parts (judge, version, endpoint, prompt texts), hex."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def fields_key(kind: str, fields: Mapping[str, Any]) -> str:
    """SHA-256 of ``kind`` and every field (canonical JSON, keys sorted), hex: two sets of
    fields that differ in any value — an endpoint, a temperature, a sample index — never
    share a key. The fields are stored with the entry, and ``get_matching`` checks them."""
    return cache_key(kind, json.dumps(dict(fields), sort_keys=True, ensure_ascii=False))


class JudgmentCache:
    """Reads and writes cached judge replies."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_cache_dir()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for ``key``; an unreadable entry counts as a miss."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("key") == key else None

    def get_matching(self, key: str, fields: Mapping[str, Any]) -> dict[str, Any] | None:
        """The entry for ``key`` when it was stored with exactly ``fields`` (an entry written
        under other fields — another endpoint, temperature or sample — is a miss)."""
        entry = self.get(key)
        if entry is None or entry.get("fields") != json.loads(json.dumps(dict(fields))):
            return None
        return entry

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` under ``key`` (atomically; a failed write is not an error)."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({**entry, "key": key}, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            # A read-only or full disk costs a future call, never the judgment itself.
            return
