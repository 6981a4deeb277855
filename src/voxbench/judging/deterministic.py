"""The deterministic judge: everything about a run that code can decide, no model involved.

Dimensions (each turn that the rule applies to gets exactly one judgment, so denominators
come from the benchmark, never from what a judge returned):

- ``tool_use`` (every turn): every required call made with matching arguments, no forbidden
  call, no spurious call (neither required nor allowed). A model that never calls a tool
  cannot score high, and one that calls tools at random fails. A call made one turn early
  or late is credited where it was made and counted once, on the turn it was due. These
  are voxbench's rules; a benchmark (or a compat profile) may state its family's own
  (``core.benchmark.ScoringRules``: what a turn expecting no call needs, whether an early
  or a late call satisfies the turn it was due on, how free-text arguments match).
- ``facts`` (turns listing must-mention facts or must-not-claim claims): over what the agent
  said (the heard transcript in audio runs). A false claim always fails; a missing
  report of an action the agent did not perform is counted on that missing action.
- ``state`` (turns giving an expected backend state): the state after the turn. A failure
  that only echoes an earlier penalized one is absorbed, naming the root cause.

Turns the agent never reached (it ended the conversation) fail every dimension. The
run-level end-state check compares the final backend state with the last expected value of
every state key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from voxbench.audio.textnorm import SPOKEN_ENGLISH_NORMALIZER
from voxbench.core.benchmark import Benchmark, ScoringRules, Turn
from voxbench.core.records import CheckTotals, EndState, Judgment, TurnRecord
from voxbench.judging.base import JudgeContext, JudgeFindings
from voxbench.judging.cascade import CascadeResult, absorb_cascades
from voxbench.judging.checks import TurnChecks, check_turn, describe_call
from voxbench.judging.realign import realign_calls
from voxbench.judging.spoken import FIDELITY_MAX_WER

JUDGE_NAME = "deterministic"
JUDGE_VERSION = "deterministic-2"
"""Bump whenever a rule below changes what a verdict is."""
DETERMINISTIC_DIMENSIONS = ("tool_use", "facts", "state")
NOT_REACHED = "not attempted: the conversation had already ended"


@dataclass
class DeterministicResult:
    """Judgments, the raw findings per turn, and run-level totals."""

    judgments: list[Judgment]
    checks: dict[str, TurnChecks]
    cascade: CascadeResult
    totals: CheckTotals
    tool_turns: list[str] = field(default_factory=list)
    """Ids of the turns that involve tools (the scorecard rates tool use over them)."""


def _judgment(turn: Turn, dimension: str, passed: bool, reasoning: str, **kw: Any) -> Judgment:
    return Judgment(
        turn=turn.id,
        dimension=dimension,
        passed=passed,
        reasoning=reasoning,
        judge=JUDGE_NAME,
        judge_version=JUDGE_VERSION,
        **kw,
    )


def _tool_use(turn: Turn, c: TurnChecks) -> Judgment:
    details = {
        "matched": c.matched,
        "missing": c.missing_calls,
        "shifted": [vars(s) for s in c.shifted_out],
        "credited": [vars(s) for s in c.credited],
        "wrong_arguments": [vars(w) for w in c.wrong_args],
        "forbidden": c.forbidden,
        "spurious": c.spurious,
        "malformed": c.malformed,
        "duplicates": c.duplicates,
    }
    if c.status == "ended_early":
        return _judgment(turn, "tool_use", False, NOT_REACHED, details=details)
    problems = c.tool_problems
    if c.required:
        on_time = c.required - len(c.missing) - len(c.wrong_args) - len(c.shifted_out)
        summary = f"{on_time}/{c.required} required calls made on time"
        excused = [s for s in c.shifted_out if s not in c.penalized_shifts]
        if excused:
            summary += "; " + ", ".join(
                f"{s.call} made one turn {s.when} counts here (the benchmark's rule)"
                for s in excused
            )
    elif c.rules.no_expected_call_turn == "pass_any_call" and (c.spurious or c.forbidden):
        summary = "no call required on this turn; any call passes (the benchmark's rule)"
    elif c.matched or c.credited or c.allowed:
        summary = "no call required on this turn"
    else:
        summary = "no call required, none made"
    notes = [
        f"credited {s.call}: required on turn {s.expected_turn}, made here one turn {s.when}"
        for s in c.credited
    ]
    notes += [f"allowed call {a}" for a in c.allowed]
    notes += [f"duplicate call {d} (reported, not penalized)" for d in c.duplicates]
    reasoning = summary + ("; " + "; ".join(problems) if problems else "")
    return _judgment(
        turn, "tool_use", not problems, reasoning, evidence=[*problems, *notes], details=details
    )


def _facts(turn: Turn, c: TurnChecks, absorbed_root: str | None) -> Judgment:
    if c.status == "ended_early":
        return _judgment(turn, "facts", False, NOT_REACHED)
    missing = [f"did not mention {f.name}" for f in c.facts_missing]
    claims = [f"claimed {claim} (the benchmark marks this false)" for claim in c.false_claims]
    counted = [
        f"did not mention {f.name}"
        for f in c.facts_missing
        if not (absorbed_root and f.kind == "action")
    ]
    reasoning = f"{c.facts - len(c.facts_missing)}/{c.facts} facts mentioned"
    if c.speech_wer is not None:
        reasoning += (
            f" (checked on: {c.facts_source}; heard-vs-transcript WER {c.speech_wer:.2f}, "
            f"{SPOKEN_ENGLISH_NORMALIZER} normaliser)"
        )
    if c.false_claims:
        reasoning += f", {len(c.false_claims)} false claim(s)"
    passed = not counted and not claims
    absorbed = absorbed_root if (passed and missing) else None
    if absorbed:
        reasoning += f"; the unreported action was never performed: counted on {absorbed}"
    return _judgment(
        turn,
        "facts",
        passed,
        reasoning,
        evidence=[*claims, *missing],
        absorbed_by=absorbed,
        details={
            "missing": [f.name for f in c.facts_missing],
            "false_claims": c.false_claims,
            "source": c.facts_source,
            "speech_wer": c.speech_wer,
            "speech_wer_normalizer": SPOKEN_ENGLISH_NORMALIZER
            if c.speech_wer is not None
            else None,
        },
    )


def _state(turn: Turn, c: TurnChecks, roots: list[str] | None) -> Judgment:
    if not c.state_diff:
        return _judgment(turn, "state", True, "backend state as expected")
    if roots:
        return _judgment(
            turn,
            "state",
            True,
            "backend state differs only because of an earlier penalized failure ("
            + ", ".join(roots)
            + ")",
            evidence=c.state_diff,
            absorbed_by=roots[0],
            details={"diff": c.state_diff, "roots": roots},
        )
    reason = NOT_REACHED if c.status == "ended_early" else "backend state differs"
    return _judgment(
        turn, "state", False, reason, evidence=c.state_diff, details={"diff": c.state_diff}
    )


def totals_of(checks: list[TurnChecks], cascade: CascadeResult) -> CheckTotals:
    """Run-level totals of the deterministic findings (for the scorecard)."""
    tool_turns = [c for c in checks if c.involves_tools]
    heard = [c.speech_wer for c in checks if c.speech_wer is not None]
    end = cascade.end_state
    return CheckTotals(
        turns=len(checks),
        tool_use_passed=sum(c.tool_ok and c.status != "ended_early" for c in checks),
        tool_turns=len(tool_turns),
        tool_turns_passed=sum(c.tool_ok and c.status != "ended_early" for c in tool_turns),
        required_calls=sum(c.required for c in checks),
        required_calls_on_time=sum(len(c.matched) for c in checks),
        calls_early=sum(s.when == "early" for c in checks for s in c.shifted_out),
        calls_late=sum(s.when == "late" for c in checks for s in c.shifted_out),
        missing_calls=sum(len(c.missing) for c in checks),
        wrong_argument_calls=sum(len(c.wrong_args) for c in checks),
        forbidden_calls_made=sum(len(c.forbidden) for c in checks),
        spurious_calls=sum(len(c.spurious) for c in checks),
        malformed_calls=sum(len(c.malformed) for c in checks),
        duplicate_calls=sum(len(c.duplicates) for c in checks),
        facts=sum(c.facts for c in checks),
        facts_covered=sum(c.facts - len(c.facts_missing) for c in checks),
        false_claims=sum(len(c.false_claims) for c in checks),
        state_checks=sum(c.state_checked for c in checks),
        state_checks_passed=sum(c.state_checked and not c.state_diff for c in checks),
        state_failures_absorbed=len(cascade.state_absorbed),
        # Audio runs: how well the agent's audio matches its own transcript.
        speech_wer_mean=round(sum(heard) / len(heard), 4) if heard else None,
        speech_uncorroborated_turns=sum(w > FIDELITY_MAX_WER for w in heard) if heard else None,
        end_state=None
        if end is None
        else EndState(
            passed=end.passed, diff=end.diff, explained_by=end.explained_by, expected=end.expected
        ),
        cascade_note=cascade.note or None,
    )


def judge_deterministic(
    benchmark: Benchmark, records: list[TurnRecord], scoring: ScoringRules | None = None
) -> DeterministicResult:
    """Judge every recorded turn of a run (records in conversation order) under ``scoring``
    (default: the benchmark's own rules)."""
    scoring = scoring or benchmark.scoring
    by_id = {t.id: t for t in benchmark.turns}
    pairs = [(by_id[r.turn], r) for r in records if r.turn in by_id]
    turns = [t for t, _ in pairs]
    kept = [r for _, r in pairs]
    checks = [check_turn(t, r, scoring) for t, r in pairs]
    realign_calls(turns, kept, checks, scoring)
    cascade = absorb_cascades(benchmark, turns, kept, checks)
    judgments: list[Judgment] = []
    for pos, (turn, c) in enumerate(zip(turns, checks, strict=True)):
        judgments.append(_tool_use(turn, c))
        if c.facts_checked:
            judgments.append(_facts(turn, c, cascade.facts_absorbed.get(pos)))
        if c.state_checked:
            judgments.append(_state(turn, c, cascade.state_absorbed.get(pos)))
    return DeterministicResult(
        judgments=judgments,
        checks={c.turn: c for c in checks},
        cascade=cascade,
        totals=totals_of(checks, cascade),
        tool_turns=[c.turn for c in checks if c.involves_tools],
    )


class DeterministicJudge:
    """Every check code can decide, on every recorded turn (as a ``RunJudge``)."""

    name = JUDGE_NAME
    version = JUDGE_VERSION

    def skip_reason(self, context: JudgeContext) -> str | None:
        """Always applies: every run has turns to check."""
        return None

    async def judge(self, context: JudgeContext) -> JudgeFindings:
        """Judge every recorded turn; the findings keep the per-turn ``TurnChecks``."""
        result = judge_deterministic(context.benchmark, context.records, context.scoring)
        return JudgeFindings(
            judgments=result.judgments,
            stats=result.totals,
            labels=[f"{JUDGE_NAME}@{JUDGE_VERSION}"],
            details=result,
        )


__all__ = [
    "DETERMINISTIC_DIMENSIONS",
    "JUDGE_NAME",
    "JUDGE_VERSION",
    "DeterministicJudge",
    "DeterministicResult",
    "describe_call",
    "judge_deterministic",
]
