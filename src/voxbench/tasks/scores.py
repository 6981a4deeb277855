"""Pooling ``records.jsonl`` into ``scores.json``: per task × model × metric, and aggregates.

Scores are always recomputed from the recorded predictions, so a run read with other metrics
needs no model call. A record that failed (an error after its retries) is counted under
``errors`` and left out of every metric; an empty reply is scored (it is what the model
said) and counted under ``empties``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from voxbench.core.taskrun import latest_rows
from voxbench.metrics.registry import METRICS
from voxbench.tasks.engine.work_queue import score_prediction, turn_scores
from voxbench.tasks.plan import Plan


def compute_scores(plan: Plan, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``scores.json``: every (task, model) with each metric's value, CI, n, errors, empties."""
    latest = latest_rows(rows)
    tasks: dict[str, dict[str, Any]] = {}
    for job in plan.jobs:
        ids = {r.id: r for r in job.records}
        mine = [latest.get((job.task.name, job.model.name, rid)) for rid in ids]
        answered = [r for r in mine if r is not None and r.get("error") is None]
        errors = [r for r in mine if r is not None and r.get("error") is not None]
        stats: dict[str, list[dict[str, Any]]] = {m: [] for m in job.metrics}
        for row in answered:
            if job.every_turn:  # each scored turn is a unit, clustered by its record
                for turn in turn_scores(job, ids[row["id"]], row.get("turns") or []):
                    for metric in job.metrics:
                        stats[metric].append({**turn[metric], "cluster": row["id"]})
                continue
            scored = row.get("scores") or {}
            if any(m not in scored for m in job.metrics):  # metrics changed since it was scored
                scored = score_prediction(job, ids[row["id"]], row["prediction"] or "")
            for metric in job.metrics:
                stats[metric].append(scored[metric])
        metrics = {}
        for metric in job.metrics:
            rng = np.random.default_rng(
                [plan.config.seed, *_stream(job.task.name, job.model.model)]
            )
            metrics[metric] = {
                **METRICS[metric].pool(stats[metric], rng),
                "higher_is_better": METRICS[metric].higher_is_better,
            }
        latencies = [r["latency_s"] for r in answered if not r.get("cached")]
        tasks.setdefault(job.task.name, {})[job.model.name] = {
            "records": len(ids),
            "answered": len(answered),
            "errors": len(errors),
            "missing": len(ids) - len(answered) - len(errors),
            "empties": sum(1 for r in answered if not (r["prediction"] or "").strip()),
            "error_categories": _count(e["error"]["category"] for e in errors),
            "median_latency_s": round(float(np.median(latencies)), 4) if latencies else None,
            "metrics": metrics,
        }
    return {"tasks": tasks, "aggregates": _aggregates(plan, tasks)}


def _stream(*names: str) -> list[int]:
    """A task × model's own random stream: its interval is the same whatever else the run
    holds (and in whatever order the config lists it)."""
    digest = hashlib.sha256("\x00".join(names).encode()).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def _aggregates(plan: Plan, tasks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each configured aggregate, per model: the weighted mean of its tasks' values, and
    exactly what went in — per task its weight, value and records (n scored; errors and
    undecided left out, counted), and the tasks left out with why."""
    out: dict[str, Any] = {}
    for agg in plan.config.aggregate:
        weights = aggregate_weights(agg.tasks, plan.groups, {j.task.name for j in plan.jobs})
        per_model: dict[str, Any] = {}
        for model in plan.config.models:
            included: dict[str, Any] = {}
            excluded: dict[str, str] = {}
            for task, weight in weights.items():
                entry = tasks.get(task, {}).get(model.name)
                if entry is None:
                    excluded[task] = "not run"
                    continue
                metric = entry["metrics"].get(agg.metric)
                if metric is None:
                    excluded[task] = f"the task does not compute {agg.metric}"
                    continue
                if metric["value"] is None:
                    excluded[task] = "no scored record"
                    continue
                included[task] = {
                    "weight": weight,
                    "value": metric["value"],
                    "n": metric["n"],
                    "records": entry["records"],
                    "errors": entry["errors"],
                    "missing": entry["missing"],
                    "undecided": metric.get("undecided", 0),
                }
            total = sum(t["weight"] for t in included.values())
            value = (
                round(sum(t["weight"] * t["value"] for t in included.values()) / total, 2)
                if total
                else None
            )
            per_model[model.name] = {
                "value": value,
                "tasks": included,
                "excluded": excluded,
                **{k: sum(t[k] for t in included.values())
                   for k in ("n", "records", "errors", "missing", "undecided")},
            }  # fmt: skip
        out[agg.name] = {
            "metric": agg.metric,
            "higher_is_better": METRICS[agg.metric].higher_is_better,
            "weights": weights,
            "rule": "Σ weight × task value / Σ weight over the tasks with a value; each task's "
            "value pools its scored records (errors and undecided records left out, counted)",
            "models": per_model,
        }
    return out


def aggregate_weights(
    named: list[str] | dict[str, float],
    groups: dict[str, list[str]],
    in_run: set[str] | None = None,
) -> dict[str, float]:
    """Task → weight: a name's weight goes to each task it stands for (a group: every task
    of it the run has, when ``in_run`` says which; a task named itself counts, run or not);
    a task two names give different weights is the config's mistake (``build_plan`` rejects
    it), here the later name wins."""
    weights: dict[str, float] = {}
    pairs = named.items() if isinstance(named, dict) else ((n, 1.0) for n in named)
    for name, weight in pairs:
        group = groups[name] != [name]
        for task in groups[name]:
            if group and in_run is not None and task not in in_run:
                continue
            weights[task] = float(weight)
    return weights
