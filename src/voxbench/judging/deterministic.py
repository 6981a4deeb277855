"""Deterministic checks: everything about a turn that code can decide, no model involved.

- ``tool_use``: every required call made with matching arguments, no forbidden call, no
  spurious call (one that is neither required nor allowed). Scored on every turn, so a
  model that never calls a tool cannot score high and one that calls tools at random fails.
- ``facts``: every must-mention fact said, no must-not-claim claim made (over what the agent
  said: the heard transcript in audio runs). Scored on turns that list facts or claims.
- ``state``: the backend's state after the turn matches the expected partial state. Scored
  on turns that give one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voxbench.benchmarks.backend import state_matches
from voxbench.core.benchmark import Benchmark, ExpectedCall, Turn
from voxbench.core.matching import call_matches
from voxbench.core.records import Judgment, ToolCallRecord, TurnRecord

JUDGE_NAME = "deterministic"
JUDGE_VERSION = "deterministic-1"
DETERMINISTIC_DIMENSIONS = ("tool_use", "facts", "state")


@dataclass
class TurnChecks:
    """What the deterministic checks found on one turn."""

    turn: str
    required: int = 0
    matched: int = 0
    missing: list[str] = field(default_factory=list)
    forbidden_made: list[str] = field(default_factory=list)
    spurious: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    facts: int = 0
    facts_covered: int = 0
    facts_missing: list[str] = field(default_factory=list)
    false_claims: list[str] = field(default_factory=list)
    state_checked: bool = False
    state_diff: list[str] = field(default_factory=list)

    @property
    def involves_tools(self) -> bool:
        """The turn expected a call, or the agent made one."""
        return bool(self.required or self.forbidden_made or self.spurious or self.matched)


def describe_call(name: str, args: dict) -> str:
    """``name(a=1, b='x')`` for reports."""
    inner = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{name}({inner})"


def check_turn(turn: Turn, record: TurnRecord) -> TurnChecks:
    """Run every deterministic check of ``turn`` on what happened in ``record``."""
    checks = TurnChecks(turn=turn.id)
    expect = turn.expect
    calls = [c for c in record.tool_calls if not c.is_duplicate]
    checks.duplicates = [
        describe_call(c.name, c.arguments) for c in record.tool_calls if c.is_duplicate
    ]

    used: set[int] = set()
    checks.required = len(expect.required_calls)
    for want in expect.required_calls:
        hit = _find(want, calls, used)
        if hit is None:
            checks.missing.append(describe_call(want.name, want.args))
        else:
            checks.matched += 1
    for i, call in enumerate(calls):
        if any(call_matches(f, call.name, call.arguments) for f in expect.forbidden_calls):
            checks.forbidden_made.append(describe_call(call.name, call.arguments))
            continue
        if i in used:
            continue
        justified = any(
            call_matches(a, call.name, call.arguments) for a in expect.allowed_calls
        ) or any(call_matches(r, call.name, call.arguments) for r in expect.required_calls)
        if not justified or call.parse_error:
            checks.spurious.append(describe_call(call.name, call.arguments))

    said = record.spoken_text
    checks.facts = len(expect.must_mention)
    for fact in expect.must_mention:
        if fact.matches(said):
            checks.facts_covered += 1
        else:
            checks.facts_missing.append(fact.name)
    checks.false_claims = [claim.name for claim in expect.must_not_claim if claim.matches(said)]

    if expect.state is not None and record.status != "ended_early":
        checks.state_checked = True
        checks.state_diff = state_matches(expect.state, record.state_after)
    elif expect.state is not None:
        checks.state_checked = True
        checks.state_diff = ["the conversation had already ended"]
    return checks


def _find(want: ExpectedCall, calls: list[ToolCallRecord], used: set[int]) -> int | None:
    for i, call in enumerate(calls):
        if i not in used and not call.parse_error and call_matches(want, call.name, call.arguments):
            used.add(i)
            return i
    return None


def judgments_for(turn: Turn, checks: TurnChecks) -> list[Judgment]:
    """Turn the checks of one turn into per-dimension judgments."""
    out: list[Judgment] = []
    tool_problems = (
        [f"missing call {c}" for c in checks.missing]
        + [f"forbidden call {c}" for c in checks.forbidden_made]
        + [f"spurious call {c}" for c in checks.spurious]
    )
    if checks.required:
        summary = f"{checks.matched}/{checks.required} required calls made"
    else:
        summary = "no call expected"
    out.append(
        Judgment(
            turn=turn.id,
            dimension="tool_use",
            passed=not tool_problems,
            reasoning=summary + ("; " + "; ".join(tool_problems) if tool_problems else ""),
            evidence=[*tool_problems, *(f"duplicate call {d}" for d in checks.duplicates)],
            judge=JUDGE_NAME,
            judge_version=JUDGE_VERSION,
        )
    )
    if turn.expect.must_mention or turn.expect.must_not_claim:
        problems = [f"did not mention {f}" for f in checks.facts_missing] + [
            f"claimed {c}" for c in checks.false_claims
        ]
        out.append(
            Judgment(
                turn=turn.id,
                dimension="facts",
                passed=not problems,
                reasoning=f"{checks.facts_covered}/{checks.facts} facts mentioned"
                + (f", {len(checks.false_claims)} false claims" if checks.false_claims else ""),
                evidence=problems,
                judge=JUDGE_NAME,
                judge_version=JUDGE_VERSION,
            )
        )
    if checks.state_checked:
        out.append(
            Judgment(
                turn=turn.id,
                dimension="state",
                passed=not checks.state_diff,
                reasoning="backend state as expected"
                if not checks.state_diff
                else "backend state differs",
                evidence=checks.state_diff,
                judge=JUDGE_NAME,
                judge_version=JUDGE_VERSION,
            )
        )
    return out


def judge_deterministic(
    benchmark: Benchmark, records: list[TurnRecord]
) -> tuple[list[Judgment], dict[str, TurnChecks]]:
    """Judgments and raw checks for every recorded turn."""
    by_id = {t.id: t for t in benchmark.turns}
    judgments: list[Judgment] = []
    checks: dict[str, TurnChecks] = {}
    for record in records:
        turn = by_id.get(record.turn)
        if turn is None:
            continue
        found = check_turn(turn, record)
        checks[record.turn] = found
        judgments += judgments_for(turn, found)
    return judgments, checks
