"""The C allocator's thresholds raised for local Whisper's large buffers (``audio.allocator``)."""

from __future__ import annotations

import ctypes
import os
import resource
import sys

import numpy as np
import pytest

from voxbench.audio.allocator import KEEP_BYTES, keep_large_buffers


def _is_glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (ValueError, OSError, AttributeError):
        return False


def test_set_once_and_reported() -> None:
    first = keep_large_buffers()
    assert first is keep_large_buffers()  # cached: set once per process
    assert first == _is_glibc()


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _is_glibc(), reason="glibc only")
def test_a_large_block_is_reused_without_page_faults() -> None:
    """A freed 64 MiB block comes back from the heap: filling it again faults (almost) no
    page, where glibc's default maps and unmaps it each time (16,384 faults a round)."""
    assert keep_large_buffers()
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    size = 64 * 1024 * 1024
    assert size < KEEP_BYTES

    def fill_once() -> None:
        block = libc.malloc(size)
        np.frombuffer((ctypes.c_char * size).from_address(block), np.uint8)[::4096] = 1
        libc.free(block)

    fill_once()  # the heap grows once
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        fill_once()
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 1000
