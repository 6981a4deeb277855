"""Phase 1 of the deterministic judge: what code can see on one turn, taken alone.

For each turn it matches the calls the agent made against the benchmark's required,
allowed and forbidden calls (with the benchmark's argument matchers), and the agent's
words against the must-mention facts and must-not-claim claims, and compares the
backend's state after the turn with the expected partial state. Phase 2
(``judging.realign``) then looks across turns: calls made one turn early or late, and
failures that are only the echo of an earlier one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from voxbench.benchmarks.backend import state_matches
from voxbench.core.benchmark import ExpectedCall, FactPattern, ScoringRules, ToolUseRules, Turn
from voxbench.core.matching import call_matches, upstream_text_matches, value_matches
from voxbench.core.records import ToolCallRecord, TurnRecord
from voxbench.judging.spoken import fact_holds, spoken_evidence


def describe_call(name: str, args: dict[str, Any]) -> str:
    """``name(a=1, b='x')`` for reports."""
    inner = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{name}({inner})"


def describe_expected(call: ExpectedCall) -> str:
    """An expected call as ``name(args)``."""
    return describe_call(call.name, call.args)


@dataclass
class ShiftedCall:
    """A required call made on a neighbouring turn instead of its own."""

    expected_turn: str
    made_turn: str
    call: str
    when: str
    """``early`` (made on the turn before) or ``late`` (on the turn after)."""
    made_call: int = -1
    """Position of the credited call in the made turn's call list."""


@dataclass
class WrongArguments:
    """A required call made with the right tool but arguments that do not match."""

    expected: str
    made: str
    differences: list[str]
    free_text_only: bool = False
    """Every differing argument is free text (judged for meaning): an LLM judge, when one
    runs, decides whether the made call says the same thing."""


@dataclass
class TurnChecks:
    """Everything code found on one turn; phase 2 moves items between the lists."""

    turn: str
    index: int
    status: str = "ok"
    required: int = 0
    matched: list[str] = field(default_factory=list)
    missing: list[ExpectedCall] = field(default_factory=list)
    """Required calls not made on this turn (nor, after phase 2, on a neighbour)."""
    wrong_args: list[WrongArguments] = field(default_factory=list)
    shifted_out: list[ShiftedCall] = field(default_factory=list)
    """This turn's required calls that were made early or late (penalized here, once)."""
    credited: list[ShiftedCall] = field(default_factory=list)
    """Calls made here that belong to a neighbour's requirement (credited, not spurious)."""
    forbidden: list[str] = field(default_factory=list)
    spurious: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    unmatched_calls: list[int] = field(default_factory=list)
    """Positions (in the record's call list) of calls no requirement of this turn claimed."""
    facts_checked: bool = False
    facts: int = 0
    facts_missing: list[FactPattern] = field(default_factory=list)
    false_claims: list[str] = field(default_factory=list)
    facts_source: str = "text"
    """What the facts were checked on (see ``judging.spoken.spoken_evidence``)."""
    speech_wer: float | None = None
    """Audio runs: WER of the heard audio against the provider transcript."""
    state_checked: bool = False
    state_diff: list[str] = field(default_factory=list)
    rules: ToolUseRules = field(default_factory=ToolUseRules)
    """The benchmark family's tool-use rules: which findings fail the turn."""

    @property
    def penalized_shifts(self) -> list[ShiftedCall]:
        """This turn's required calls made a turn early or late that fail it (by the rules)."""
        rule = {"early": self.rules.early_calls, "late": self.rules.late_calls}
        return [s for s in self.shifted_out if rule[s.when] == "penalize_due_turn"]

    @property
    def tool_problems(self) -> list[str]:
        """Why tool use fails on this turn under its rules, one readable line each.

        Code finds the same things under every rule set; the rules only decide which
        findings fail the turn (see ``core.benchmark.ToolUseRules``)."""
        no_call_rule = self.rules.no_expected_call_turn
        if not self.required and no_call_rule == "pass_any_call":
            return []
        if not self.required and no_call_rule == "pass_if_no_call":
            # Any call not credited to a neighbouring turn fails it, allowed or not.
            lines = [f"forbidden call {c}" for c in self.forbidden]
            lines += [f"call {c} made on a turn that expects none" for c in self.allowed]
            lines += [f"call {c} made on a turn that expects none" for c in self.spurious]
            return lines + [f"malformed call {c}" for c in self.malformed]
        lines = [f"missing call {describe_expected(c)}" for c in self.missing]
        lines += [
            f"wrong arguments: made {w.made} instead of {w.expected} ({'; '.join(w.differences)})"
            for w in self.wrong_args
        ]
        lines += [
            f"{s.call} made one turn {s.when} (on turn {s.made_turn}, credited there)"
            for s in self.penalized_shifts
        ]
        lines += [f"forbidden call {c}" for c in self.forbidden]
        lines += [f"spurious call {c} (neither required nor allowed)" for c in self.spurious]
        lines += [f"malformed call {c}" for c in self.malformed]
        return lines

    @property
    def only_free_text_mismatches(self) -> bool:
        """Tool use fails here only on free-text arguments (an LLM judge may decide them)."""
        problems = self.tool_problems
        return (
            bool(self.wrong_args)
            and len(problems) == len(self.wrong_args)
            and all(w.free_text_only for w in self.wrong_args)
        )

    @property
    def tool_ok(self) -> bool:
        """Tool use passes on this turn."""
        return not self.tool_problems

    @property
    def involves_tools(self) -> bool:
        """The turn expected a call, or the agent made one."""
        return bool(
            self.required
            or self.matched
            or self.credited
            or self.forbidden
            or self.spurious
            or self.malformed
            or self.wrong_args
            or self.allowed
        )

    @property
    def missing_calls(self) -> list[str]:
        """Required calls never made (neither here nor on a neighbour), as text."""
        return [describe_expected(c) for c in self.missing] + [w.expected for w in self.wrong_args]

    def summary(self) -> dict[str, Any]:
        """A JSON-ready digest (for the LLM judge's context and for reports)."""
        return {
            "required_calls": self.required,
            "matched_calls": self.matched,
            "tool_use_problems": self.tool_problems,
            "credited_calls": [
                f"{s.call} (required on turn {s.expected_turn}, made one turn {s.when})"
                for s in self.credited
            ],
            "duplicate_calls": self.duplicates,
            "free_text_argument_mismatches": [
                {"expected": w.expected, "made": w.made, "differences": w.differences}
                for w in self.wrong_args
                if w.free_text_only
            ],
            "facts_missing": [f.name for f in self.facts_missing],
            "false_claims": self.false_claims,
            "state_diff": self.state_diff,
        }


def _usable(call: ToolCallRecord) -> bool:
    return not call.is_duplicate and call.parse_error is None


def is_identifier(arg: str) -> bool:
    """Arguments every rule set compares exactly: ``id`` and ``*_id``."""
    return arg.strip().lower() == "id" or arg.strip().lower().endswith("_id")


def is_free_text(want: ExpectedCall, arg: str, scoring: ScoringRules) -> bool:
    """Whether argument ``arg`` of ``want`` is free text, judged for meaning.

    Under ``upstream_semantic`` every string argument that is not an id is; otherwise the
    arguments the benchmark declares ``free_text``."""
    if scoring.arguments == "upstream_semantic":
        return isinstance(want.args.get(arg), str) and not is_identifier(arg)
    return want.matcher_for(arg).rule == "free_text"


def argument_matches(want: ExpectedCall, arg: str, actual: Any, scoring: ScoringRules) -> bool:
    """Whether a made call's argument ``arg`` matches ``want``'s golden value."""
    golden = want.args[arg]
    if scoring.arguments == "upstream_semantic" and isinstance(golden, str):
        if is_identifier(arg):  # their harness: ids equal once trimmed, case included
            return isinstance(actual, str) and actual.strip() == golden.strip()
        return isinstance(actual, str) and upstream_text_matches(golden, actual)
    return value_matches(want.matcher_for(arg), golden, actual)


def required_call_matches(
    want: ExpectedCall, name: str, args: dict[str, Any], scoring: ScoringRules
) -> bool:
    """Whether a made call satisfies a required call under the benchmark's argument rule."""
    if scoring.arguments == "declared":
        return call_matches(want, name, args)
    return want.name == name and all(
        arg in args and argument_matches(want, arg, args[arg], scoring) for arg in want.args
    )


def _argument_differences(
    want: ExpectedCall, args: dict[str, Any], scoring: ScoringRules
) -> tuple[list[str], bool]:
    """Readable differences, and whether every differing argument is free text."""
    out: list[str] = []
    free = True
    for arg, golden in want.args.items():
        if arg not in args:
            out.append(f"{arg}: missing (expected {golden!r})")
            free = False
        elif not argument_matches(want, arg, args[arg], scoring):
            out.append(f"{arg}: expected {golden!r}, got {args[arg]!r}")
            free = free and is_free_text(want, arg, scoring)
    return out, free and bool(out)


def check_turn(turn: Turn, record: TurnRecord, scoring: ScoringRules | None = None) -> TurnChecks:
    """Phase 1: every deterministic check of ``turn`` on what happened in ``record``, under
    the benchmark's ``scoring`` rules (voxbench's own when None)."""
    scoring = scoring or ScoringRules()
    expect = turn.expect
    checks = TurnChecks(
        turn=turn.id, index=record.index, status=record.status, rules=scoring.tool_use
    )
    checks.required = len(expect.required_calls)
    calls = record.tool_calls
    checks.duplicates = [describe_call(c.name, c.arguments) for c in calls if c.is_duplicate]
    checks.malformed = [
        f"{c.name}({c.raw_arguments or ''}): {c.parse_error}"
        for c in calls
        if c.parse_error is not None
    ]

    claimed: set[int] = set()
    for want in expect.required_calls:
        hit = next(
            (
                i
                for i, c in enumerate(calls)
                if i not in claimed
                and _usable(c)
                and required_call_matches(want, c.name, c.arguments, scoring)
            ),
            None,
        )
        if hit is None:
            checks.missing.append(want)
        else:
            claimed.add(hit)
            checks.matched.append(describe_call(calls[hit].name, calls[hit].arguments))

    for i, call in enumerate(calls):
        if not _usable(call):
            continue
        text = describe_call(call.name, call.arguments)
        if any(call_matches(f, call.name, call.arguments) for f in expect.forbidden_calls):
            checks.forbidden.append(text)
            continue
        if i in claimed:
            continue
        # A repeat of a required call (a retry after a transient error) is justified.
        if any(
            required_call_matches(r, call.name, call.arguments, scoring)
            for r in expect.required_calls
        ):
            continue
        if any(call_matches(a, call.name, call.arguments) for a in expect.allowed_calls):
            checks.allowed.append(text)
        checks.unmatched_calls.append(i)
    # Unmatched calls that are not allowed are spurious until phase 2 credits them.
    checks.spurious = [
        describe_call(calls[i].name, calls[i].arguments)
        for i in checks.unmatched_calls
        if not any(call_matches(a, calls[i].name, calls[i].arguments) for a in expect.allowed_calls)
    ]

    if expect.must_mention or expect.must_not_claim:
        reached = record.status != "ended_early"
        evidence = spoken_evidence(
            record.assistant_text if reached else "", record.heard_text if reached else None
        )
        checks.facts_checked = True
        checks.facts_source = evidence.source
        checks.speech_wer = evidence.speech_wer
        checks.facts = len(expect.must_mention)
        checks.facts_missing = [
            f for f in expect.must_mention if not any(fact_holds(f, t) for t in evidence.texts)
        ]
        checks.false_claims = [
            c.name for c in expect.must_not_claim if any(fact_holds(c, t) for t in evidence.texts)
        ]

    if expect.state is not None:
        checks.state_checked = True
        if record.status == "ended_early":
            checks.state_diff = ["not reached: the conversation had already ended"]
        else:
            checks.state_diff = state_matches(expect.state, record.state_after)
    return checks


def pair_wrong_arguments(
    record: TurnRecord, checks: TurnChecks, scoring: ScoringRules | None = None
) -> None:
    """Report a missing call and a spurious call of the same tool as one wrong-argument call."""
    scoring = scoring or ScoringRules()
    calls = record.tool_calls
    for want in list(checks.missing):
        for i in list(checks.unmatched_calls):
            call = calls[i]
            text = describe_call(call.name, call.arguments)
            if call.name != want.name or text not in checks.spurious:
                continue
            checks.missing.remove(want)
            checks.unmatched_calls.remove(i)
            checks.spurious.remove(text)
            differences, free_text_only = _argument_differences(want, call.arguments, scoring)
            checks.wrong_args.append(
                WrongArguments(
                    expected=describe_expected(want),
                    made=text,
                    differences=differences,
                    free_text_only=free_text_only,
                )
            )
            break
