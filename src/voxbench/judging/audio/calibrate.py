"""``voxbench judge-audio calibrate``: a meta-evaluation of an audio judge against labels.

Every file of a labelled set (``labels``: a manifest, human ratings from a CSV, scores or
class labels) is judged, and the answers are measured against the labels per criterion
(``metaeval``: accuracy, within-one, Spearman, Cohen's κ and quadratic κ, Krippendorff's α,
with intervals; a constant-answer and a shuffled-label baseline with p-values; test-retest
with two samples or more; the human raters' agreement as the ceiling).

A judge can agree with labels without hearing anything — an always-3 judge on labels that
centre on 3, a judge that reads the transcript, one that goes by the clip's length. So,
unless ``controls=False``, the clips are judged again under **controls that must fail**:

- ``silence``: silence as long as the clip, without its transcript;
- ``shuffled_audio``: the clip's transcript with another clip's audio — the clip whose label
  is farthest in the set's order (files sorted by label, each given the audio of the file
  half the set further on, so a listening judge's score follows the other audio);
- ``transcript``: the transcript alone (silence as long as the clip) — only when the rubric
  sends a transcript and the set has some.

Each control counts the files on which the judge answered as it did with the real audio
(for ``shuffled_audio``, only files whose donor has another label). A judge is flagged
**does not listen** when it does so on ``SAME_AS_AUDIO`` of the files or more under any
control, or gives every file one answer although the labels differ. The ``verdict``:
``does not listen``; else ``no better than chance`` when a criterion's primary statistic
(quadratic κ, κ for classes) does not beat the shuffled labels (p ≥ ``CHANCE_P``); else
``listens`` (``passed``). A judge below the human ceiling gets a warning.

Two judges (``calibrate_judges``): each is calibrated, and their answers on the real clips
are compared (``metaeval.between``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from voxbench.audio.wav import Audio, read_wav
from voxbench.core.errors import ConfigError
from voxbench.judging.audio import metaeval
from voxbench.judging.audio.engine import ClipResult, RubricJudge
from voxbench.judging.audio.labels import LabelledItem, LabelledSet, load_labelled_set
from voxbench.judging.audio.rubric import BoundRubric, Criterion
from voxbench.judging.audio.segments import Clip, scoped_audio

__all__ = ["LabelledItem", "LabelledSet", "calibrate", "calibrate_judges", "load_labelled_set"]

SAME_AS_AUDIO = 0.8
"""The share of files answered as with the real audio from which a judge does not listen."""
CHANCE_P = 0.05
CONTROL_NAMES = {
    "silence": "the clips turned to silence",
    "shuffled_audio": "each clip with another clip's audio",
    "transcript": "the transcript alone",
}


def silence_of(audio: Audio) -> Audio:
    """Silence as long as ``audio``, at its rate (the control that must fail)."""
    return Audio(np.zeros(len(audio.samples), np.float32), audio.sample_rate)


def donors(items: list[LabelledItem], criterion: str) -> list[int]:
    """For each item, the item whose audio it gets in the shuffled-audio control: items
    sorted by label (class labels by name), each paired with the one half the set on."""

    def key(i: int) -> tuple[int, str]:
        label = items[i].expected.get(criterion, 0)
        return (label, "") if isinstance(label, int) else (0, label)

    order = sorted(range(len(items)), key=key)
    n = len(order)
    out = [0] * n
    for position, i in enumerate(order):
        out[i] = order[(position + max(1, n // 2)) % n]
    return out


def _answer(labelled: LabelledSet, c: Criterion, result: ClipResult) -> Any:
    """The judge's answer comparable to a label: its mean score rounded half up, or the
    class holding it (None: undecided)."""
    mean = result.criteria[c.name].mean
    if mean is None:
        return None
    score = int(np.floor(mean + 0.5))
    return labelled.class_of(score) if labelled.kind(c.name) == "class" else score


def _check_classes(labelled: LabelledSet, c: Criterion) -> None:
    uncovered = [s for s in range(c.low, c.high + 1) if labelled.class_of(s) is None]
    if uncovered:
        raise ConfigError(
            f"no class holds the score(s) {uncovered} of {c.name}'s scale {list(c.scale)}",
            file=labelled.directory / "manifest.yaml",
            field="classes",
            expected="class ranges covering the whole scale",
        )


def criterion_report(
    labelled: LabelledSet, c: Criterion, results: list[ClipResult]
) -> dict[str, Any]:
    """The statistics of one criterion (``metaeval``), with the ceiling and test-retest."""
    kind = labelled.kind(c.name)
    rows = [(item, r) for item, r in zip(labelled.items, results, strict=True)
            if c.name in item.expected]  # fmt: skip
    decided = [(item, r) for item, r in rows if r.criteria[c.name].mean is not None]
    if kind == "class":
        _check_classes(labelled, c)
        entry = metaeval.class_stats(
            [str(item.expected[c.name]) for item, _ in decided],
            [_answer(labelled, c, r) for _, r in decided],
            list(labelled.classes),
        )
    else:
        entry = metaeval.score_stats(
            np.array([item.expected[c.name] for item, _ in decided], dtype=float),
            np.array([r.criteria[c.name].mean for _, r in decided], dtype=float),
            c.scale,
        )
    entry["undecided"] = len(rows) - len(decided)
    retest = metaeval.test_retest([r.criteria[c.name].scores for _, r in decided])
    if retest:
        entry["test_retest"] = retest
    rated = [item for item, _ in rows if item.ratings.get(c.name)]
    if labelled.raters and rated:
        ratings = [
            [item.ratings.get(c.name, {}).get(rater) for rater in labelled.raters]
            for item, _ in rows
        ]
        level = "nominal" if kind == "class" else "ordinal"
        top = metaeval.ceiling(ratings, [_answer(labelled, c, r) for _, r in rows], level)
        if top:
            entry["ceiling"] = top
    return entry


def _controls(
    labelled: LabelledSet,
    bound: BoundRubric,
    results: list[ClipResult],
    controls: dict[str, list[ClipResult]],
    donor: list[int],
) -> tuple[dict[str, Any], list[str]]:
    """Each control per criterion, and the warnings of the ones a judge did not fail."""
    out: dict[str, Any] = {}
    warnings: list[str] = []
    for name, judged in controls.items():
        out[name] = {}
        for c in bound.criteria:
            real = [_answer(labelled, c, r) for r in results]
            control = [_answer(labelled, c, r) for r in judged]
            labels = [item.expected.get(c.name) for item in labelled.items]
            compared = [
                i for i in range(len(real))
                if real[i] is not None and control[i] is not None and labels[i] is not None
                and (name != "shuffled_audio" or labels[donor[i]] != labels[i])
            ]  # fmt: skip
            same = sum(real[i] == control[i] for i in compared)
            share = round(same / len(compared), 3) if compared else None
            entry: dict[str, Any] = {
                "files": len(compared),
                "same_as_audio": share,
                "accuracy": round(float(np.mean([control[i] == labels[i] for i in compared])), 3)
                if compared
                else None,
                "answers": control,
            }
            if name == "shuffled_audio":
                entry["donors"] = [labelled.items[d].file.name for d in donor]
                entry["follows_donor"] = (
                    round(float(np.mean([control[i] == real[donor[i]] for i in compared])), 3)
                    if compared
                    else None
                )
            out[name][c.name] = entry
            if share is not None and share >= SAME_AS_AUDIO:
                warnings.append(
                    f"{c.name}: does not listen — it judged {CONTROL_NAMES[name]} as it "
                    f"judged the real audio ({same} of {len(compared)} files the same)"
                )
    return out, warnings


def _verdict(
    labelled: LabelledSet, bound: BoundRubric, results: list[ClipResult],
    criteria: dict[str, Any], warnings: list[str],
) -> str:  # fmt: skip
    for c in bound.criteria:
        labels = {item.expected[c.name] for item in labelled.items if c.name in item.expected}
        answers = {a for a in (_answer(labelled, c, r) for r in results) if a is not None}
        decided = sum(r.criteria[c.name].mean is not None for r in results)
        if len(labels) > 1 and decided > 1 and len(answers) == 1:
            warnings.insert(0, f"{c.name}: does not listen — it gave every file {next(iter(answers))} "
                            f"although the labels differ ({', '.join(map(str, sorted(labels, key=str)))})")  # fmt: skip
    for name, entry in criteria.items():
        top = entry.get("ceiling")
        if top and top.get("reaches_ceiling") is False:
            warnings.append(
                f"{name}: below the human ceiling — α with the judge as one more rater "
                f"{top['alpha_with_judge']} against the raters' {top['alpha_raters']['value']} "
                f"(95% CI {top['alpha_raters']['ci95']})"
            )
    if any("does not listen" in w for w in warnings):
        return "does not listen"
    if any(
        (entry.get("baseline") or {}).get("p_value") is None
        or entry["baseline"]["p_value"] >= CHANCE_P
        for entry in criteria.values()
    ):
        warnings.append(
            "no better than chance: the judge's answers paired with shuffled labels agree as "
            f"well on some criterion (p ≥ {CHANCE_P})"
        )
        return "no better than chance"
    return "listens"


async def calibrate(
    judge: RubricJudge, labelled: LabelledSet, *, controls: bool = True
) -> dict[str, Any]:
    """Judge every file of the set, measure the agreement with its labels and, with
    ``controls``, judge the controls that must fail; the report says whether it listens."""
    bound = judge.bound
    items = labelled.items
    clips = [
        Clip(item.file.name, scoped_audio(read_wav(item.file), bound.rubric.scope), item.transcript)
        for item in items
    ]
    donor = donors(items, bound.criteria[0].name)
    extra: dict[str, list[Clip]] = {}
    if controls:
        extra["silence"] = [Clip(f"silence · {c.label}", silence_of(c.audio)) for c in clips]
        extra["shuffled_audio"] = [
            Clip(
                f"audio of {clips[donor[i]].label} · {c.label}", clips[donor[i]].audio, c.transcript
            )
            for i, c in enumerate(clips)
        ]
        if bound.rubric.needs_transcript and any(c.transcript for c in clips):
            extra["transcript"] = [
                Clip(f"transcript only · {c.label}", silence_of(c.audio), c.transcript)
                for c in clips
            ]
    # The real clips first: a control that is the same request as a real clip (another
    # clip's audio, no transcript) is then served from the cache, never asked twice.
    results = await judge.judge_clips(clips)
    everything = results + await judge.judge_clips([c for group in extra.values() for c in group])
    judged: dict[str, list[ClipResult]] = {}
    start = len(clips)
    for name in extra:
        judged[name] = everything[start : start + len(clips)]
        start += len(clips)
    criteria = {c.name: criterion_report(labelled, c, results) for c in bound.criteria}
    checks, warnings = _controls(labelled, bound, results, judged, donor)
    verdict = _verdict(labelled, bound, results, criteria, warnings)
    return {
        "verdict": verdict,
        "passed": verdict == "listens",
        "warnings": warnings,
        "controls": checks,
        "rubric": bound.name,
        "rubric_hash": bound.digest(),
        "judge": judge.client.name,
        "endpoint": judge.endpoint,
        "samples": judge.samples,
        "set": str(labelled.directory),
        "raters": labelled.raters,
        "classes": {k: list(v) for k, v in labelled.classes.items()},
        "calls": sum(r.calls for r in everything),
        "from_cache": sum(r.from_cache for r in everything),
        "criteria": criteria,
        "files": [
            {
                "file": item.file.name,
                "expected": item.expected,
                **{k: v.mean for k, v in r.criteria.items()},
                "answers": {c.name: _answer(labelled, c, r) for c in bound.criteria},
            }
            for item, r in zip(items, results, strict=True)
        ],
    }


async def calibrate_judges(
    judges: list[RubricJudge], labelled: LabelledSet, *, controls: bool = True
) -> dict[str, Any]:
    """One judge: its report. Two or more: each judge's report, and the agreement of each
    pair of judges on the real clips; the verdict is each judge's."""
    reports = [await calibrate(j, labelled, controls=controls) for j in judges]
    if len(reports) == 1:
        return reports[0]
    bound = judges[0].bound
    pairs = []
    for a in range(len(reports)):
        for b in range(a + 1, len(reports)):
            per_criterion = {
                c.name: metaeval.between(
                    [f["answers"][c.name] for f in reports[a]["files"]],
                    [f["answers"][c.name] for f in reports[b]["files"]],
                    labelled.kind(c.name),
                    c.scale,
                    list(labelled.classes),
                )
                for c in bound.criteria
            }
            pairs.append({"judges": [a, b], "criteria": per_criterion})
    return {
        "verdict": "; ".join(f"{r['judge']}: {r['verdict']}" for r in reports),
        "passed": all(r["passed"] for r in reports),
        "judges": reports,
        "between_judges": pairs,
        "rubric": bound.name,
        "set": str(labelled.directory),
        "calls": sum(r["calls"] for r in reports),
        "from_cache": sum(r["from_cache"] for r in reports),
    }
