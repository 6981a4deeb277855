"""A benchmark is read once per process while its files stay as they are."""

from __future__ import annotations

import shutil
from pathlib import Path

from voxbench.benchmarks.loader import BUILTIN_DIR, load_benchmark


def test_a_second_load_is_an_equal_copy_and_a_changed_file_is_read_again(tmp_path: Path) -> None:
    package = Path(shutil.copytree(BUILTIN_DIR / "smoke", tmp_path / "smoke"))
    first = load_benchmark(package)
    second = load_benchmark(package)
    assert second == first and second is not first
    kb = package / "knowledge_base.md"
    kb.write_text(kb.read_text(encoding="utf-8") + "\nDoors close at 18:00.\n", encoding="utf-8")
    changed = load_benchmark(package)
    assert changed.content_hash != first.content_hash
