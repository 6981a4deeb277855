"""Scorecards: per-dimension pass rates with fixed denominators, strict per-turn pass,
95% bootstrap intervals, latency percentiles and counts of what went wrong."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from voxbench.core.records import DimensionScore, Judgment, Scorecard, TurnRecord

BOOTSTRAP_SAMPLES = 2000
PERCENTILES = (50, 90, 95, 99)


def bootstrap_ci(
    outcomes: Sequence[bool], *, seed: int = 0, samples: int = BOOTSTRAP_SAMPLES
) -> tuple[float, float] | None:
    """95% percentile-bootstrap interval of a pass rate (None with no outcomes)."""
    if not outcomes:
        return None
    data = np.asarray(outcomes, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(samples, len(data)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (round(float(lo), 4), round(float(hi), 4))


def percentiles(values: Iterable[float | None]) -> dict[str, float]:
    """p50/p90/p95/p99, mean and count of the non-missing values (values ≤ 0 included)."""
    data = np.asarray([v for v in values if v is not None], dtype=float)
    if data.size == 0:
        return {"count": 0}
    out = {f"p{p}": round(float(np.percentile(data, p)), 4) for p in PERCENTILES}
    out["mean"] = round(float(data.mean()), 4)
    out["count"] = int(data.size)
    return out


def dimension_score(dimension: str, judgments: list[Judgment], seed: int = 0) -> DimensionScore:
    """Passes over scored turns; judge failures count as scored and not passed."""
    scored = [j for j in judgments if j.passed is not None or j.judge_failed]
    outcomes = [bool(j.passed) for j in scored]
    passed = sum(outcomes)
    return DimensionScore(
        dimension=dimension,
        passed=passed,
        scored=len(scored),
        rate=round(passed / len(scored), 4) if scored else None,
        ci95=bootstrap_ci(outcomes, seed=seed),
        failed_turns=[j.turn for j in scored if not j.passed],
    )


def build_scorecard(
    *,
    run_id: str,
    benchmark: str,
    target: str,
    records: list[TurnRecord],
    judgments: list[Judgment],
    checks: dict[str, Any] | None = None,
    seed: int = 0,
) -> Scorecard:
    """Aggregate judgments and records into a scorecard."""
    by_dim: dict[str, list[Judgment]] = defaultdict(list)
    by_turn: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_dim[j.dimension].append(j)
        by_turn[j.turn].append(j)
    dimensions = [dimension_score(d, js, seed) for d, js in by_dim.items()]

    strict = [
        Judgment(
            turn=r.turn,
            dimension="strict_pass",
            passed=r.status == "ok"
            and all(j.passed for j in by_turn[r.turn] if j.passed is not None or j.judge_failed),
        )
        for r in records
    ]
    counts = {
        "turns": len(records),
        "ok": sum(r.status == "ok" for r in records),
        "no_response": sum(r.status == "no_response" for r in records),
        "error": sum(r.status == "error" for r in records),
        "ended_early": sum(r.status == "ended_early" for r in records),
        "retried": sum(r.retries > 0 for r in records),
        "reconnected": sum(r.reconnected for r in records),
        "judge_failures": sum(j.judge_failed for j in judgments),
    }
    latency = {
        name: percentiles(getattr(r.timings, name) for r in records)
        for name in ("ttfb", "ttft", "first_audio_latency")
    }
    latency = {k: v for k, v in latency.items() if v.get("count")}
    return Scorecard(
        run_id=run_id,
        benchmark=benchmark,
        target=target,
        turns=len(records),
        dimensions=dimensions,
        strict_pass=dimension_score("strict_pass", strict, seed),
        checks=checks or {},
        latency=latency,
        counts=counts,
        judges=sorted({f"{j.judge}@{j.judge_version}" for j in judgments}),
    )
