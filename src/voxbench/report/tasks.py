"""The tasks × models table, as markdown (``report.md``) and as rows for the terminal, read
from the typed results (``core.results.TaskScores``)."""

from __future__ import annotations

from typing import Any

from voxbench.core.results import (
    AggregateScore,
    MetricScore,
    TaskAggregate,
    TaskRunInfo,
    TaskScores,
)

_COUNTS = (
    ("unparsable", "unparsable predictions"),
    ("unparsable_references", "unparsable references"),
    ("gold_errors", "failing gold queries"),
    ("prompts_unchecked", "with unchecked instructions"),
)


def cell(metric: MetricScore) -> str:
    """``12.34 [10.1, 14.2]`` (or ``–`` without a value)."""
    if metric.value is None:
        return "–"
    ci = metric.ci
    return f"{metric.value:.2f} [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else f"{metric.value:.2f}"


def table_rows(scores: TaskScores, models: list[str]) -> list[list[str]]:
    """One row per (task, metric): the task, the metric (↑/↓), then each model's cell with n."""
    rows = []
    for task, by_model in scores.tasks.items():
        first_model = next(iter(by_model.values()))
        for metric, first in first_model.metrics.items():
            arrow = "↑" if first.higher_is_better else "↓"
            row = [task, f"{metric} {arrow}"]
            for model in models:
                entry = by_model.get(model)
                if entry is None:
                    row.append("")
                    continue
                stats = entry.metrics[metric]
                text = f"{cell(stats)} n={stats.n}"
                if stats.percent is not None:  # a 0–5 judge score, also as %
                    text = f"{cell(stats)} (= {stats.percent:.1f}%) n={stats.n}"
                flags = [
                    f"{count} {name}"
                    for name, count in (
                        ("errors", entry.errors),
                        ("empties", entry.empties),
                        ("missing", entry.missing),
                    )
                    if count
                ]
                if stats.undecided:
                    flags.append(f"{stats.undecided} undecided")
                if stats.no_audio:
                    flags.append(f"{stats.no_audio} without audio")
                for key, label in _COUNTS:
                    if getattr(stats, key):
                        flags.append(f"{getattr(stats, key)} {label}")
                row.append(text + (f" ({', '.join(flags)})" if flags else ""))
            rows.append(row)
    for name, agg in scores.aggregates.items():
        arrow = "↑" if agg.higher_is_better else "↓"
        row = [f"[{name}]", f"{agg.metric} {arrow}"]
        for model in models:
            row.append(aggregate_cell(agg, agg.models.get(model)))
        rows.append(row)
    return rows


def aggregate_cell(agg: TaskAggregate, entry: AggregateScore | None) -> str:
    """``12.34 (2/3 tasks, n=40, 1 errors)``: the value and what went into it."""
    if entry is None or entry.value is None:
        return "–"
    flags = [f"{len(entry.tasks)}/{len(agg.weights)} tasks", f"n={entry.n}"]
    counts = (("errors", entry.errors), ("undecided", entry.undecided), ("missing", entry.missing))
    flags += [f"{count} {name}" for name, count in counts if count]
    return f"{entry.value:.2f} ({', '.join(flags)})"


def aggregate_details(scores: TaskScores) -> list[str]:
    """Per aggregate and model: each task's weight, value and records, and what was left out."""
    out: list[str] = []
    for name, agg in scores.aggregates.items():
        out += [f"\n### Aggregate {name} ({agg.metric})\n", f"{agg.rule}.\n"]
        for model, entry in agg.models.items():
            out += [f"{model}: {'–' if entry.value is None else entry.value}\n",
                    "| task | weight | value | n | errors | undecided |",
                    "|---|---|---|---|---|---|"]  # fmt: skip
            out += [
                f"| {t} | {v['weight']:g} | {v['value']} | {v['n']} | {v['errors']} | "
                f"{v['undecided']} |"
                for t, v in entry.tasks.items()
            ]
            out += [f"| {t} | {agg.weights[t]:g} | left out: {why} | | | |"
                    for t, why in entry.excluded.items()]  # fmt: skip
    return out


def metric_notes(scores: TaskScores) -> list[str]:
    """What the metrics that depend on this machine used: METEOR's stages, BERTScore's model."""
    meteor_stages: set[str] = set()
    bert: dict[str, Any] | None = None
    for by_model in scores.tasks.values():
        for entry in by_model.values():
            found = entry.metrics.get("meteor")
            if found and found.stages:
                meteor_stages.update(found.stages.split(", "))
            bertscore = entry.metrics.get("bertscore")
            bert = (bertscore.model_extra or {}) if bertscore is not None else bert
    notes = []
    if meteor_stages:
        synonyms = any("synonym" in s for s in meteor_stages)
        notes.append(
            "METEOR stages: " + ", ".join(sorted(meteor_stages)) + "."
            + ("" if synonyms else " METEOR without synonyms (no local WordNet): it is "
               "meteor_nosyn, not comparable with nltk's meteor_score with WordNet.")
        )  # fmt: skip
    if bert:
        notes.append(
            f"BERTScore: model `{bert.get('model')}`, layer {bert.get('layer')}, "
            f"{'rescaled with baseline' if bert.get('rescaled_with_baseline') else 'no baseline rescaling'}."
        )
    return ["", *notes] if notes else []


def markdown_report(info: TaskRunInfo, scores: TaskScores) -> str:
    """``report.md``: what was run, the table, and per-field function-call accuracy."""
    models = [m.name for m in info.models]
    extra = info.model_extra or {}
    lines = [
        f"# Audio tasks run {info.id}",
        "",
        f"Started {info.started}; seed {info.seed}; status {info.status}.",
        *_perturbed_line(info.perturbations),
        "",
        "Models: " + ", ".join(f"`{m.name}` ({m.model}, {m.api})" for m in info.models),
        *_judge_line(extra.get("judge")),
        *_audio_judge_line(extra.get("audio_judge")),
        "",
        "Values are on a 0–100 scale with a 95% interval; n counts scored records. "
        "Yes/no rates (accuracy, exact match, function-call, SQL execution and numeric match, "
        "refusal, IFEval, the judge's verdicts) have a Wilson score interval, clustered by "
        "record where a record gives several outcomes; the other metrics a percentile "
        "bootstrap over records (none shown when every record scores the same). "
        "scores.json names each metric's (`interval`). "
        "Errors (failed after retries) are not scored; empties are scored replies with no text; "
        "undecided records (the judge gave no usable verdict) are left out of judge metrics. "
        "llm_judge_detailed is on 0–5 (its % beside it). An aggregate [in brackets] is the "
        "weighted mean of its tasks' values; its cell says how many tasks and records it holds.",
        *metric_notes(scores),
        "",
        "| task | metric | " + " | ".join(models) + " |",
        "|---|---|" + "---|" * len(models),
    ]
    for row in table_rows(scores, models):
        lines.append("| " + " | ".join(row) + " |")
    details = []
    for task, by_model in scores.tasks.items():
        for model, entry in by_model.items():
            fc = entry.metrics.get("function_call_match")
            if fc and fc.fields:
                details.append(f"\n### {task} — {model}: function-call fields\n")
                details.append(f"parsed {fc.parsed}%, names right {fc.name_accuracy}%\n")
                details.append("| field | accuracy | n |\n|---|---|---|")
                details += [f"| {k} | {v['accuracy']} | {v['n']} |" for k, v in fc.fields.items()]
            if entry.error_categories:
                cats = ", ".join(f"{k}: {v}" for k, v in entry.error_categories.items())
                details.append(f"\n{task} — {model}: errors by category: {cats}")
    return "\n".join(lines + details + aggregate_details(scores)) + "\n"


def _perturbed_line(spec: str | None) -> list[str]:
    """The line saying every score below was heard through ``spec`` (none for a clean run)."""
    if not spec:
        return []
    return ["", f"**Perturbed:** every model heard each clip through `{spec}`; every score below "
            "is of that condition, not of the clean audio."]  # fmt: skip


def _judge_line(judge: dict[str, Any] | None) -> list[str]:
    if not judge:
        return []
    return [
        "",
        f"Judge: `{judge['model']}` — {judge['asked']} records graded, {judge['cached']} from "
        f"the cache, {judge['calls']} calls, {judge['undecided']} undecided.",
    ]


def _audio_judge_line(judge: dict[str, Any] | None) -> list[str]:
    if not judge:
        return []
    return [
        "",
        f"Audio judge: `{judge['model']}` — {judge['asked']} spoken answers, "
        f"{judge['no_audio']} without audio, {judge['calls']} calls, {judge['from_cache']} "
        f"from the cache, {judge['undecided']} undecided.",
    ]


def record_verdicts(scores: dict[str, Any]) -> list[tuple[str, str | None]]:
    """What each metric says of one record: ``right``, ``wrong``, ``undecided``, ``e/n`` (e
    errors of n units), or None for a statistic without a verdict (the report page and
    ``tasks show`` each spell these their own way)."""
    out: list[tuple[str, str | None]] = []
    for name, stats in scores.items():
        if stats.get("undecided"):
            out.append((name, "undecided"))
        elif "correct" in stats:
            out.append((name, "right" if stats["correct"] else "wrong"))
        elif "units" in stats:
            out.append((name, f"{stats['errors']}/{stats['units']}"))
        else:
            out.append((name, None))
    return out
