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

A judge can agree with labels without hearing anything (an always-3 judge on a set whose
labels centre on 3). So each criterion also gets the accuracy's 95% Wilson interval and a
**chance baseline**: the best constant answer's accuracy (the majority label), and the
accuracy of the judged scores shuffled across files (``SHUFFLES``, seeded) with the share of
shuffles doing as well — a p-value. And a **control that must fail**, unless
``controls=False``: every clip judged again as silence of the same length (same transcript).
A judge is flagged **does not listen** when it gives every file the same score although the
labels differ, or when it scores the silent clips as it scored the real ones (the same
rounded score on ``SAME_ON_SILENCE`` of the files or more). The report's ``verdict`` is
``does not listen``, ``no better than chance`` (p ≥ 0.05), or ``listens``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from voxbench.audio.wav import Audio, read_wav
from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import read_yaml
from voxbench.judging.audio.engine import ClipResult, RubricJudge
from voxbench.judging.audio.rubric import BoundRubric
from voxbench.judging.audio.segments import Clip, scoped_audio

BOOTSTRAP = 1000
SEED = 0
SHUFFLES = 2000
SAME_ON_SILENCE = 0.8
"""The share of files scored the same on silence from which a judge does not listen."""
CHANCE_P = 0.05


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
            "accuracy_ci95": wilson(int(np.sum(rounded == labels)), len(pairs)),
            "baseline": chance_baseline(labels, rounded),
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


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The 95% Wilson score interval of a proportion."""
    if n == 0:
        return None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(max(0.0, centre - half), 3), round(min(1.0, centre + half), 3)


def chance_baseline(labels: np.ndarray, rounded: np.ndarray) -> dict[str, Any]:
    """The best constant answer's accuracy, and the judged scores shuffled across files: the
    mean accuracy of the shuffles and the share doing at least as well as the judge."""
    if len(labels) == 0:
        return {"majority_accuracy": None, "shuffled_accuracy": None, "p_value": None}
    values, counts = np.unique(labels, return_counts=True)
    observed = float(np.mean(rounded == labels))
    rng = np.random.default_rng(SEED)
    shuffled = np.array([np.mean(rng.permutation(rounded) == labels) for _ in range(SHUFFLES)])
    return {
        "majority_accuracy": round(float(counts.max() / len(labels)), 3),
        "majority_label": int(values[counts.argmax()]),
        "shuffled_accuracy": round(float(shuffled.mean()), 3),
        "p_value": round(float((1 + np.sum(shuffled >= observed - 1e-12)) / (1 + SHUFFLES)), 4),
    }


def silence_of(audio: Audio) -> Audio:
    """Silence as long as ``audio``, at its rate (the control that must fail)."""
    return Audio(np.zeros(len(audio.samples), np.float32), audio.sample_rate)


def _listening(
    bound: BoundRubric,
    items: list[LabelledItem],
    results: list[ClipResult],
    silent: list[ClipResult] | None,
    criteria: dict[str, Any],
) -> tuple[dict[str, Any], list[str], str]:
    """The silence control per criterion, the warnings, and the verdict."""
    controls: dict[str, Any] = {}
    warnings: list[str] = []
    for c in bound.criteria:
        labels = [item.expected[c.name] for item in items if c.name in item.expected]
        means = [r.criteria[c.name].mean for r in results]
        decided = [m for m in means if m is not None]
        if len(set(labels)) > 1 and len(decided) > 1 and len(set(decided)) == 1:
            warnings.append(
                f"{c.name}: does not listen — it gave every file {decided[0]:g} although the "
                f"labels range from {min(labels)} to {max(labels)}"
            )
        if silent is None:
            continue
        pairs = [
            (real, quiet.criteria[c.name].mean)
            for real, quiet in zip(means, silent, strict=True)
            if real is not None and quiet.criteria[c.name].mean is not None
        ]
        same = sum(math.floor(a + 0.5) == math.floor(b + 0.5) for a, b in pairs)
        share = round(same / len(pairs), 3) if pairs else None
        controls[c.name] = {
            "files": len(pairs),
            "same_as_audio": share,
            "silent_scores": [q.criteria[c.name].mean for q in silent],
        }
        if share is not None and share >= SAME_ON_SILENCE:
            warnings.append(
                f"{c.name}: does not listen — it scored the clips turned to silence as it "
                f"scored the real audio ({same} of {len(pairs)} files the same)"
            )
    if any("does not listen" in w for w in warnings):
        verdict = "does not listen"
    elif any(
        (entry.get("baseline") or {}).get("p_value") is None
        or entry["baseline"]["p_value"] >= CHANCE_P
        for entry in criteria.values()
    ):
        verdict = "no better than chance"
        warnings.append(
            "no better than chance: a shuffled judge does as well on some criterion "
            f"(p ≥ {CHANCE_P})"
        )
    else:
        verdict = "listens"
    return controls, warnings, verdict


async def calibrate(
    judge: RubricJudge, labelled: LabelledSet, *, controls: bool = True
) -> dict[str, Any]:
    """Judge every file of the set and measure the agreement with its labels; with
    ``controls``, judge each clip again as silence and say whether the judge listens."""
    scope = judge.bound.rubric.scope
    clips = [
        Clip(item.file.name, scoped_audio(read_wav(item.file), scope), item.transcript)
        for item in labelled.items
    ]
    quiet = [Clip(f"silent {c.label}", silence_of(c.audio), c.transcript) for c in clips]
    everything = await judge.judge_clips(clips + quiet if controls else clips)
    results, silent = everything[: len(clips)], (everything[len(clips) :] if controls else None)
    criteria = agreement(judge.bound, labelled.items, results)
    checks, warnings, verdict = _listening(judge.bound, labelled.items, results, silent, criteria)
    return {
        "verdict": verdict,
        "warnings": warnings,
        "controls": {"silence": checks} if controls else {},
        "rubric": judge.bound.name,
        "rubric_hash": judge.bound.digest(),
        "judge": judge.client.name,
        "endpoint": judge.endpoint,
        "samples": judge.samples,
        "set": str(labelled.directory),
        "calls": sum(r.calls for r in everything),
        "from_cache": sum(r.from_cache for r in everything),
        "criteria": criteria,
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
            f"  accuracy {c['accuracy']}{_interval(c.get('accuracy_ci95'))}   "
            f"within one {c['within_one']}",
            _baseline_line(c.get("baseline") or {}),
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
    silence = (report.get("controls") or {}).get("silence") or {}
    for name, control in silence.items():
        share = control["same_as_audio"]
        shown = "n/a" if share is None else f"{100 * share:.0f}%"
        lines.append(
            f"silence control, {name}: the same score as the real audio on {shown} of "
            f"{control['files']} files (a judge that listens: low)"
        )
    lines.append("")
    for warning in report.get("warnings", []):
        lines.append(f"WARNING: {warning}")
    if "verdict" in report:
        lines.append(f"verdict: {report['verdict']}")
    return "\n".join(lines)


def _interval(ci: Any) -> str:
    return f" [{ci[0]}, {ci[1]}]" if ci else ""


def _baseline_line(b: dict[str, Any]) -> str:
    if b.get("majority_accuracy") is None:
        return "  chance: n/a"
    return (
        f"  chance: always {b['majority_label']} scores {b['majority_accuracy']}, shuffled "
        f"scores {b['shuffled_accuracy']} (p = {b['p_value']})"
    )
