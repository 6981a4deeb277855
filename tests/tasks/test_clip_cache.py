"""Clips encoded once by content (``tasks.engine.clips``): a record whose clip was encoded
before gets the same bodies, records and cache keys as encoding it again, and an entry is
only ever found for exactly the bytes it was made from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tasks.parquet_run import run_parquet_task, sine_clip
from voxbench.tasks.engine.clips import ClipCache, EncodedClip
from voxbench.tasks.engine.prepare import BodySpec, Cut

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

CUT = Cut(16000, "chunk", 30.0, 1.0)


def _entry(source: bytes, b64: bytes = b"QUJD") -> EncodedClip:
    return EncodedClip(source, (b64,), ("d",), ())


def test_an_entry_is_found_only_for_the_very_bytes_and_cut_it_was_made_of() -> None:
    cache = ClipCache()
    source = bytes(range(256)) * 40
    cache.put(CUT, _entry(source))
    assert cache.get(CUT, bytes(bytearray(source))) == _entry(source)  # equal, not the same object
    # Same length, start, middle and end (the fingerprint's spans), one byte apart elsewhere.
    other = bytearray(source)
    other[1000] ^= 1
    assert cache.key(CUT, bytes(other)) == cache.key(CUT, source)
    assert cache.get(CUT, bytes(other)) is None
    assert cache.get(Cut(24000, "chunk", 30.0, 1.0), source) is None


def test_the_cache_is_bounded_in_bytes_least_recently_used_dropped_first() -> None:
    sources = [bytes([i]) * 1000 for i in range(4)]
    cache = ClipCache(limit=3 * 1004)  # three entries of 1000 + 4 bytes
    for source in sources[:3]:
        cache.put(CUT, _entry(source))
    assert cache.get(CUT, sources[0]) is not None  # now the most recently used
    cache.put(CUT, _entry(sources[3]))
    assert cache.get(CUT, sources[1]) is None and len(cache) == 3
    assert all(cache.get(CUT, s) is not None for s in (sources[0], sources[2], sources[3]))
    assert cache.total == 3 * 1004
    cache.put(CUT, _entry(b"x" * 5000))  # larger than the whole cache: not kept
    assert cache.get(CUT, b"x" * 5000) is None and cache.total == 3 * 1004


def _clip(i: int, fmt: str, rate: int) -> bytes:
    return sine_clip(0.3 + 0.1 * i, 200 + 30 * i, fmt, rate)


def _run(tmp_path: Path, name: str) -> tuple[list[str], list[bytes]]:
    """A parquet dataset of 12 rows over 4 clips (passed through, FLAC, resampled, and one
    cut in pieces), each row with its own prompt: the rows and the bodies sent."""
    clips = [_clip(0, "WAV", 16000), _clip(1, "FLAC", 16000), _clip(2, "WAV", 22050)]
    clips.append(_clip(30, "WAV", 16000))  # 3.3 s: cut in pieces of 1.5 s
    data = tmp_path / "data" / "data"
    if not data.exists():
        data.mkdir(parents=True)
        table = pa.table(
            {
                "id": [f"r{i}" for i in range(12)],
                "audio": [{"bytes": clips[i % 4], "path": None} for i in range(12)],
                "reference": [f"word {i}" for i in range(12)],
            }
        )
        pq.write_table(table, data / "test-00000-of-00001.parquet", row_group_size=5)
    long_audio = "long_audio: {policy: chunk, max_seconds: 1.5, overlap_seconds: 0.2}\n"
    return run_parquet_task(
        tmp_path, name, lambda body: f"heard {len(body)}", task_extra=long_audio
    )


def test_records_of_a_clip_encoded_once_are_those_of_encoding_it_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded: list[int] = []
    real = BodySpec.encoded

    def counting(self: BodySpec, prepared: Any) -> Any:
        encoded.append(len(prepared.digests))
        return real(self, prepared)

    monkeypatch.setattr(BodySpec, "encoded", counting)
    once_rows, once_sent = _run(tmp_path, "once")
    assert len(encoded) == 4  # each distinct clip encoded once, whatever its prompt
    # As before the clip cache: every body built whole by the client's builder.
    monkeypatch.setattr(BodySpec, "splices", property(lambda self: False))
    encoded.clear()
    each_rows, each_sent = _run(tmp_path, "each")
    assert len(encoded) == 12
    assert len(once_rows) == 12 and once_rows == each_rows  # keys, pieces, predictions
    assert once_sent == each_sent and len(once_sent) > 12  # the long clip's pieces too
