"""Aggregate per-sample scores into a summary per (target, category, subset), and write it.

Every metric gets its sample count, mean and standard deviation (population, as the public
scripts' ``np.std``); every timing also gets p50 / p90 / p99 and its range. Rows exist for
each subset and, when a category spans several subsets, for all of them together
(subset ``all``).
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from voxbench.core.errors import ConfigError
from voxbench.core.results import FDB_SUMMARY_SCHEMA, FdbSummary
from voxbench.fullduplex.corpus import CATEGORIES
from voxbench.fullduplex.sample_context import SampleScore
from voxbench.fullduplex.timings import STAGES

SUMMARY_SCHEMA_VERSION = FDB_SUMMARY_SCHEMA
TIMING_METRICS = ("latency", "stop_latency", "response_latency")
METRIC_ORDER = (
    "tor",
    "latency",
    "relevance",
    "frequency",
    "jsd",
    "no_backchannel",
    "stop_latency",
    "response_latency",
    "respond",
    "resume",
    "uncertain",
    "unknown",
)
ALL_SUBSETS = "all"

FDB_V1_QUIRKS = (
    "pause TOR counts speech anywhere in the output (pause.json is not read)",
    "latencies are clamped at 0 and averaged over TOR = 1 samples",
    "interruption metrics use only the words after the interrupt ends",
    "backchannel VAD assumes 16 kHz for every file",
    "backchannel TOR is the verdict of the last short segment; every segment ≤ 3 s counts as a backchannel",
    "JSD is 1.0 for a sample without backchannel, and that 1.0 is averaged in",
)
VOXBENCH_FIXES = (
    "TOR counts only speech inside the annotated window (from pause onset / turn end / interrupt end)",
    "latencies are not clamped: negative = the model talked over the user",
    "interruption is scored on the whole output; stop_latency = how long the model kept talking after the interrupt began",
    "backchannel VAD gets the file's real sample rate",
    "backchannel TOR = 1 when any segment is a take-over; only backchannel-classified segments count for frequency and JSD",
    "JSD only over samples with backchannels, on the ground truth's own 0.2 s grid; no_backchannel rate reported beside it",
    "v1.5 overlap samples: stop/response latency around the overlap window and a judged behaviour label",
)


def _stats(values: Sequence[float], timing: bool) -> dict[str, float | int | None]:
    arr = np.asarray(values, dtype=float)
    out: dict[str, float | int | None] = {
        "n": int(arr.size),
        "mean": float(arr.mean()) if arr.size else None,
        "std": float(arr.std()) if arr.size else None,
    }
    if timing:
        if arr.size:
            p50, p90, p99 = np.percentile(arr, [50, 90, 99])
            out.update(p50=float(p50), p90=float(p90), p99=float(p99))
            out.update(min=float(arr.min()), max=float(arr.max()))
        else:
            out.update(p50=None, p90=None, p99=None, min=None, max=None)
    return out


def _row(target: str, category: str, subset: str, scores: list[SampleScore]) -> dict[str, Any]:
    names = {m for s in scores for m in s.metrics}
    ordered = [m for m in METRIC_ORDER if m in names] + sorted(names - set(METRIC_ORDER))
    metrics = {}
    for name in ordered:
        values = [
            value for s in scores if s.error is None and (value := s.metrics.get(name)) is not None
        ]
        metrics[name] = _stats(values, name in TIMING_METRICS)
    return {
        "target": target,
        "category": category,
        "subset": subset,
        "samples": len(scores),
        "errors": sum(1 for s in scores if s.error is not None),
        "judge_errors": sum(1 for s in scores if any(n.startswith("judge error") for n in s.notes)),
        "metrics": metrics,
    }


def _category_rank(category: str) -> int:
    return CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES)


def summarize(
    scores: Iterable[SampleScore], *, mode: str, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The summary document of one scoring pass."""
    scores = list(scores)
    groups: dict[tuple[str, str, str], list[SampleScore]] = {}
    for s in scores:
        groups.setdefault((s.target, s.category, s.subset), []).append(s)
    rows = []
    by_category: dict[tuple[str, str], list[tuple[str, list[SampleScore]]]] = {}
    for (target, category, subset), items in groups.items():
        by_category.setdefault((target, category), []).append((subset, items))
    for (target, category), subsets in sorted(
        by_category.items(), key=lambda kv: (kv[0][0], _category_rank(kv[0][1]))
    ):
        for subset, items in sorted(subsets):
            rows.append(_row(target, category, subset, items))
        if len(subsets) > 1:
            pooled = [s for _, items in subsets for s in items]
            rows.append(_row(target, category, ALL_SUBSETS, pooled))
    counts = Counter(n for s in scores for n in set(s.notes) if not n.startswith("judge error"))
    notes = [f"{note} ({n} sample{'s' if n > 1 else ''})" for note, n in sorted(counts.items())]
    return {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "mode": mode,
        **(meta or {}),
        "method": list(VOXBENCH_FIXES if mode == "voxbench" else FDB_V1_QUIRKS),
        "notes": notes,
        "rows": rows,
    }


def summary_columns(summary: dict[str, Any]) -> list[str]:
    """CSV columns: identity, counts, then ``<metric>_<stat>`` for every metric present."""
    present: dict[str, list[str]] = {}
    for row in summary["rows"]:
        for name, stats in row["metrics"].items():
            present.setdefault(name, list(stats))
    ordered = [m for m in METRIC_ORDER if m in present] + sorted(set(present) - set(METRIC_ORDER))
    cols = ["mode", "target", "category", "subset", "samples", "errors", "judge_errors"]
    for name in ordered:
        cols += [f"{name}_{stat}" for stat in present[name]]
    for stage in _stages(summary):
        cols += [f"{stage}_{p}" for p in STAGE_PERCENTILES]
    return cols


STAGE_PERCENTILES = ("p50", "p90", "p99")
"""The per-stage columns of the CSV, as fdb_bench's summary CSV has them."""


def _stages(summary: dict[str, Any]) -> list[str]:
    """The stages of the CSV: always stt, llm, tts, ttft and total (blank where a run did
    not measure them), then any other stage a target reported."""
    names = {n for row in summary.get("stage_timings") or [] for n in row.get("stages", {})}
    return list(STAGES) + sorted(names - set(STAGES))


def _stage_cells(summary: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(target, category) → the ``<stage>_p50/p90/p99`` cells of its stage timings."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for row in summary.get("stage_timings") or []:
        cells = out.setdefault((row.get("target"), row.get("category")), {})
        for stage, stats in (row.get("stages") or {}).items():
            for p in STAGE_PERCENTILES:
                cells[f"{stage}_{p}"] = stats.get(p)
    return out


def write_csv(summary: dict[str, Any], dest: Path | TextIO) -> None:
    """One line per row of the summary; blank where a metric does not apply. After the
    metrics, ``<stage>_p50/p90/p99`` for stt, llm, tts, ttft and total (wall seconds, from the
    summary's ``stage_timings`` of the row's target and category; blank when not measured).

    ``dest``: a file path, or an open text stream (``sys.stdout`` for ``--csv -``)."""
    if isinstance(dest, Path):
        dest.parent.mkdir(parents=True, exist_ok=True)
        with dest.open("w", newline="", encoding="utf-8") as f:
            write_csv(summary, f)
        return
    cols = summary_columns(summary)
    writer = csv.DictWriter(dest, fieldnames=cols, lineterminator="\n")
    writer.writeheader()
    stages = _stage_cells(summary)
    for row in summary["rows"]:
        flat: dict[str, Any] = {k: row[k] for k in cols[1:7]}
        flat["mode"] = summary["mode"]
        for name, stats in row["metrics"].items():
            for stat, value in stats.items():
                flat[f"{name}_{stat}"] = "" if value is None else value
        # Stage timings are pooled per (target, category): every subset row of it has them.
        for col, value in stages.get((row["target"], row["category"]), {}).items():
            flat[col] = "" if value is None else value
        writer.writerow(flat)


def write_json(summary: dict[str, Any], path: Path) -> None:
    """Write the summary, checked against its contract (``core.results.FdbSummary``): a field
    the readers rely on that is missing or mistyped fails here, not in the store."""
    FdbSummary.model_validate(summary)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_summary(path: Path) -> dict[str, Any]:
    """A summary written by ``write_json`` or ``write_csv`` (for baselines)."""
    if not path.is_file():
        raise ConfigError("baseline file not found", file=path, expected="a summary JSON or CSV")
    if path.suffix.lower() == ".csv":
        return _summary_from_csv(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"not readable JSON: {exc}", file=path) from exc
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ConfigError("not a summary", file=path, field="rows", expected="a list of rows")
    return data


def _summary_from_csv(path: Path) -> dict[str, Any]:
    with path.open(newline="", encoding="utf-8") as f:
        lines = list(csv.DictReader(f))
    rows, mode = [], None
    for i, line in enumerate(lines, start=2):
        for key in ("target", "category", "subset"):
            if not line.get(key):
                raise ConfigError("empty value", file=path, field=f"line {i}: {key}")
        mode = mode or line.get("mode")
        metrics: dict[str, dict[str, float]] = {}
        for col, value in line.items():
            if col and col.endswith("_mean") and value not in ("", None):
                try:
                    metrics[col[: -len("_mean")]] = {"mean": float(value)}
                except ValueError as exc:
                    raise ConfigError("not a number", file=path, field=f"line {i}: {col}") from exc
        rows.append({k: line[k] for k in ("target", "category", "subset")} | {"metrics": metrics})
    return {"mode": mode, "rows": rows}
