"""How an evaluation ends for CI: below a ``--fail-under`` gate it prints why and exits 1.

Which gates fail, and when a run is too incomplete to gate (exit 4, raised first), is
decided by ``evaluation.gates``; this module prints the outcome and picks the exit code.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from voxbench.core.records import Scorecard
from voxbench.evaluation.gates import PassRateGate, failed_gates

FAIL_UNDER_HELP = (
    "CI gate, repeatable: exit 1 when DIM's pass rate is below RATE. DIM is a scorecard "
    "dimension or strict_pass; RATE is 0-1 or a percentage (0.9, 90%)."
)
GATE_FAILED_EXIT = 1
"""Exit code when the evaluation completed but a gate failed."""


def enforce_gates(card: Scorecard, gates: list[PassRateGate], console: Console) -> None:
    """The scorecard's gates: print each failed one and exit 1 (see ``exit_on_failures``)."""
    exit_on_failures(failed_gates(card, gates), gates, console)


def exit_on_failures(failures: list[str], gates: list[PassRateGate], console: Console) -> None:
    """Print each failed gate and exit 1 when there is one; else name the gates passed."""
    for line in failures:
        console.print(f"[red]below --fail-under[/red] {escape(line)}")
    if failures:
        # SystemExit, not typer.Exit: the root runs click without standalone mode.
        raise SystemExit(GATE_FAILED_EXIT)
    if gates:
        console.print("gates passed: " + ", ".join(escape(str(g)) for g in gates))
