"""Whether an evaluated run passes: complete, and at or above its ``--fail-under`` gates.

``parse_fail_under`` reads the gates, ``failed_gates`` lists the ones a scorecard fails (as
lines to show; empty when all pass), ``failed_mean_gates`` the ones a repeat group's mean
pass rates fail, ``refuse_incomplete`` raises ``RunIncompleteError``
when the scorecard does not describe the system under test. An incomplete evaluation wins
over a gate: when every turn failed or too many judgments are undecided, the pass rates
mean nothing. What to print and which exit code follows is the CLI's (``cli.gates``).
"""

from __future__ import annotations

from dataclasses import dataclass

from voxbench.core.errors import ConfigError, RunIncompleteError
from voxbench.core.records import Judgment, Scorecard, TurnRecord
from voxbench.scoring.repeats import RepeatSummary


@dataclass(frozen=True)
class PassRateGate:
    """One ``--fail-under`` threshold: ``dimension`` must pass at least ``minimum`` (0-1)."""

    dimension: str
    minimum: float

    def __str__(self) -> str:
        return f"{self.dimension}={_percent(self.minimum)}"


def _percent(rate: float) -> str:
    return f"{rate * 100:.4g}%"


def parse_fail_under(specs: list[str] | None) -> list[PassRateGate]:
    """``["strict_pass=0.9", "tool_use=80%"]`` → gates; a malformed one is a user error."""
    gates = []
    for spec in specs or []:
        dimension, sep, raw = spec.partition("=")
        dimension, raw = dimension.strip(), raw.strip()
        if not sep or not dimension or not raw:
            raise ConfigError(f"bad gate {spec!r}", field="--fail-under", expected="DIM=RATE")
        percent = raw.endswith("%")
        try:
            value = float(raw.removesuffix("%"))
        except ValueError:
            value = float("nan")
        # 1.5 is refused rather than read as 1.5%: a percentage says so with its sign.
        if percent:
            value /= 100
        if not 0 <= value <= 1:  # also refuses nan
            raise ConfigError(
                f"bad rate {raw!r} in {spec!r}",
                field="--fail-under",
                expected="a rate from 0 to 1 or a percentage (0.9, 90%)",
            )
        gates.append(PassRateGate(dimension, value))
    return gates


def check_gate_dimensions(gates: list[PassRateGate], known: set[str]) -> None:
    """Before a run: a gate on a dimension the run cannot score is a user error now, not
    after the whole benchmark has run."""
    for gate in gates:
        if gate.dimension not in known:
            raise ConfigError(
                f"no dimension {gate.dimension!r} is scored on this benchmark",
                field="--fail-under",
                expected=f"one of {', '.join(sorted(known - {'strict_pass'}) + ['strict_pass'])}",
            )


def failed_gates(card: Scorecard, gates: list[PassRateGate]) -> list[str]:
    """One line per gate the scorecard fails; an unknown dimension is a user error."""
    failures = []
    for gate in gates:
        score = (
            card.strict_pass if gate.dimension == "strict_pass" else card.dimension(gate.dimension)
        )
        if score is None:
            known = ", ".join(["strict_pass", *(d.dimension for d in card.dimensions)])
            raise ConfigError(
                f"the scorecard has no dimension {gate.dimension!r}",
                field="--fail-under",
                expected=f"one of {known}",
            )
        if score.rate is None:
            failures.append(
                f"{gate.dimension}: no turn scored (needs at least {_percent(gate.minimum)})"
            )
        elif score.rate < gate.minimum:
            failures.append(
                f"{gate.dimension}: {_percent(score.rate)} ({score.passed}/{score.scored}) "
                f"is below {_percent(gate.minimum)}"
            )
    return failures


def failed_mean_gates(summary: RepeatSummary, gates: list[PassRateGate]) -> list[str]:
    """``--fail-under`` on a repeat group: one line per gate whose dimension's mean pass
    rate over the runs is below it; an unknown dimension is a user error."""
    failures = []
    for gate in gates:
        dim = summary.dimension(gate.dimension)
        if dim is None:
            known = ", ".join(d.dimension for d in summary.dimensions)
            raise ConfigError(
                f"the runs have no dimension {gate.dimension!r}",
                field="--fail-under",
                expected=f"one of {known}",
            )
        if dim.mean_rate is None or dim.mean_rate < gate.minimum:
            rate = "nothing scored" if dim.mean_rate is None else f"mean {dim.mean_rate:.1%}"
            failures.append(f"{gate.dimension}: {rate} is below {gate.minimum:.1%}")
    return failures


def refuse_incomplete(
    card: Scorecard, records: list[TurnRecord], judgments: list[Judgment], run_dir: object
) -> None:
    """Raise ``RunIncompleteError`` (exit 4) when every turn failed or too much is undecided."""
    if records and all(r.status != "ok" for r in records):
        statuses = ", ".join(sorted({r.status for r in records}))
        raise RunIncompleteError(
            f"{run_dir}: every turn failed ({len(records)} turns: {statuses}); "
            f"see voxbench show {run_dir}"
        )
    if card.too_many_undecided:
        # Why the judges could not decide (a corrupt recording, an unreachable judge) names
        # the file or the service to fix; two distinct reasons are enough to act on.
        reasons = list(dict.fromkeys(j.reasoning for j in judgments if j.judge_failed))[:2]
        because = "; ".join(r for r in reasons if r)
        raise RunIncompleteError(
            f"{run_dir}: too many undecided judgments: {card.undecided_summary()}"
            + (f" ({because})" if because else "")
        )
