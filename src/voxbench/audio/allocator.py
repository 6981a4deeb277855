"""Keep the C allocator's large buffers for reuse instead of handing them back to the kernel.

glibc's malloc serves a block above its mmap threshold (128 KiB, rising with use to at most
32 MiB) with a fresh ``mmap`` and unmaps it when freed, and gives a heap's free top back to
the kernel past its trim threshold. Local Whisper allocates and frees blocks of tens of MiB
per clip (its encoder over the 30 s window: one layer's attention scores alone are 6 heads x
1500 x 1500 floats, 54 MiB), so every clip page-faulted ~60,000 freshly zeroed pages: ~150 ms
of system time on a ~1.1 s transcription, and in ``voxbench demo`` (225 transcriptions) 14
million page faults, ~40 s of its ~45 s of system time.

``keep_large_buffers`` raises both thresholds to ``KEEP_BYTES``, so such blocks come from the
heap and go back to it, reused by the next clip without a fault (~3,000 faults per clip
remain). What a buffer holds does not depend on where it lies: every result is the same (the
demo's transcripts, verdicts and recordings are identical, ``bench/demo_identity.py``); peak
memory grows by a few tens of MiB (what stays in the heap between clips).

The settings are process-wide and glibc's own; elsewhere (musl, macOS, Windows) this does
nothing.
"""

from __future__ import annotations

import ctypes
import os
from functools import cache

KEEP_BYTES = 256 * 1024 * 1024
"""Blocks up to this size come from the heap, and this much free memory may stay at a heap's
top: above Whisper tiny's largest blocks (54 MiB); 32 MiB (glibc's dynamic ceiling) leaves
most of the faults (~55,000 a clip)."""
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
"""``mallopt`` parameter numbers (glibc's ``malloc.h``)."""


@cache
def keep_large_buffers() -> bool:
    """Raise glibc's mmap and trim thresholds to ``KEEP_BYTES`` (once per process); returns
    whether both were set (False on another C library)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return False
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (ValueError, OSError, AttributeError):  # no such name: not glibc (or not Unix)
        return False
    # The mmap threshold first: setting it also stops glibc from moving either threshold.
    return bool(mallopt(_M_MMAP_THRESHOLD, KEEP_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, KEEP_BYTES)
    )
