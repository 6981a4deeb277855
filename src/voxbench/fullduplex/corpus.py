"""Find Full-Duplex-Bench samples in a directory tree, whatever its layout.

A sample is a folder holding the user stream (``input.wav``) and, beside it, its
annotation: ``pause.json`` (pause handling), ``turn_taking.json`` (smooth turn-taking),
``interrupt.json`` (user interruption), a v1.5 ``metadata.json`` (overlap behaviour), or
nothing at all under a folder whose name says ``backchannel`` (the ICC subset). The tree
may be the v1.0 release (``v1_0/<subset>/<id>/``), the v1.5 one, a single subset, a single
sample, the public example layout (``*_example/1/``) or a driver's output directory.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from voxbench.fullduplex.annotations import (
    INTERRUPT_FILE,
    METADATA_FILE,
    PAUSE_FILE,
    TURN_TAKING_FILE,
)

log = logging.getLogger(__name__)

Category = Literal[
    "pause_handling", "smooth_turn_taking", "user_interruption", "backchannel", "behavior"
]
CATEGORIES: tuple[Category, ...] = (
    "pause_handling",
    "smooth_turn_taking",
    "user_interruption",
    "backchannel",
    "behavior",
)
"""``behavior`` is FDB v1.5: a speech overlap (interruption, backchannel, side talk, noise)."""

INPUT_WAV = "input.wav"
CLEAN_INPUT_WAV = "clean_input.wav"
OUTPUT_WAV = "output.wav"
OUTPUT_JSON = "output.json"
CLEAN_OUTPUT_WAV = "clean_output.wav"
CLEAN_OUTPUT_JSON = "clean_output.json"

_ANNOTATION_CATEGORY: tuple[tuple[str, Category], ...] = (
    (METADATA_FILE, "behavior"),
    (PAUSE_FILE, "pause_handling"),
    (TURN_TAKING_FILE, "smooth_turn_taking"),
    (INTERRUPT_FILE, "user_interruption"),
)
_SAMPLE_MARKERS = {INPUT_WAV, OUTPUT_WAV, OUTPUT_JSON, *(name for name, _ in _ANNOTATION_CATEGORY)}
DERIVED_DIR = "fdb_derived"
"""Files scoring computes from samples (transcripts, judge answers), mirroring their layout."""
_IGNORED_DIRS = {"__MACOSX", "__pycache__", DERIVED_DIR}


@dataclass(frozen=True)
class FdbSample:
    """One sample folder of the corpus (or of a driver's output, which mirrors it)."""

    path: Path
    root: Path
    category: Category
    subset: str
    """The folder holding the sample folders (``candor_pause_handling``, ...)."""
    sample_id: str
    """The sample folder's own name (``1``, ``10``)."""

    @property
    def relative(self) -> str:
        """The sample's path under the scanned root, with ``/`` separators."""
        rel = self.path.relative_to(self.root).as_posix()
        return rel if rel != "." else self.path.name

    @property
    def version(self) -> str:
        """``1.5`` for overlap-behaviour samples, else ``1.0``."""
        return "1.5" if self.category == "behavior" else "1.0"

    def file(self, name: str) -> Path:
        return self.path / name

    def has(self, name: str) -> bool:
        return (self.path / name).is_file()


@dataclass(frozen=True)
class SkippedSample:
    """A folder that looked like a sample but cannot be used, and why."""

    path: Path
    reason: str


@dataclass
class CorpusScan:
    """What a walk of a tree found."""

    root: Path
    samples: list[FdbSample]
    skipped: list[SkippedSample]

    def by_category(self) -> dict[str, list[FdbSample]]:
        groups: dict[str, list[FdbSample]] = {}
        for s in self.samples:
            groups.setdefault(s.category, []).append(s)
        return groups


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts ``2`` before ``10``."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.lower())
        for part in re.split(r"(\d+)", text)
        if part
    )


def _category_of(folder: Path, root: Path, names: set[str]) -> Category | None:
    for name, category in _ANNOTATION_CATEGORY:
        if name in names:
            return category
    # The ICC backchannel subset has no annotation file: its ground truth is one file for
    # the whole subset, so the folder name is the only thing that says what it is.
    parts = [root.name, *folder.relative_to(root).parts]
    if any("backchannel" in part.lower() for part in parts):
        return "backchannel"
    return None


def scan_corpus(root: str | Path, *, require: tuple[str, ...] = (INPUT_WAV,)) -> CorpusScan:
    """Every sample under ``root`` that has the files in ``require``, naturally sorted.

    Folders that look like samples but lack a required file or an annotation are returned
    in ``skipped`` with a reason, and logged as warnings naming them.
    """
    root = Path(root).resolve()
    samples: list[FdbSample] = []
    skipped: list[SkippedSample] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            (d for d in dirnames if not d.startswith(".") and d not in _IGNORED_DIRS),
            key=natural_key,
        )
        names = set(filenames)
        if not names & _SAMPLE_MARKERS:
            continue
        folder = Path(dirpath)
        # A sample folder has no sample folders inside; do not descend further.
        dirnames[:] = []
        category = _category_of(folder, root, names)
        if category is None:
            skipped.append(
                SkippedSample(
                    folder,
                    "no pause.json, turn_taking.json, interrupt.json or metadata.json, "
                    "and not under a backchannel folder",
                )
            )
            continue
        missing = [name for name in require if name not in names]
        if missing:
            skipped.append(SkippedSample(folder, f"{category} sample without {', '.join(missing)}"))
            continue
        subset = folder.parent.name if folder != root else root.parent.name
        samples.append(FdbSample(folder, root, category, subset, folder.name))
    samples.sort(key=lambda s: natural_key(s.relative))
    for item in skipped:
        log.warning("skipping %s: %s", item.path, item.reason)
    return CorpusScan(root, samples, skipped)


def find_upwards(start: Path, name: str, stop: Path) -> Path | None:
    """The first ``name`` in ``start`` or its parents, up to and including ``stop``'s parent."""
    stop = stop.resolve()
    limit = stop.parent
    current = start.resolve()
    while True:
        candidate = current / name
        if candidate.is_file():
            return candidate
        if current in (limit, current.parent):
            return None
        current = current.parent
