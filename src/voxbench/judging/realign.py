"""Phase 2, first half: realign required calls made one turn early or late.

A required call missing on turn *i* but made (and otherwise unclaimed) on turn *i-1* or
*i+1* is one mistake, not two: the call is credited on the turn where it was made (it is
not spurious there), and the timing slip is counted once, on turn *i*, where the action
was due. Without this, a model that acts one turn late would lose both turns. After
realignment, a missing call and a spurious call of the same tool on one turn are reported
as a single wrong-argument call.
"""

from __future__ import annotations

from voxbench.core.benchmark import ScoringRules, Turn
from voxbench.core.records import TurnRecord
from voxbench.judging.checks import (
    ShiftedCall,
    TurnChecks,
    describe_call,
    describe_expected,
    pair_wrong_arguments,
    required_call_matches,
)


def realign_calls(
    turns: list[Turn],
    records: list[TurnRecord],
    checks: list[TurnChecks],
    scoring: ScoringRules | None = None,
) -> None:
    """Credit calls made one turn off their requirement (in place, over the whole run).

    ``turns``, ``records`` and ``checks`` are parallel lists in conversation order. Only
    turns that are adjacent in the benchmark (index differs by one) are realigned, so a run
    of selected turns never credits a call across a gap. Whether a shifted call still
    fails the turn it was due on is the benchmark's rule (``TurnChecks.rules``).
    """
    scoring = scoring or ScoringRules()
    for pos, (turn, check) in enumerate(zip(turns, checks, strict=True)):
        for want in list(check.missing):
            for other, when in ((pos - 1, "early"), (pos + 1, "late")):
                if not 0 <= other < len(checks):
                    continue
                if abs(records[other].index - records[pos].index) != 1:
                    continue
                neighbour = checks[other]
                calls = records[other].tool_calls
                hit = next(
                    (
                        i
                        for i in neighbour.unmatched_calls
                        if required_call_matches(want, calls[i].name, calls[i].arguments, scoring)
                    ),
                    None,
                )
                if hit is None:
                    continue
                made = describe_call(calls[hit].name, calls[hit].arguments)
                shift = ShiftedCall(
                    expected_turn=turn.id,
                    made_turn=neighbour.turn,
                    call=describe_expected(want),
                    when=when,
                    made_call=hit,
                )
                neighbour.unmatched_calls.remove(hit)
                if made in neighbour.spurious:
                    neighbour.spurious.remove(made)
                if made in neighbour.allowed:
                    neighbour.allowed.remove(made)
                neighbour.credited.append(shift)
                check.missing.remove(want)
                check.shifted_out.append(shift)
                break
    for record, check in zip(records, checks, strict=True):
        pair_wrong_arguments(record, check, scoring)
