"""The labels a judge is calibrated against: a labelled set's ``manifest.yaml``, human
ratings from a CSV, scores or class labels.

A labelled set is a directory with ``manifest.yaml``::

    rubric: accent                      # optional: the rubric the labels are for
    options: {target_accent: british}   # optional: its parameters (-o overrides)
    classes: {british: [4, 5], other: [1, 3]}   # optional: class labels → scale ranges
    items:
      - file: gb_1.wav
        expected: 5                     # one criterion: a score
        transcript: ...                 # optional: sent when the rubric asks for it
      - file: us_1.wav
        expected: {accent: other}       # or per criterion; a class label names a class

**Class labels.** A label that is a word names a class of ``classes:``; each class covers a
score or a range of the criterion's scale, and a judged score counts as the class whose range
holds it. A criterion is judged as classes (nominal statistics) when its labels are words, as
scores (ordinal and interval statistics) when they are numbers — never both.

**Human ratings** (``labels.csv``, columns ``clip,criterion,label,rater``): several raters
per clip; ``criterion`` may be empty for a one-criterion rubric. Each clip's reference label
is the raters' median (rounded half up) for scores, their most frequent class for classes
(a tie goes to the class named first in ``classes:``). The ratings themselves are kept
(``LabelledItem.ratings``): their agreement among raters is the ceiling a judge is measured
against. With a CSV, ``manifest.yaml`` is optional (it still gives transcripts, options and
classes); every clip must be a file of the directory.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import read_yaml
from voxbench.judging.audio.rubric import BoundRubric

Label = int | str
CSV_COLUMNS = ("clip", "criterion", "label", "rater")


@dataclass
class LabelledItem:
    file: Path
    expected: dict[str, Label]
    transcript: str | None = None
    ratings: dict[str, dict[str, Label]] = field(default_factory=dict)
    """Per criterion, each human rater's label (from a CSV)."""


@dataclass
class LabelledSet:
    directory: Path
    items: list[LabelledItem]
    rubric: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    classes: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Class label → the (low, high) scores of the scale it covers."""
    raters: list[str] = field(default_factory=list)

    def kind(self, criterion: str) -> str:
        """``class`` when the criterion's labels are class names, else ``score``."""
        labels = [i.expected[criterion] for i in self.items if criterion in i.expected]
        return "class" if any(isinstance(v, str) for v in labels) else "score"

    def class_of(self, score: int) -> str | None:
        """The class whose range holds ``score`` (None: no class does)."""
        for name, (low, high) in self.classes.items():
            if low <= score <= high:
                return name
        return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _classes(raw: Any, manifest: Path) -> dict[str, tuple[int, int]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError("not a mapping", file=manifest, field="classes",
                          expected="{label: score or [low, high], …}")  # fmt: skip
    out: dict[str, tuple[int, int]] = {}
    for name, span in raw.items():
        if _is_int(span):
            span = [span, span]
        if not (isinstance(span, list) and len(span) == 2 and all(map(_is_int, span))
                and span[0] <= span[1]):  # fmt: skip
            raise ConfigError("not a score range", file=manifest, field=f"classes.{name}",
                              expected="a score or [low, high]")  # fmt: skip
        out[str(name)] = (span[0], span[1])
    return out


def parse_classes(values: list[str] | None) -> dict[str, tuple[int, int]]:
    """``--class NAME=LOW-HIGH`` (or ``NAME=SCORE``), repeated."""
    out: dict[str, tuple[int, int]] = {}
    for value in values or []:
        name, _, span = value.partition("=")
        low, _, high = span.partition("-")
        try:
            out[name.strip()] = (int(low), int(high or low))
        except ValueError:
            raise ConfigError(f"{value!r} is not NAME=LOW-HIGH", field="--class",
                              expected="e.g. british=4-5") from None  # fmt: skip
    return out


def _criterion_name(bound: BoundRubric | None) -> str:
    return bound.criteria[0].name if bound else "score"


def _expected(raw: Any, where: str, manifest: Path, bound: BoundRubric | None,
              classes: dict[str, tuple[int, int]]) -> dict[str, Label]:  # fmt: skip
    if _is_int(raw) or isinstance(raw, str):
        if bound is not None and len(bound.criteria) != 1:
            raise ConfigError("one label for a rubric with several criteria", file=manifest,
                              field=f"{where}.expected", expected="{criterion: label, …}")  # fmt: skip
        raw = {_criterion_name(bound): raw}
    if not isinstance(raw, dict) or not all(_is_int(v) or isinstance(v, str) for v in raw.values()):
        raise ConfigError("not a label", file=manifest, field=f"{where}.expected",
                          expected="a whole number, a class, or {criterion: label}")  # fmt: skip
    for name, value in raw.items():
        if isinstance(value, str) and value not in classes:
            raise ConfigError(f"class {value!r} is not declared", file=manifest,
                              field=f"{where}.expected.{name}",
                              expected="a whole number or one of classes: "
                              + (", ".join(classes) or "(none declared)"))  # fmt: skip
    return {str(k): v for k, v in raw.items()}


def load_labelled_set(
    directory: Path,
    bound: BoundRubric | None = None,
    *,
    labels_csv: Path | None = None,
    classes: dict[str, tuple[int, int]] | None = None,
) -> LabelledSet:
    """Read ``DIR/manifest.yaml`` and, with ``labels_csv``, the human ratings; each problem
    names the file and the field (or the CSV line)."""
    manifest = directory / "manifest.yaml"
    data: dict[str, Any] = {}
    if manifest.is_file():
        data = read_yaml(manifest)
        if not isinstance(data, dict):
            raise ConfigError("not a mapping", file=manifest, expected="rubric, options, items")
    elif labels_csv is None:
        raise ConfigError("no manifest.yaml in the labelled set", file=directory)
    known = {**_classes(data.get("classes"), manifest), **(classes or {})}
    raw_items = data.get("items")
    if labels_csv is None and (not isinstance(raw_items, list) or not raw_items):
        raise ConfigError("no items", file=manifest, field="items", expected="a list of files")
    items: list[LabelledItem] = []
    for i, raw in enumerate(raw_items or []):
        where = f"items[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("file"), str):
            raise ConfigError("needs file:", file=manifest, field=where)
        path = directory / raw["file"]
        if not path.is_file():
            raise ConfigError("file not found", file=manifest, field=f"{where}.file")
        expected = (
            {} if labels_csv is not None and "expected" not in raw
            else _expected(raw.get("expected"), where, manifest, bound, known)
        )  # fmt: skip
        items.append(LabelledItem(path, expected, raw.get("transcript")))
    options = {str(k): str(v) for k, v in (data.get("options") or {}).items()}
    labelled = LabelledSet(directory, items, data.get("rubric"), options, known)
    if labels_csv is not None:
        _read_ratings(labelled, labels_csv, bound)
    for criterion in {k for item in labelled.items for k in item.expected}:
        kinds = {type(i.expected[criterion]) for i in labelled.items if criterion in i.expected}
        if len(kinds) > 1:
            raise ConfigError(f"{criterion}: some labels are scores, some classes",
                              file=labels_csv or manifest, field="expected",
                              expected="all scores or all classes per criterion")  # fmt: skip
    return labelled


def _read_ratings(labelled: LabelledSet, path: Path, bound: BoundRubric | None) -> None:
    """Add the CSV's ratings to the set and set each rated clip's label to their consensus."""
    if not path.is_file():
        raise ConfigError("file not found", file=path, field="--labels")
    by_file = {item.file.name: item for item in labelled.items}
    raters: list[str] = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(f"missing column(s) {', '.join(missing)}", file=path,
                              field="header", expected=",".join(CSV_COLUMNS))  # fmt: skip
        for row in reader:
            line = f"line {reader.line_num}"
            clip, rater = (row["clip"] or "").strip(), (row["rater"] or "").strip()
            criterion = (row["criterion"] or "").strip() or _criterion_name(bound)
            text = (row["label"] or "").strip()
            if not clip or not rater or not text:
                raise ConfigError("clip, label and rater are required", file=path, field=line)
            if bound is not None and criterion not in {c.name for c in bound.criteria}:
                raise ConfigError(f"unknown criterion {criterion!r}", file=path, field=line,
                                  expected=", ".join(c.name for c in bound.criteria))  # fmt: skip
            label: Label = int(text) if text.lstrip("-").isdigit() else text
            if isinstance(label, str) and label not in labelled.classes:
                raise ConfigError(f"class {label!r} is not declared", file=path, field=line,
                                  expected="a whole number, or a class of --class / classes:")  # fmt: skip
            item = by_file.get(clip)
            if item is None:
                if not (labelled.directory / clip).is_file():
                    raise ConfigError(f"clip {clip!r} not found in {labelled.directory}",
                                      file=path, field=line)  # fmt: skip
                item = by_file[clip] = LabelledItem(labelled.directory / clip, {})
                labelled.items.append(item)
            item.ratings.setdefault(criterion, {})[rater] = label
            if rater not in raters:
                raters.append(rater)
    order = list(labelled.classes)
    for item in labelled.items:
        for criterion, given in item.ratings.items():
            values = list(given.values())
            if all(_is_int(v) for v in values):
                ints = cast(list[int], values)  # every value is an int (checked just above)
                median = sorted(ints)[len(values) // 2] if len(values) % 2 else (
                    sorted(ints)[len(values) // 2 - 1] + sorted(ints)[len(values) // 2]
                ) / 2  # fmt: skip
                item.expected[criterion] = math.floor(median + 0.5)
            elif all(isinstance(v, str) for v in values):
                counts = Counter(values)
                top = max(counts.values())
                item.expected[criterion] = next(c for c in order if counts.get(c) == top)
            else:
                raise ConfigError(f"{item.file.name}: both scores and classes for {criterion}",
                                  file=path, field="label")  # fmt: skip
    labelled.items = [item for item in labelled.items if item.expected]
    labelled.raters = raters
    if not labelled.items:
        raise ConfigError("no labelled clips", file=path)
