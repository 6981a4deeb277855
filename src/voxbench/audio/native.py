"""Process-wide settings of the native libraries under the local speech models.

Both change how fast a result comes, never the result: the demo's transcripts, verdicts and
recordings are identical with and without them (``bench/demo_identity.py``). Each is set
once per process, by the first local model that needs it; on a platform without the library
it does nothing.

**glibc's malloc** (``keep_large_buffers``) serves a block above its mmap threshold (128 KiB,
rising with use to at most 32 MiB) with a fresh ``mmap`` and unmaps it when freed, and gives a
heap's free top back to the kernel past its trim threshold. Local Whisper allocates and frees
blocks of tens of MiB per clip (its encoder over the 30 s window: one layer's attention
scores alone are 6 heads x 1500 x 1500 floats, 54 MiB), so every clip page-faulted ~60,000
freshly zeroed pages: ~150 ms of system time on a ~1.1 s transcription, and in ``voxbench
demo`` (225 transcriptions) 14 million page faults, ~40 s of its ~45 s of system time. Both
thresholds raised to ``KEEP_BYTES``, such blocks come from the heap and go back to it, reused
by the next clip without a fault (~3,000 faults per clip remain); peak memory grows by a few
tens of MiB (what stays in the heap between clips).

**numpy's OpenBLAS** (``one_blas_thread``) starts a thread per core for a large enough matrix
product, and its threads spin while they wait for work. The Silero front's products
(``audio.silero_encoder``) are ~100 MFLOP each and run from several threads at once (two
channels of a recording, two runs side by side, beside Whisper), so the extra threads only
contend for the same cores: on 2 cores, two 10-minute channels at once took 1.8-2.1 s of CPU
(user and system) with OpenBLAS's default threads and 0.9-1.1 s on one, in half the wall time,
the probabilities bit for bit the same (a product's threads split its rows and columns, never
a dot product).

Together, in ``voxbench demo`` cold on 2 cores (alternating with the code before, load ~2-2.5):
CPU 314 -> 263 s, system time ~40 -> 7-13 s, wall clock 165 -> 141 s (medians of 5 and 4
runs); peak memory 1.9 -> 1.9-2.1 GiB.
"""

from __future__ import annotations

import ctypes
import os
from functools import cache
from pathlib import Path

KEEP_BYTES = 256 * 1024 * 1024
"""Blocks up to this size come from the heap, and this much free memory may stay at a heap's
top: above Whisper tiny's largest blocks (54 MiB); 32 MiB (glibc's dynamic ceiling) leaves
most of the faults (~55,000 a clip)."""
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
"""``mallopt`` parameter numbers (glibc's ``malloc.h``)."""
_OPENBLAS_SETTERS = (
    "scipy_openblas_set_num_threads64_",  # numpy's wheels: scipy-openblas, 64-bit ints
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)
"""What OpenBLAS's ``set_num_threads`` is called in the builds numpy ships or links."""
OPT_OUT = "VOXBENCH_NATIVE_TUNING"
"""``0`` (or ``false``, ``no``, ``off``) leaves malloc and OpenBLAS as they are."""


def _tuning_wanted() -> bool:
    return os.environ.get(OPT_OUT, "1").strip().lower() not in ("0", "false", "no", "off")


@cache
def keep_large_buffers() -> bool:
    """Raise glibc's mmap and trim thresholds to ``KEEP_BYTES`` (once per process); returns
    whether both were set (False on another C library, or opted out: ``OPT_OUT``)."""
    if not _tuning_wanted():
        return False
    try:
        version = os.confstr("CS_GNU_LIBC_VERSION")  # None where the name has no value
        if version is None or not version.startswith("glibc"):
            return False
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (ValueError, OSError, AttributeError):  # no such name: not glibc (or not Unix)
        return False
    # The mmap threshold first: setting it also stops glibc from moving either threshold.
    return bool(mallopt(_M_MMAP_THRESHOLD, KEEP_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, KEEP_BYTES)
    )


@cache
def one_blas_thread() -> bool:
    """Every OpenBLAS loaded in this process (numpy's) on one thread (once per process);
    returns whether one was found. Linux only: it finds them in ``/proc/self/maps``. Opted
    out (``OPT_OUT``): nothing is changed."""
    if not _tuning_wanted():
        return False
    import numpy  # noqa: F401 - its OpenBLAS must be loaded to be found

    found = False
    for path in _loaded_libraries():
        if "openblas" not in path.name.lower():
            continue
        library = ctypes.CDLL(str(path))  # the loaded copy: dlopen hands back its handle
        setter = next((getattr(library, n) for n in _OPENBLAS_SETTERS if hasattr(library, n)), None)
        if setter is not None:
            setter(1)
            found = True
    return found


def _loaded_libraries() -> list[Path]:
    """The shared libraries mapped into this process (none where there is no ``/proc``)."""
    try:
        maps = Path("/proc/self/maps").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    fields = (line.split(maxsplit=5) for line in maps.splitlines())
    paths = {f[5] for f in fields if len(f) == 6 and f[5].startswith("/") and ".so" in f[5]}
    return sorted(Path(p) for p in paths)
