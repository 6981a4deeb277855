"""One summary of a latency error distribution, shared by the bench scripts."""

from __future__ import annotations

import statistics


def describe_errors(errors: list[float], within_ms: float = 5.0) -> str:
    """n, mean, median, p95, min, max of errors in ms, and how many lie within ``within_ms``."""
    if not errors:
        return "no measurements"
    ordered = sorted(errors)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"n={len(errors):3d}  mean={statistics.fmean(errors):6.2f}  "
        f"median={statistics.median(errors):6.2f}  p95={p95:6.2f}  "
        f"min={ordered[0]:6.2f}  max={ordered[-1]:6.2f}  "
        f"within {within_ms:g} ms: {sum(abs(e) <= within_ms for e in errors)}/{len(errors)}"
    )
