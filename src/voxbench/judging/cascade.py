"""Phase 2, second half: count each failure once, on its root cause.

A missed call (or a registration that never went through) leaves the backend in a wrong
state for every later turn that checks it. Those later failures are echoes of a mistake
already penalized, so they are recorded as *absorbed*, naming the root cause, instead of
being counted again.

The decision is made by replaying, not by guessing: the recorded calls are re-executed on
a fresh copy of the benchmark's backend simulator, with the already-penalized turns
*corrected* (their golden calls executed instead of what the agent did). If the expected
state then holds, the failure is fully explained by those roots; the roots actually needed
are named. A failure the corrections do not explain stands, and becomes a root itself. If
replaying the agent's own calls does not reproduce the recorded states (a backend that
changed, a hand-edited transcript), nothing is absorbed and the reason is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from voxbench.benchmarks.backend import BackendSpec, ToolBackend, state_matches
from voxbench.core.benchmark import Benchmark, Turn
from voxbench.core.records import TurnRecord
from voxbench.judging.checks import TurnChecks

TRANSIENT_ERRORS = frozenset({"INTERNAL_ERROR", "TEMPORARILY_UNAVAILABLE", "TIMEOUT"})
"""Errors a correct agent retries once (the benchmarks' system prompts ask for it)."""
_NEVER_EXECUTED = frozenset({"TOO_MANY_CALLS", "MALFORMED_ARGUMENTS"})


@dataclass(frozen=True)
class Root:
    """A penalized failure that later failures may be echoes of."""

    pos: int
    turn: str
    dimension: str
    touches: frozenset[int]
    """Positions whose calls change when this root is corrected."""

    @property
    def label(self) -> str:
        """``turn <id> <dimension>``: how absorbed judgments name their root."""
        return f"turn {self.turn} {self.dimension}"


@dataclass
class EndState:
    """The backend's final state against the last expected value of every state key."""

    expected: dict[str, Any]
    actual: dict[str, Any]
    diff: list[str]
    explained_by: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """The final state is as expected."""
        return not self.diff


@dataclass
class CascadeResult:
    """What phase 2 absorbed, and the run's end-state check."""

    state_absorbed: dict[int, list[str]] = field(default_factory=dict)
    facts_absorbed: dict[int, str] = field(default_factory=dict)
    """Position → the root label a turn's missing action facts are counted on."""
    roots: list[Root] = field(default_factory=list)
    end_state: EndState | None = None
    note: str | None = None


def _transient(result: Any) -> bool:
    return isinstance(result, dict) and result.get("error") in TRANSIENT_ERRORS


class Replay:
    """Re-executes a run's calls on a fresh backend, optionally correcting some turns."""

    def __init__(
        self,
        benchmark: Benchmark,
        turns: list[Turn],
        records: list[TurnRecord],
        checks: list[TurnChecks],
    ) -> None:
        self.spec = BackendSpec.model_validate(benchmark.backend)
        self.tool_names = {t.name for t in benchmark.tools}
        self.turns, self.records, self.checks = turns, records, checks
        pos_of = {c.turn: p for p, c in enumerate(checks)}
        # (made position, call position) → position of the turn the call was credited to
        self.credited_to: dict[tuple[int, int], int] = {
            (p, s.made_call): pos_of[s.expected_turn]
            for p, c in enumerate(checks)
            for s in c.credited
        }

    def snapshots(
        self, corrected: frozenset[int] = frozenset(), upto: int | None = None
    ) -> list[dict[str, Any]]:
        """Backend snapshot after each position up to ``upto`` (all by default)."""
        backend = ToolBackend(self.spec, self.tool_names)
        last = len(self.records) - 1 if upto is None else upto
        out: list[dict[str, Any]] = []
        for pos in range(last + 1):
            record = self.records[pos]
            backend.begin_turn(record.turn)
            if record.status != "ended_early":
                for name, args in self._calls(pos, corrected):
                    result, _ = backend.call(name, args)
                    if pos in corrected and _transient(result):
                        backend.call(name, args)
            out.append(backend.snapshot())
        return out

    def _calls(self, pos: int, corrected: frozenset[int]) -> Iterator[tuple[str, dict[str, Any]]]:
        record = self.records[pos]
        if pos in corrected:
            for want in self.turns[pos].expect.required_calls:
                yield want.name, dict(want.args)
        for i, call in enumerate(record.tool_calls):
            if call.parse_error is not None:
                continue
            if isinstance(call.result, dict) and call.result.get("error") in _NEVER_EXECUTED:
                continue
            owner = self.credited_to.get((pos, i))
            if pos in corrected and (owner is None or owner in corrected):
                continue  # replaced by the golden calls of this (or the owner's) turn
            if pos not in corrected and owner is not None and owner in corrected:
                continue  # the owner's correction makes this call on time instead
            yield call.name, call.arguments


def _merged_expected(turns: list[Turn]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for turn in turns:
        for key, value in (turn.expect.state or {}).items():
            if isinstance(value, dict):
                merged.setdefault(key, {}).update(value)
            else:
                merged[key] = value
    return merged


def _explain(
    replay: Replay, roots: list[Root], pos: int, expected: dict[str, Any]
) -> list[str] | None:
    """Root labels whose correction makes ``expected`` hold at ``pos``; None if none do."""
    candidates = [r for r in roots if min(r.touches) <= pos]
    if not candidates:
        return None

    def holds(chosen: list[Root]) -> bool:
        corrected = frozenset(r.pos for r in chosen)
        return not state_matches(expected, replay.snapshots(corrected, upto=pos)[-1])

    if not holds(candidates):
        return None
    needed = [r for r in candidates if not holds([c for c in candidates if c is not r])]
    return [r.label for r in (needed or candidates)]


def absorb_cascades(
    benchmark: Benchmark,
    turns: list[Turn],
    records: list[TurnRecord],
    checks: list[TurnChecks],
) -> CascadeResult:
    """Find state failures that only echo an earlier penalized one, and check the end state."""
    result = CascadeResult()
    if not records:
        return result
    replay = Replay(benchmark, turns, records, checks)
    roots = [
        Root(
            pos=p,
            turn=c.turn,
            dimension="tool_use",
            touches=frozenset({p, *(replay_pos(checks, s.made_turn) for s in c.shifted_out)}),
        )
        for p, c in enumerate(checks)
        if not c.tool_ok and c.status != "ended_early"
    ]
    replayed = replay.snapshots()
    diverged = next(
        (r.turn for r, snap in zip(records, replayed, strict=True) if snap != r.state_after),
        None,
    )
    if diverged is not None:
        result.note = (
            f"replaying the recorded calls does not reproduce the backend state of turn "
            f"{diverged}; cascading failures are not absorbed"
        )
    for pos, check in enumerate(checks):
        if not check.state_checked or not check.state_diff or check.status == "ended_early":
            continue
        explained = None
        if diverged is None:
            explained = _explain(replay, roots, pos, turns[pos].expect.state or {})
        if explained:
            result.state_absorbed[pos] = explained
        else:
            roots.append(
                Root(pos=pos, turn=check.turn, dimension="state", touches=frozenset({pos}))
            )
    roots.sort(key=lambda r: r.pos)
    result.roots = roots

    # An agent that did not (or could not) act should not report the action: its missing
    # action facts are the same failure as the missing action.
    state_roots = {r.pos for r in roots if r.dimension == "state"}
    for pos, check in enumerate(checks):
        if check.status == "ended_early" or not any(
            f.kind == "action" for f in check.facts_missing
        ):
            continue
        if check.missing or check.wrong_args or check.shifted_out:
            result.facts_absorbed[pos] = f"turn {check.turn} tool_use"
        elif pos in result.state_absorbed:
            result.facts_absorbed[pos] = result.state_absorbed[pos][0]
        elif pos in state_roots:
            result.facts_absorbed[pos] = f"turn {check.turn} state"

    expected = _merged_expected(turns)
    if expected:
        actual = records[-1].state_after
        diff = state_matches(expected, actual)
        end = EndState(expected=expected, actual=actual, diff=diff)
        if diff and diverged is None:
            end.explained_by = _explain(replay, roots, len(records) - 1, expected) or []
        result.end_state = end
    return result


def replay_pos(checks: list[TurnChecks], turn_id: str) -> int:
    """Position of turn ``turn_id`` in the run's parallel lists."""
    return next(p for p, c in enumerate(checks) if c.turn == turn_id)
