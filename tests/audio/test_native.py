"""Native libraries' process-wide settings under the local models (``audio.native``)."""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

from voxbench.audio.native import (
    _OPENBLAS_SETTERS,
    KEEP_BYTES,
    _loaded_libraries,
    keep_large_buffers,
    one_blas_thread,
)
from voxbench.audio.vad import SileroVAD
from voxbench.audio.wav import Audio


def _is_glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (ValueError, OSError, AttributeError):
        return False


def _openblas() -> ctypes.CDLL | None:
    """numpy's OpenBLAS with a thread-count setter, when this process has one."""
    for path in _loaded_libraries():
        if "openblas" in path.name.lower():
            library = ctypes.CDLL(str(path))
            if any(hasattr(library, name) for name in _OPENBLAS_SETTERS):
                return library
    return None


def _set_blas_threads(library: ctypes.CDLL, count: int) -> None:
    getattr(library, next(n for n in _OPENBLAS_SETTERS if hasattr(library, n)))(count)


def test_set_once_and_reported() -> None:
    first = keep_large_buffers()
    assert first is keep_large_buffers()  # cached: set once per process
    assert first == _is_glibc()
    assert one_blas_thread() is one_blas_thread()
    assert one_blas_thread() == (_openblas() is not None)


def test_opted_out_nothing_is_changed() -> None:
    """``VOXBENCH_NATIVE_TUNING=0``: neither setting is made (a fresh process: the settings
    are per process and this one may have made them)."""
    script = (
        "from voxbench.audio.native import keep_large_buffers, one_blas_thread\n"
        "print(keep_large_buffers(), one_blas_thread())"
    )
    env = {**os.environ, "VOXBENCH_NATIVE_TUNING": "0"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "False"]


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


def test_blas_threads_change_no_vad_probability() -> None:
    """The Silero front's products give the same floats on one OpenBLAS thread as on four:
    threads split a product's rows and columns, never a sum."""
    library = _openblas()
    if library is None:
        pytest.skip("no OpenBLAS under numpy here")
    rng = np.random.default_rng(7)
    audio = Audio((0.1 * rng.standard_normal(16_000 * 30)).astype(np.float32), 16_000)
    vad = SileroVAD()
    try:
        _set_blas_threads(library, 4)
        threaded = vad.probabilities(audio)[0]
        _set_blas_threads(library, 1)
        single = vad.probabilities(audio)[0]
    finally:
        _set_blas_threads(library, 1)
    assert threaded.tobytes() == single.tobytes()
