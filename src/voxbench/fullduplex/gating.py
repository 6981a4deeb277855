"""Gate a scoring summary against a stored baseline, knowing which way is better.

A metric regresses when it moves the wrong way by more than its tolerance: TOR up on pause
handling or backchannel, TOR down on turn-taking or interruption, any latency up (seconds
tolerance), JSD or the no-backchannel rate up, backchannel frequency or relevance down, and
on v1.5 overlaps the share of the desired behaviour down (``respond`` to a real
interruption, ``resume`` for backchannels, side talk and background speech). Moves the
right way never fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voxbench.core.errors import ConfigError

HIGHER_IS_BETTER = 1
LOWER_IS_BETTER = -1

_DIRECTIONS: dict[tuple[str, str], int] = {
    ("pause_handling", "tor"): LOWER_IS_BETTER,
    ("smooth_turn_taking", "tor"): HIGHER_IS_BETTER,
    ("user_interruption", "tor"): HIGHER_IS_BETTER,
    ("user_interruption", "relevance"): HIGHER_IS_BETTER,
    ("backchannel", "tor"): LOWER_IS_BETTER,
    ("backchannel", "frequency"): HIGHER_IS_BETTER,
    ("backchannel", "jsd"): LOWER_IS_BETTER,
    ("backchannel", "no_backchannel"): LOWER_IS_BETTER,
}
_LATENCIES = ("latency", "stop_latency", "response_latency")
_DESIRED_BEHAVIOR = {"user_interruption": "respond"}
"""v1.5 subset → the behaviour a good model shows; any other subset: ``resume``."""


def direction(category: str, subset: str, metric: str) -> int | None:
    """+1 when higher is better, -1 when lower is, None when the metric is not gated."""
    if metric in _LATENCIES:
        return LOWER_IS_BETTER
    if category == "behavior":
        desired = _DESIRED_BEHAVIOR.get(subset, "resume")
        return HIGHER_IS_BETTER if metric == desired else None
    return _DIRECTIONS.get((category, metric))


@dataclass(frozen=True)
class GateResult:
    """One compared metric."""

    target: str
    category: str
    subset: str
    metric: str
    baseline: float
    current: float
    tolerance: float
    regressed: bool

    @property
    def delta(self) -> float:
        return self.current - self.baseline


def _mean(row: dict[str, Any], metric: str) -> float | None:
    stats = row.get("metrics", {}).get(metric)
    value = stats.get("mean") if isinstance(stats, dict) else None
    return float(value) if isinstance(value, int | float) else None


def compare(
    current: dict[str, Any],
    baseline: dict[str, Any],
    *,
    tolerance: float = 0.02,
    latency_tolerance: float = 0.1,
) -> list[GateResult]:
    """Every gated metric present in both summaries, matched by (target, category, subset).

    When the baseline holds a single target, rows match on (category, subset) alone, so a
    baseline of one system gates another.
    """
    if baseline.get("mode") and current.get("mode") and baseline["mode"] != current["mode"]:
        raise ConfigError(
            f"baseline was scored in mode {baseline['mode']!r}, this run in {current['mode']!r}",
            field="mode",
            expected="the same --mode for both",
        )
    base_targets = {r["target"] for r in baseline["rows"]}
    index = {}
    for r in baseline["rows"]:
        key = (
            (r["category"], r["subset"])
            if len(base_targets) == 1
            else (r["target"], r["category"], r["subset"])
        )
        index[key] = r
    results = []
    for row in current["rows"]:
        key = (
            (row["category"], row["subset"])
            if len(base_targets) == 1
            else (row["target"], row["category"], row["subset"])
        )
        base = index.get(key)
        if base is None:
            continue
        for metric in row.get("metrics", {}):
            sign = direction(row["category"], row["subset"], metric)
            now, then = _mean(row, metric), _mean(base, metric)
            if sign is None or now is None or then is None:
                continue
            tol = latency_tolerance if metric in _LATENCIES else tolerance
            worse_by = (then - now) if sign == HIGHER_IS_BETTER else (now - then)
            results.append(
                GateResult(
                    row["target"], row["category"], row["subset"], metric, then, now, tol,
                    regressed=worse_by > tol + 1e-12,
                )
            )  # fmt: skip
    return results
