"""``ResponseCache.prefetch``: a window of keys looked up in one query finds what ``get``
would find, one key at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.tasks.engine import cache as cache_module
from voxbench.tasks.engine.cache import ResponseCache


def test_prefetched_keys_give_what_get_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "PREFETCH_MAX", 3)  # several queries for one window
    cache = ResponseCache(tmp_path / "c.sqlite")
    for i in range(0, 10, 2):
        cache.put(f"k{i}", "m", f"reply {i}")
    cache.commit()
    cache.put("k1", "m", "pending")  # stored, not yet committed
    cache.prefetch([f"k{i}" for i in range(10)] + ["k0"])
    assert [cache.get(f"k{i}") for i in range(10)] == [
        "reply 0", "pending", "reply 2", None, "reply 4", None, "reply 6", None, "reply 8", None,
    ]  # fmt: skip
    assert (cache.hits, cache.misses) == (6, 4)
    cache.close()


def test_a_reply_stored_after_its_key_was_looked_up_is_found(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.prefetch(["a", "b"])  # neither stored yet
    cache.put("a", "m", "late")
    cache.commit()  # no longer pending: found in SQLite, not as "looked up, absent"
    assert cache.get("a") == "late"
    assert cache.get("b") is None
    cache.close()


def test_no_read_finds_nothing_prefetched(tmp_path: Path) -> None:
    with_reply = ResponseCache(tmp_path / "c.sqlite")
    with_reply.put("a", "m", "x")
    with_reply.close()
    cache = ResponseCache(tmp_path / "c.sqlite", read=False)
    cache.prefetch(["a"])
    assert cache.get("a") is None
    cache.close()
