"""Compare two judged runs of the same benchmark, dimension by dimension, paired by turn.

Each dimension's outcomes are paired on the turns both runs scored and decided; the
difference is tested with the exact McNemar test on the discordant pairs (a sign test:
under "no difference", a turn only A passes is as likely as one only B passes). Turns
scored in one run only are left out of the test and counted. Undecided turns (a judge
could not decide) are left out of the rates and of the pairs, as in the scorecard. A failure
absorbed into an earlier root cause is not a pass here either: it is counted apart
(``a_absorbed``), and in the pairs it is a turn that did not pass.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, ConfigDict

from voxbench.core.errors import RunError
from voxbench.core.records import Judgment, Scorecard, TurnRecord
from voxbench.core.versions import differing_versions
from voxbench.scoring.scorecard import STRICT, scored, strict_outcomes
from voxbench.scoring.stats import mcnemar_exact


class DimensionComparison(BaseModel):
    """One dimension of A against B."""

    model_config = ConfigDict(extra="forbid")

    dimension: str
    a_passed: int
    a_scored: int
    b_passed: int
    b_scored: int
    a_rate: float | None
    b_rate: float | None
    difference: float | None
    """B's rate minus A's, over each run's own scored turns."""
    paired_turns: int
    only_a_passed: int
    only_b_passed: int
    p_value: float
    """Two-sided exact McNemar p-value over the paired turns."""
    unpaired_turns: int = 0
    a_absorbed: int = 0
    """A's turns that failed only because of an earlier miss (not in ``a_passed``)."""
    b_absorbed: int = 0


class VersionDifference(BaseModel):
    """A package that computes numbers, recorded at different versions by the two runs."""

    model_config = ConfigDict(extra="forbid")

    package: str
    a: str
    b: str


class Comparison(BaseModel):
    """Run A against run B."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    run_a: str
    run_b: str
    target_a: str
    target_b: str
    test: str = "exact McNemar (two-sided) on turns paired by id"
    dimensions: list[DimensionComparison]
    strict_note_a: str | None = None
    """Why A's strict pass is not comparable, when it is not (``Scorecard.strict_pass_note``)."""
    strict_note_b: str | None = None
    version_differences: list[VersionDifference] = []
    """Numeric packages (``core.versions.NUMERIC_PACKAGES``) or Python at other versions in
    B than in A: part of a difference may come from them rather than from the targets."""


def _outcomes(judgments: list[Judgment]) -> dict[str, dict[str, bool | None]]:
    out: dict[str, dict[str, bool | None]] = defaultdict(dict)
    for j in scored(judgments):
        out[j.dimension][j.turn] = None if j.judge_failed else bool(j.passed) and not j.absorbed_by
    return out


TurnOutcomes = dict[str, dict[str, bool | None]]
"""Per dimension (``strict_pass`` first), per turn id: passed, failed, or None (undecided)."""


def turn_outcomes(records: list[TurnRecord], judgments: list[Judgment]) -> TurnOutcomes:
    """A judged run's outcomes per dimension and turn, strict per-turn pass included."""
    by_dimension = _outcomes(judgments)
    out: TurnOutcomes = {STRICT: dict(strict_outcomes(records, judgments))}
    out.update((d, dict(v)) for d, v in by_dimension.items())
    return out


def _absorbed(judgments: list[Judgment]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for j in judgments:
        if j.absorbed_by and j.passed and not j.judge_failed:
            out[j.dimension] += 1
    return out


def _compare(
    dimension: str,
    a: dict[str, bool | None],
    b: dict[str, bool | None],
    absorbed: tuple[int, int] = (0, 0),
) -> DimensionComparison:
    shared = [t for t in a if t in b and a[t] is not None and b[t] is not None]
    only_a = sum(bool(a[t]) and not b[t] for t in shared)
    only_b = sum(bool(b[t]) and not a[t] for t in shared)
    a_decided = [v for v in a.values() if v is not None]
    b_decided = [v for v in b.values() if v is not None]
    a_passed, b_passed = sum(a_decided), sum(b_decided)
    a_rate = round(a_passed / len(a_decided), 4) if a_decided else None
    b_rate = round(b_passed / len(b_decided), 4) if b_decided else None
    return DimensionComparison(
        dimension=dimension,
        a_passed=a_passed,
        a_scored=len(a_decided),
        b_passed=b_passed,
        b_scored=len(b_decided),
        a_rate=a_rate,
        b_rate=b_rate,
        difference=round(b_rate - a_rate, 4) if a_rate is not None and b_rate is not None else None,
        paired_turns=len(shared),
        only_a_passed=only_a,
        only_b_passed=only_b,
        p_value=round(mcnemar_exact(only_a, only_b), 6),
        unpaired_turns=len(set(a) ^ set(b)),
        a_absorbed=absorbed[0],
        b_absorbed=absorbed[1],
    )


def compare_runs(
    card_a: Scorecard,
    records_a: list[TurnRecord],
    judgments_a: list[Judgment],
    card_b: Scorecard,
    records_b: list[TurnRecord],
    judgments_b: list[Judgment],
    versions: tuple[dict[str, str], dict[str, str]] = ({}, {}),
) -> Comparison:
    """Per-dimension differences of B against A with a paired test; ``versions`` are the
    versions each run recorded (``RunInfo.versions``)."""
    if card_a.benchmark != card_b.benchmark:
        raise RunError(
            f"cannot compare runs of different benchmarks ({card_a.benchmark} vs {card_b.benchmark})"
        )
    oa, ob = turn_outcomes(records_a, judgments_a), turn_outcomes(records_b, judgments_b)
    order = list(oa) + [d for d in ob if d not in oa]
    absorbed_a, absorbed_b = _absorbed(judgments_a), _absorbed(judgments_b)
    return Comparison(
        benchmark=card_a.benchmark,
        run_a=card_a.run_id,
        run_b=card_b.run_id,
        target_a=card_a.target,
        target_b=card_b.target,
        dimensions=[
            _compare(d, oa.get(d, {}), ob.get(d, {}), (absorbed_a[d], absorbed_b[d])) for d in order
        ],
        strict_note_a=card_a.strict_pass_note,
        strict_note_b=card_b.strict_pass_note,
        version_differences=[
            VersionDifference(package=name, a=va, b=vb)
            for name, va, vb in differing_versions(*versions)
        ],
    )
