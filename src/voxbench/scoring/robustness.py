"""Robustness: each perturbed run paired with the clean run turn by turn (record by record),
each dimension's drop with an exact paired test and an interval, latency shifts (issue 31).

Conversation runs (``conversation_robustness``): every dimension's outcomes (``strict_pass``
first) are paired on the turns both runs decided — across repeats, a turn of seed *s* is paired
with the same turn of the clean run of seed *s*. The drop is the clean rate minus the perturbed
rate over those pairs; its test is the exact McNemar test (``scoring.compare``); its interval is
exact too: conditional on the discordant pairs, the share that only the clean run passed has a
Clopper–Pearson interval, and the drop is that share scaled (``drop_interval``). Latency: the
paired per-turn shift of voice-to-voice latency, its median with the distribution-free
interval of order statistics and a sign test; no-response and interruption (overlapped) turns
are paired outcomes like a dimension.

Task runs (``task_robustness``): each (task, model, metric) is paired by record id. A yes/no
metric (``correct``) is tested as above. An edit rate (``errors``/``units``: WER, CER) is pooled
(errors over units) in each condition; the shift is tested with an exact sign test on the
records whose rate changed and given a paired bootstrap interval over records (seeded).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from voxbench.core.measures import RunAnalysis
from voxbench.core.records import Judgment, TurnRecord
from voxbench.core.stats import wilson_interval
from voxbench.scoring.compare import turn_outcomes
from voxbench.scoring.stats import mcnemar_exact

CLEAN = "clean"
BOOTSTRAP = 2000
LATENCY = "voice_to_voice"
NO_RESPONSE = "no_response"
INTERRUPTED = "interrupted"


class Drop(BaseModel):
    """One dimension (or metric) of one condition against the clean run, paired."""

    model_config = ConfigDict(extra="forbid")

    name: str
    clean: float | None
    """The clean value over the paired items (a rate 0–1, or a pooled edit rate)."""
    clean_ci: tuple[float, float] | None = None
    value: float | None
    """The perturbed value over the same items."""
    ci: tuple[float, float] | None = None
    drop: float | None
    """``clean - value`` for a higher-is-better score; ``value - clean`` for a lower-is-better
    one (an edit rate, no-response): positive is always worse."""
    drop_ci: tuple[float, float] | None = None
    paired: int
    worse: int
    """Paired items that got worse (passed clean, failed perturbed; or a higher edit rate)."""
    better: int
    p_value: float
    higher_is_better: bool = True


class LatencyShift(BaseModel):
    """The paired per-turn shift of a latency (perturbed − clean, seconds)."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    clean_p50: float | None
    p50: float | None
    median_shift: float | None
    shift_ci: tuple[float, float] | None
    paired: int
    slower: int
    faster: int
    p_value: float


class Condition(BaseModel):
    """One rung of the ladder against the clean run."""

    model_config = ConfigDict(extra="forbid")

    spec: str
    level: float | None = None
    """The rung's x on the curve: SNR (dB), loss (%), RT60 (s)…; None when not one number."""
    runs: list[str] = Field(default_factory=list)
    drops: list[Drop] = Field(default_factory=list)
    latency: list[LatencyShift] = Field(default_factory=list)


class RobustnessReport(BaseModel):
    """A benchmark under a ladder of perturbations, each rung paired with the clean run."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    """``conversation`` or ``tasks``."""
    benchmark: str
    target: str
    clean_runs: list[str]
    axis: str | None = None
    """What ``Condition.level`` measures (``SNR (dB)``…), when every rung is one kind."""
    conditions: list[Condition]
    test: str = (
        "exact McNemar (two-sided) on paired turns/records for yes/no outcomes; exact sign test "
        "for edit rates and latency shifts"
    )
    interval: str = (
        "95%: exact conditional (Clopper–Pearson on the discordant pairs) for a drop in a pass "
        "rate; paired bootstrap over records for an edit rate; order statistics for a median "
        "latency shift; Wilson for each rate"
    )


# -- the ladder's x ----------------------------------------------------------------------------

_LEVELS = (
    (re.compile(r"^noise:[a-z]+@(-?[\d.]+)dB"), "SNR (dB)"),
    (re.compile(r"^loss:([\d.]+)%"), "loss (%)"),
    (re.compile(r"^reverb@([\d.]+)s"), "RT60 (s)"),
    (re.compile(r"^codec:opus@([\d.]+)k"), "Opus (kbit/s)"),
    (re.compile(r"^gain@(-?[\d.]+)dB"), "gain (dB)"),
)


def level_of(spec: str) -> tuple[str | None, float | None]:
    """A one-step spec's axis and value (``noise:pink@10dB`` → ``("SNR (dB)", 10.0)``)."""
    if "+" in spec:
        return None, None
    for pattern, axis in _LEVELS:
        m = pattern.match(spec)
        if m:
            return axis, float(m.group(1))
    return None, None


def ladder_axis(specs: Sequence[str]) -> str | None:
    """The axis every rung shares, or None."""
    axes = {level_of(s)[0] for s in specs}
    return axes.pop() if len(axes) == 1 and None not in axes else None


# -- intervals ---------------------------------------------------------------------------------


def drop_interval(worse: int, better: int, paired: int) -> tuple[float, float] | None:
    """95% interval of ``(worse - better) / paired``, exact conditional on the discordant pairs:
    Clopper–Pearson for the share ``worse / (worse + better)``, scaled by their share of pairs."""
    if paired == 0:
        return None
    d = worse + better
    if d == 0:
        return (0.0, 0.0)
    from scipy.stats import beta

    lo = 0.0 if worse == 0 else float(beta.ppf(0.025, worse, d - worse + 1))
    hi = 1.0 if worse == d else float(beta.ppf(0.975, worse + 1, d - worse))
    scale = d / paired
    return (round(scale * (2 * lo - 1), 4), round(scale * (2 * hi - 1), 4))


def median_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """Distribution-free 95% interval of a median: the order statistics x_(k), x_(n-k+1) with
    k the largest whose binomial tail P(B ≤ k-1) stays at most 2.5% (None below 6 values)."""
    n = len(values)
    if n < 6:
        return None
    from scipy.stats import binom

    k = 0
    while binom.cdf(k, n, 0.5) <= 0.025:
        k += 1
    if k == 0:
        return None
    x = sorted(values)
    return (round(x[k - 1], 4), round(x[n - k], 4))


def _rate(outcomes: Iterable[bool]) -> tuple[float | None, tuple[float, float] | None]:
    values = list(outcomes)
    if not values:
        return None, None
    interval = wilson_interval(sum(values), len(values))
    rounded = (round(interval[0], 4), round(interval[1], 4)) if interval else None
    return round(sum(values) / len(values), 4), rounded


def paired_drop(
    name: str,
    clean: dict[str, bool | None],
    perturbed: dict[str, bool | None],
    *,
    higher_is_better: bool = True,
) -> Drop:
    """A yes/no outcome per item in each condition → its paired drop (undecided left out)."""
    shared = [k for k in clean if clean[k] is not None and perturbed.get(k) is not None]
    a = [bool(clean[k]) for k in shared]
    b = [bool(perturbed[k]) for k in shared]
    passed_clean_only = sum(x and not y for x, y in zip(a, b, strict=True))
    passed_perturbed_only = sum(y and not x for x, y in zip(a, b, strict=True))
    worse, better = (
        (passed_clean_only, passed_perturbed_only)
        if higher_is_better
        else (passed_perturbed_only, passed_clean_only)
    )
    clean_rate, clean_ci = _rate(a)
    rate, ci = _rate(b)
    drop = None
    if clean_rate is not None and rate is not None:
        drop = round(clean_rate - rate if higher_is_better else rate - clean_rate, 4)
    return Drop(
        name=name,
        clean=clean_rate,
        clean_ci=clean_ci,
        value=rate,
        ci=ci,
        drop=drop,
        drop_ci=drop_interval(worse, better, len(shared)),
        paired=len(shared),
        worse=worse,
        better=better,
        p_value=round(mcnemar_exact(worse, better), 6),
        higher_is_better=higher_is_better,
    )


# -- conversation runs -------------------------------------------------------------------------


@dataclass(frozen=True)
class ConversationRun:
    """What a judged conversation run gives the report (``core.rundir.RunDirectory``)."""

    run_id: str
    seed: int
    records: list[TurnRecord]
    judgments: list[Judgment]
    analysis: RunAnalysis | None = None


def _keyed(seed: int, per_turn: dict[str, Any]) -> dict[str, Any]:
    return {f"{seed}/{turn}": v for turn, v in per_turn.items()}


def _conversation_outcomes(runs: list[ConversationRun]) -> dict[str, dict[str, bool | None]]:
    """Per dimension, per ``seed/turn``: pass, fail or undecided; plus responded/overlapped."""
    out: dict[str, dict[str, bool | None]] = {}
    for run in runs:
        for dimension, per_turn in turn_outcomes(run.records, run.judgments).items():
            out.setdefault(dimension, {}).update(_keyed(run.seed, per_turn))
        silent = {r.turn: r.status == "no_response" for r in run.records if r.status != "error"}
        out.setdefault(NO_RESPONSE, {}).update(_keyed(run.seed, silent))
        if run.analysis is not None and run.analysis.mode == "audio":
            overlapped = {m.turn: bool(m.overlaps) for m in run.analysis.turns if m.scored}
            out.setdefault(INTERRUPTED, {}).update(_keyed(run.seed, overlapped))
    return out


def _latencies(runs: list[ConversationRun], metric: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for run in runs:
        if run.analysis is None:
            continue
        for m in run.analysis.turns:
            value = getattr(m, metric, None)
            if m.scored and value is not None:
                out[f"{run.seed}/{m.turn}"] = float(value)
    return out


def latency_shift(
    metric: str, clean: dict[str, float], perturbed: dict[str, float]
) -> LatencyShift:
    """The paired shift of ``metric`` on the turns both conditions measured."""
    shared = [k for k in clean if k in perturbed]
    diffs = [perturbed[k] - clean[k] for k in shared]
    slower, faster = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)

    def p50(values: Iterable[float]) -> float | None:
        v = list(values)
        return round(float(np.median(v)), 4) if v else None

    return LatencyShift(
        metric=metric,
        clean_p50=p50(clean[k] for k in shared),
        p50=p50(perturbed[k] for k in shared),
        median_shift=p50(diffs),
        shift_ci=median_interval(diffs),
        paired=len(shared),
        slower=slower,
        faster=faster,
        p_value=round(mcnemar_exact(slower, faster), 6),
    )


def conversation_robustness(
    benchmark: str,
    target: str,
    clean: list[ConversationRun],
    ladder: dict[str, list[ConversationRun]],
) -> RobustnessReport:
    """Each rung of ``ladder`` (spec → its runs, one per seed) against the ``clean`` runs."""
    base = _conversation_outcomes(clean)
    base_latency = _latencies(clean, LATENCY)
    conditions = []
    for spec, runs in ladder.items():
        heard = _conversation_outcomes(runs)
        order = list(base) + [d for d in heard if d not in base]
        drops = [
            paired_drop(d, base.get(d, {}), heard.get(d, {}), higher_is_better=d not in
                        (NO_RESPONSE, INTERRUPTED))
            for d in order
        ]  # fmt: skip
        latency = [latency_shift(LATENCY, base_latency, _latencies(runs, LATENCY))]
        conditions.append(
            Condition(
                spec=spec,
                level=level_of(spec)[1],
                runs=[r.run_id for r in runs],
                drops=drops,
                latency=[s for s in latency if s.paired],
            )
        )
    return RobustnessReport(
        kind="conversation",
        benchmark=benchmark,
        target=target,
        clean_runs=[r.run_id for r in clean],
        axis=ladder_axis(list(ladder)),
        conditions=conditions,
    )


# -- task runs ---------------------------------------------------------------------------------


def _record_values(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(task, model, metric) → record id → its stats (errors/units or correct)."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        if row.get("error") is not None:
            continue
        for metric, stats in (row.get("scores") or {}).items():
            if not isinstance(stats, dict):
                continue
            if "correct" in stats or ("errors" in stats and "units" in stats):
                out.setdefault((row["task"], row["model"], metric), {})[row["id"]] = stats
    return out


def _edit_drop(name: str, clean: dict[str, Any], perturbed: dict[str, Any], seed: int) -> Drop:
    shared = [k for k in clean if k in perturbed and clean[k].get("units")]
    e0 = np.array([clean[k]["errors"] for k in shared], dtype=float)
    e1 = np.array([perturbed[k]["errors"] for k in shared], dtype=float)
    units = np.array([clean[k]["units"] for k in shared], dtype=float)
    worse, better = int(np.sum(e1 > e0)), int(np.sum(e1 < e0))
    if not shared:
        return Drop(name=name, clean=None, value=None, drop=None, paired=0, worse=0,
                    better=0, p_value=1.0, higher_is_better=False)  # fmt: skip
    total = units.sum()
    r0, r1 = e0.sum() / total, e1.sum() / total
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(shared), size=(BOOTSTRAP, len(shared)))
    u = units[picks].sum(axis=1)
    b0, b1 = e0[picks].sum(axis=1) / u, e1[picks].sum(axis=1) / u

    def ci(x: np.ndarray) -> tuple[float, float]:
        lo, hi = np.percentile(x, [2.5, 97.5])
        return (round(float(lo), 4), round(float(hi), 4))

    return Drop(
        name=name,
        clean=round(float(r0), 4),
        clean_ci=ci(b0),
        value=round(float(r1), 4),
        ci=ci(b1),
        drop=round(float(r1 - r0), 4),
        drop_ci=ci(b1 - b0),
        paired=len(shared),
        worse=worse,
        better=better,
        p_value=round(mcnemar_exact(worse, better), 6),
        higher_is_better=False,
    )


def task_robustness(
    clean_id: str,
    clean_rows: list[dict[str, Any]],
    ladder: dict[str, tuple[str, list[dict[str, Any]]]],
    *,
    seed: int = 0,
) -> RobustnessReport:
    """Task runs: each rung (spec → its run id and ``records.jsonl`` rows) against the clean
    run's rows, per task × model × metric, paired by record id."""
    base = _record_values(clean_rows)
    conditions = []
    for spec, (run_id, rows) in ladder.items():
        heard = _record_values(rows)
        drops = []
        for key, clean in base.items():
            name = " · ".join(key)
            perturbed = heard.get(key, {})
            if any("correct" in s for s in clean.values()):
                drops.append(
                    paired_drop(
                        name,
                        {k: bool(s["correct"]) for k, s in clean.items()},
                        {k: bool(s["correct"]) for k, s in perturbed.items()},
                    )
                )
            else:
                drops.append(_edit_drop(name, clean, perturbed, seed))
        conditions.append(Condition(spec=spec, level=level_of(spec)[1], runs=[run_id], drops=drops))
    tasks = sorted({k[0] for k in base})
    models = sorted({k[1] for k in base})
    return RobustnessReport(
        kind="tasks",
        benchmark=", ".join(tasks),
        target=", ".join(models),
        clean_runs=[clean_id],
        axis=ladder_axis(list(ladder)),
        conditions=conditions,
    )


def is_monotone(values: Sequence[float | None], *, worse_down: bool = True) -> bool:
    """Whether a curve only gets worse along the ladder (ties allowed)."""
    v = [x for x in values if x is not None and not math.isnan(x)]
    pairs = list(zip(v, v[1:], strict=False))
    return all(b <= a for a, b in pairs) if worse_down else all(b >= a for a, b in pairs)
