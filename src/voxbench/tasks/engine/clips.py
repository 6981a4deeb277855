"""Encoded clips by content: each distinct source clip's pieces, base64-encoded once.

Datasets repeat clips (the same clip under several tasks, prompts or models, a benchmark's
recurring prompts), and what a clip costs the event loop before it is sent is mostly its
encoding: base64 of its WAV (48 µs for 1.5 s at 16 kHz, ~1 ms for 20 s), the SHA-256 the
response-cache key hashes (27 µs, 0.35 ms), and for a FLAC or resampled source its decoding
(~0.4 ms). An entry keeps that work (each piece's base64 WAV, its digest, where the clip was
cut) for the exact source bytes it was made from and the ``Cut`` that made it.

An entry is found by a cheap fingerprint of the source (its length and three short spans)
and then compared byte for byte with the source it was made from (a memcmp: ~1 µs for
48 kB, 14 µs for 640 kB), so it is only ever returned for exactly the same bytes cut the
same way: what it holds is then what preparing the clip again would make. Bounded in bytes
(sources and base64 together), the least recently used entry dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from voxbench.tasks.engine.chunking import Piece
from voxbench.tasks.engine.prepare import Cut

CLIP_CACHE_BYTES = 96 * 1024 * 1024
"""Bytes of sources and base64 kept: ~1,000 clips of 1.5 s at 16 kHz, ~64 of 20 s (a 20 s
clip costs 1.5 MB here; a run keeping 256 of them in flight holds ~220 MB of bodies)."""
_SPAN = 256
"""Bytes of each span the fingerprint reads."""


@dataclass(frozen=True)
class EncodedClip:
    """What preparing one source clip made: each piece's base64 WAV and SHA-256 digest."""

    source: bytes
    """The encoded source it was made from (compared on every lookup)."""
    b64: tuple[bytes, ...]
    digests: tuple[str, ...]
    pieces: tuple[Piece, ...]
    """Where the clip was cut (empty: sent whole)."""

    @property
    def size(self) -> int:
        return len(self.source) + sum(len(b) for b in self.b64)


class ClipCache:
    """``EncodedClip`` by (``Cut``, source bytes), least recently used dropped past ``limit``."""

    def __init__(self, limit: int = CLIP_CACHE_BYTES) -> None:
        self.limit = limit
        self.total = 0
        self._entries: OrderedDict[tuple[Cut, int], EncodedClip] = OrderedDict()

    def get(self, cut: Cut, source: bytes) -> EncodedClip | None:
        """The entry made from exactly ``source`` cut by ``cut``, or None."""
        key = self.key(cut, source)
        entry = self._entries.get(key)
        if entry is None or entry.source != source:
            return None
        self._entries.move_to_end(key)
        return entry

    def put(self, cut: Cut, entry: EncodedClip) -> None:
        """Keep ``entry`` (replacing one of the same fingerprint), dropping the least
        recently used past the limit; an entry larger than the limit is not kept."""
        if entry.size > self.limit:
            return
        key = self.key(cut, entry.source)
        old = self._entries.pop(key, None)
        if old is not None:
            self.total -= old.size
        self._entries[key] = entry
        self.total += entry.size
        while self.total > self.limit:
            _, dropped = self._entries.popitem(last=False)
            self.total -= dropped.size

    @staticmethod
    def key(cut: Cut, source: bytes) -> tuple[Cut, int]:
        """Where an entry made from ``source`` is kept (sources sharing it replace each other)."""
        return cut, _fingerprint(source)

    def __len__(self) -> int:
        return len(self._entries)


def _fingerprint(source: bytes) -> int:
    """A hash of the source's length, start, middle and end (not the whole of it: the
    lookup compares every byte anyway; two clips that share these spans only replace each
    other's entry)."""
    middle = len(source) // 2
    return hash((len(source), source[:_SPAN], source[middle : middle + _SPAN], source[-_SPAN:]))
