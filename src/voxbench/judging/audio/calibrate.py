"""Agreement of a judge with a labelled set: accuracy, rank correlations with confidence
intervals, the confusion matrix, and test-retest agreement across samples.

A labelled set is a directory with ``manifest.yaml``::

    rubric: accent                      # optional: the rubric the labels are for
    options: {target_accent: british}   # optional: its parameters (-o overrides)
    items:
      - file: gb_1.wav
        expected: 5                     # one criterion: a score
      - file: us_1.wav
        expected: {accent: 1}           # or per criterion

For each criterion: ``accuracy`` (the judge's mean score rounded equals the label),
``within_one``, Spearman's ρ and Kendall's τ-b between labels and mean scores, each with a
95% bootstrap interval over files (``BOOTSTRAP``, seeded), the confusion matrix (label ×
rounded score), and with two samples or more the test-retest agreement: the share of
(file, sample pair) with the same score, and Spearman's ρ between the first two samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from voxbench.audio.wav import read_wav
from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import read_yaml
from voxbench.judging.audio.engine import ClipResult, RubricJudge
from voxbench.judging.audio.rubric import BoundRubric
from voxbench.judging.audio.segments import Clip, scoped_audio

BOOTSTRAP = 1000
SEED = 0


@dataclass
class LabelledItem:
    file: Path
    expected: dict[str, int]
    transcript: str | None = None


@dataclass
class LabelledSet:
    directory: Path
    items: list[LabelledItem]
    rubric: str | None = None
    options: dict[str, str] = field(default_factory=dict)


def load_labelled_set(directory: Path, bound: BoundRubric | None = None) -> LabelledSet:
    """Read ``DIR/manifest.yaml``; each problem names the file and the field."""
    manifest = directory / "manifest.yaml"
    if not manifest.is_file():
        raise ConfigError("no manifest.yaml in the labelled set", file=directory)
    data = read_yaml(manifest)
    if not isinstance(data, dict) or not isinstance(data.get("items"), list) or not data["items"]:
        raise ConfigError("no items", file=manifest, field="items", expected="a list of files")
    items = []
    for i, raw in enumerate(data["items"]):
        where = f"items[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("file"), str):
            raise ConfigError("needs file:", file=manifest, field=where)
        expected = raw.get("expected")
        if isinstance(expected, int) and not isinstance(expected, bool):
            if bound is not None and len(bound.criteria) != 1:
                raise ConfigError(
                    "one score for a rubric with several criteria",
                    file=manifest,
                    field=f"{where}.expected",
                    expected="{criterion: score, …}",
                )
            expected = {bound.criteria[0].name if bound else "score": expected}
        if not isinstance(expected, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in expected.values()
        ):
            raise ConfigError("not a score", file=manifest, field=f"{where}.expected",
                              expected="a whole number or {criterion: number}")  # fmt: skip
        path = directory / raw["file"]
        if not path.is_file():
            raise ConfigError("file not found", file=manifest, field=f"{where}.file")
        transcript = raw.get("transcript")
        items.append(LabelledItem(path, {str(k): int(v) for k, v in expected.items()}, transcript))
    options = {str(k): str(v) for k, v in (data.get("options") or {}).items()}
    return LabelledSet(directory, items, data.get("rubric"), options)


def _bootstrap(func: Any, x: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    rng = np.random.default_rng(SEED)
    values = []
    for _ in range(BOOTSTRAP):
        pick = rng.integers(0, len(x), len(x))
        a, b = x[pick], y[pick]
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            continue
        value = func(a, b)
        if not math.isnan(value):
            values.append(value)
    if len(values) < BOOTSTRAP // 2:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return round(float(low), 3), round(float(high), 3)


def _correlation(kind: str, x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    def func(a: np.ndarray, b: np.ndarray) -> float:
        result = stats.spearmanr(a, b) if kind == "spearman" else stats.kendalltau(a, b)
        return float(result.statistic)

    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"value": None, "ci95": None}
    return {"value": round(func(x, y), 3), "ci95": _bootstrap(func, x, y)}


def agreement(
    bound: BoundRubric, items: list[LabelledItem], results: list[ClipResult]
) -> dict[str, Any]:
    """The agreement statistics per criterion."""
    out: dict[str, Any] = {}
    for c in bound.criteria:
        pairs = [
            (item.expected[c.name], r.criteria[c.name])
            for item, r in zip(items, results, strict=True)
            if c.name in item.expected and r.criteria[c.name].mean is not None
        ]
        undecided = sum(
            1 for item, r in zip(items, results, strict=True)
            if c.name in item.expected and r.criteria[c.name].mean is None
        )  # fmt: skip
        labels = np.array([p[0] for p in pairs], dtype=float)
        means = np.array([p[1].mean for p in pairs], dtype=float)
        rounded = np.floor(means + 0.5)
        values = list(range(c.low, c.high + 1))
        matrix = [[int(np.sum((labels == e) & (rounded == j))) for j in values] for e in values]
        entry: dict[str, Any] = {
            "files": len(pairs),
            "undecided": undecided,
            "accuracy": round(float(np.mean(rounded == labels)), 3) if pairs else None,
            "within_one": round(float(np.mean(np.abs(rounded - labels) <= 1)), 3)
            if pairs
            else None,
            "spearman": _correlation("spearman", labels, means),
            "kendall": _correlation("kendall", labels, means),
            "confusion": {"scores": values, "rows_expected": matrix},
        }
        samples = [p[1].scores for p in pairs if len(p[1].scores) >= 2]
        if samples:
            same = total = 0
            for s in samples:
                for i in range(len(s)):
                    for j in range(i + 1, len(s)):
                        total += 1
                        same += s[i] == s[j]
            first = np.array([s[0] for s in samples])
            second = np.array([s[1] for s in samples])
            entry["test_retest"] = {
                "files": len(samples),
                "exact_agreement": round(same / total, 3),
                "spearman_first_two": _correlation("spearman", first, second)["value"],
                "mean_std": round(float(np.mean([np.std(s) for s in samples])), 3),
            }
        out[c.name] = entry
    return out


async def calibrate(judge: RubricJudge, labelled: LabelledSet) -> dict[str, Any]:
    """Judge every file of the set and measure the agreement with its labels."""
    scope = judge.bound.rubric.scope
    clips = [
        Clip(item.file.name, scoped_audio(read_wav(item.file), scope), item.transcript)
        for item in labelled.items
    ]
    results = await judge.judge_clips(clips)
    return {
        "rubric": judge.bound.name,
        "rubric_hash": judge.bound.digest(),
        "judge": judge.client.name,
        "endpoint": judge.endpoint,
        "samples": judge.samples,
        "set": str(labelled.directory),
        "calls": sum(r.calls for r in results),
        "from_cache": sum(r.from_cache for r in results),
        "criteria": agreement(judge.bound, labelled.items, results),
        "files": [
            {
                "file": item.file.name,
                "expected": item.expected,
                **{k: v.mean for k, v in r.criteria.items()},
            }
            for item, r in zip(labelled.items, results, strict=True)
        ],  # fmt: skip
    }


def render_calibration(report: dict[str, Any]) -> str:
    """The report as plain text for the terminal."""
    lines = [
        f"calibration of {report['judge']} on rubric {report['rubric']} "
        f"({report['rubric_hash']}), {report['samples']} sample(s) per file",
        f"labelled set: {report['set']}",
        f"{report.get('calls', 0)} calls made, {report.get('from_cache', 0)} from cache",
    ]
    for name, c in report["criteria"].items():

        def corr(key: str, c: dict[str, Any] = c) -> str:
            value, ci = c[key]["value"], c[key]["ci95"]
            if value is None:
                return "n/a"
            return f"{value:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")

        lines += [
            "",
            f"{name}: {c['files']} files judged, {c['undecided']} undecided",
            f"  accuracy {c['accuracy']}   within one {c['within_one']}",
            f"  Spearman rho {corr('spearman')}   Kendall tau-b {corr('kendall')}   (95% bootstrap CI)",
            "  confusion (rows: expected, columns: judged):",
            "         " + " ".join(f"{s:>4}" for s in c["confusion"]["scores"]),
        ]
        for expected, row in zip(
            c["confusion"]["scores"], c["confusion"]["rows_expected"], strict=True
        ):
            lines.append(f"    {expected:>4} " + " ".join(f"{n:>4}" for n in row))
        retest = c.get("test_retest")
        if retest:
            lines.append(
                f"  test-retest over {retest['files']} files: exact agreement "
                f"{retest['exact_agreement']}, Spearman (samples 1 vs 2) "
                f"{retest['spearman_first_two']}, mean std {retest['mean_std']}"
            )
    return "\n".join(lines)
