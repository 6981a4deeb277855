"""Where a run's time went: per-stage wall-clock percentiles from the driver's sample records.

Each completed sample's record (``voxbench_fdb.json``) holds what its target reported: a
cascade's stage times (``stt``, ``llm`` to the first token, ``tts`` to the first audio), the
host's time to the first audio of each response (``ttft``: wall seconds from the end of the
user's turn to the first answer audio) and the sample's whole wall time (``total``). They are
pooled per (target, category) into p50 / p90 / p99. A sample whose run failed or whose streams
reported an error is left out (its times describe a failure, not the system), and counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from voxbench.fullduplex.corpus import CATEGORIES

STAGES = ("stt", "llm", "tts", "ttft", "total")
"""The stages reported, in pipeline order; a target's other stage names come after them."""
_STAGE_NAMES = {"stt": "stt", "llm_first_token": "llm", "tts_first_audio": "tts"}
"""A cascade's stage marks (``targets.cascade``) → the names reported."""


@dataclass
class SampleTimes:
    """One sample's wall-clock measurements (seconds), from its run record."""

    target: str
    category: str
    ok: bool
    stages: dict[str, list[float]] = field(default_factory=dict)


def target_errors(record: dict[str, Any]) -> list[str]:
    """What the target reported as failing in one sample record: the streams' errors (each
    once, in order), or the record's own error when the sample failed before streaming."""
    errors: list[str] = []
    for stream in record.get("streams") or []:
        if isinstance(stream, dict):
            errors += [str(e) for e in stream.get("errors") or []]
    if not errors and record.get("status") == "failed":
        errors.append(str(record.get("error") or f"status {record.get('status')}"))
    return list(dict.fromkeys(errors))


def sample_times(record: dict[str, Any]) -> SampleTimes:
    """The measurements in one driver record; ``ok`` is False for a failed or errored sample."""
    streams = record.get("streams") or []
    ok = record.get("status") == "completed" and not target_errors(record)
    times = SampleTimes(str(record.get("target") or "unnamed"), str(record.get("category")), ok)
    for stream in streams:
        for mark in stream.get("stage_timings") or []:
            name = _STAGE_NAMES.get(str(mark.get("stage")), str(mark.get("stage")))
            _add(times, name, mark.get("seconds"))
        for response in stream.get("responses") or []:
            _add(times, "ttft", _ttft(response, stream.get("clock")))
    _add(times, "total", record.get("wall_s"))
    return times


def _ttft(response: dict[str, Any], clock: str | None) -> float | None:
    # Virtual time stands still while the target works, so only the host's wall time says how
    # long the first audio took; in real time the measured latency is that wall time.
    if isinstance(response.get("processing_s"), int | float):
        return float(response["processing_s"])
    if clock == "realtime" and isinstance(response.get("latency"), int | float):
        return float(response["latency"])
    return None


def _add(times: SampleTimes, stage: str, value: Any) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        times.stages.setdefault(stage, []).append(float(value))


def read_records(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """The readable records among ``paths`` (a broken or missing one is skipped)."""
    out = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            out.append(data)
    return out


def _percentiles(values: list[float]) -> dict[str, float | int]:
    arr = np.asarray(values, dtype=float)
    p50, p90, p99 = np.percentile(arr, [50, 90, 99])
    return {
        "n": int(arr.size),
        "mean": round(float(arr.mean()), 4),
        "p50": round(float(p50), 4),
        "p90": round(float(p90), 4),
        "p99": round(float(p99), 4),
    }


def _rank(key: tuple[str, str]) -> tuple[str, int, str]:
    target, category = key
    index = CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES)
    return target, index, category


def stage_timings(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (target, category): sample counts and each stage's percentiles.

    ``n`` of a stage counts measurements (a sample with three responses gives three ``ttft``);
    ``total`` has one per sample."""
    groups: dict[tuple[str, str], list[SampleTimes]] = {}
    for record in records:
        times = sample_times(record)
        groups.setdefault((times.target, times.category), []).append(times)
    rows = []
    for key in sorted(groups, key=_rank):
        items = groups[key]
        ok = [t for t in items if t.ok]
        names = {name for t in ok for name in t.stages}
        ordered = [s for s in STAGES if s in names] + sorted(names - set(STAGES))
        rows.append(
            {
                "target": key[0],
                "category": key[1],
                "samples": len(ok),
                "errored_excluded": len(items) - len(ok),
                "stages": {
                    name: _percentiles([v for t in ok for v in t.stages.get(name, [])])
                    for name in ordered
                },
            }
        )
    return rows


@dataclass(frozen=True)
class RunTotals:
    """The closing line of a run: samples ok, samples with errors, mean time to first audio."""

    ok: int
    errors: int
    average_ttft: float | None

    def line(self) -> str:
        ttft = "—" if self.average_ttft is None else f"{self.average_ttft:.3f} s"
        return f"samples ok: {self.ok} · errors: {self.errors} · average TTFT: {ttft}"


def run_totals(records: Iterable[dict[str, Any]]) -> RunTotals:
    """Totals over driver records; the TTFT mean is over responses of samples that were ok."""
    times = [sample_times(r) for r in records]
    ttft = [v for t in times if t.ok for v in t.stages.get("ttft", [])]
    ok = sum(t.ok for t in times)
    return RunTotals(ok, len(times) - ok, float(np.mean(ttft)) if ttft else None)
