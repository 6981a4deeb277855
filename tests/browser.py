"""Debian's chromium for the browser tests (Playwright drives it; no browser download).

A test that needs it calls ``chromium()``, which skips with the reason where none is
installed (``.ci/run`` installs one); ``VOXBENCH_CHROMIUM`` names another binary.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM_ENV = "VOXBENCH_CHROMIUM"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # This machine's network is closed: without these, chromium's own background
    # connections fail by the dozen and fill the console.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]


def chromium() -> str:
    """The chromium binary to drive, or a skip saying how to get one."""
    found = os.environ.get(CHROMIUM_ENV) or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(found).is_file():
        pytest.skip(f"no chromium browser (apt-get install chromium, or set {CHROMIUM_ENV})")
    return found
