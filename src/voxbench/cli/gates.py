"""How an evaluation ends for CI: incomplete (exit 4), below a ``--fail-under`` gate (exit 1).

An incomplete evaluation wins over a gate: when every turn failed or too many judgments are
undecided, the pass rates do not describe the system under test.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape

from voxbench.core.errors import ConfigError, RunIncompleteError
from voxbench.core.records import Judgment, Scorecard, TurnRecord

FAIL_UNDER_HELP = (
    "CI gate, repeatable: exit 1 when DIM's pass rate is below RATE. DIM is a scorecard "
    "dimension or strict_pass; RATE is 0-1 or a percentage (0.9, 90%)."
)
GATE_FAILED_EXIT = 1
"""Exit code when the evaluation completed but a gate failed."""


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


def enforce_gates(card: Scorecard, gates: list[PassRateGate], console: Console) -> None:
    """Print each failed gate and exit 1 when there is one; silent when all pass."""
    failures = failed_gates(card, gates)
    for line in failures:
        console.print(f"[red]below --fail-under[/red] {escape(line)}")
    if failures:
        # SystemExit, not typer.Exit: the root runs click without standalone mode.
        raise SystemExit(GATE_FAILED_EXIT)
    if gates:
        console.print("gates passed: " + ", ".join(escape(str(g)) for g in gates))


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
