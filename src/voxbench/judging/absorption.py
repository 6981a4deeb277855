"""Merge the LLM judge's verdicts with the deterministic ones, counting each failure once.

Rules (all in code, so every move is visible in the judgment it touches):

- A missing, wrong or extra tool call is counted on ``tool_use`` only: an
  ``instruction_following`` or ``kb_grounding`` failure whose cause is ``tool_call`` is
  absorbed into that turn's ``tool_use`` (or set aside if code found no tool problem:
  code owns tool calls).
- A required call missed (or made a turn late) because the agent over-clarified is counted on
  ``ambiguity_handling`` when the turn scores it; missed because it forgot earlier state, on
  ``state_tracking`` when the turn scores it. Otherwise it stays on ``tool_use``, and another
  dimension failed for that same cause is absorbed into it.
- A required call missed because asking was right (the judge says the request was genuinely
  ambiguous, and passes ``ambiguity_handling``) is not a failure, on turns that score
  ambiguity only.
- Free-text arguments: a required call whose only fault is a free-text argument code could
  not match word for word passes when the judge says the made argument means the same
  (``free_text_arguments_equivalent``); ids, dates and enums stay code's.
- Deterministic guard: the LLM never overrides code's facts. A turn on which the agent made a
  must-not-claim claim cannot pass ``kb_grounding``, whatever the judge said.
- The rules run as one pass over all of a run's judgments, after every judge has run
  (``absorption_pass``).
- Absorption chains are resolved to the judgment that finally carries the failure; if that
  root turns out not to be a failure, the absorbed failure is counted where it happened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from voxbench.core.records import Judgment
from voxbench.judging.checks import TurnChecks
from voxbench.judging.llm_judge import TurnOutcome
from voxbench.judging.prompt import TurnVerdict, verdicts_for

ABSORBING = {"over_clarification": "ambiguity_handling", "forgotten_state": "state_tracking"}
"""Cause → the dimension a failure with that cause is counted on, when the turn scores it."""


def _label(turn: str, dimension: str) -> str:
    return f"turn {turn} {dimension}"


def llm_judgments(outcome: TurnOutcome, name: str, version: str) -> dict[str, Judgment]:
    """The LLM judge's judgments of one turn, by dimension, before absorption."""
    common: dict[str, Any] = {"turn": outcome.turn, "judge": name, "judge_version": version}
    out: dict[str, Judgment] = {}
    if outcome.decided_by_code is not None:
        for dim in outcome.dimensions:
            out[dim] = Judgment(
                **common | {"judge": "deterministic", "judge_version": ""},
                dimension=dim,
                passed=False,
                reasoning=outcome.decided_by_code,
            )
        return out
    if outcome.verdict is None:
        for dim in outcome.dimensions:
            out[dim] = Judgment(
                **common,
                dimension=dim,
                passed=None,
                judge_failed=True,
                reasoning=f"judge failed after {outcome.attempts} attempt(s): {outcome.error}",
            )
        return out
    details = {"cache_key": outcome.cache_key, "cached": outcome.cached}
    for v in verdicts_for(outcome.verdict, outcome.dimensions):
        out[v.dimension] = Judgment(
            **common,
            dimension=v.dimension,
            passed=v.passed,
            reasoning=v.reasoning,
            evidence=list(v.evidence),
            details=details | {"cause": v.cause} if v.cause else dict(details),
        )
    return out


def _fail(j: Judgment, why: str, cause: str) -> Judgment:
    if j.passed is False:
        return j
    return j.model_copy(
        update={
            "passed": False,
            "reasoning": f"{why} ({j.reasoning})" if j.reasoning else why,
            "details": j.details | {"cause": cause, "set_by": "absorption"},
        }
    )


def _absorb(j: Judgment, into: str, why: str) -> Judgment:
    return j.model_copy(
        update={
            "passed": True,
            "absorbed_by": into,
            "reasoning": f"{why}; counted on {into}. Originally: {j.reasoning}",
        }
    )


def combine_turn(
    tool_use: Judgment,
    checks: TurnChecks,
    llm: dict[str, Judgment],
    verdict: TurnVerdict | None,
    judge_name: str,
) -> tuple[Judgment, list[Judgment]]:
    """Apply the absorption rules to one turn: the (possibly moved) tool_use judgment and the
    LLM dimensions' judgments (``llm``, by dimension, in the order given)."""
    turn = tool_use.turn
    llm = dict(llm)
    # A call not made when due (missing, or made a turn late) and nothing else wrong with
    # tool use: the only tool-use failure whose cause the LLM judge may explain.
    late = [s for s in checks.shifted_out if s.when == "late"]
    pure_miss = bool(checks.missing or late) and not (
        checks.wrong_args
        or len(late) != len(checks.shifted_out)
        or checks.forbidden
        or checks.spurious
        or checks.malformed
    )
    cause = verdict.missing_call_cause if verdict is not None else None
    if (
        tool_use.passed is False
        and tool_use.absorbed_by is None
        and checks.only_free_text_mismatches
        and verdict is not None
        and verdict.free_text_arguments_equivalent is True
    ):
        tool_use = tool_use.model_copy(
            update={
                "passed": True,
                "reasoning": "the free-text arguments code could not match word for word mean "
                "the same as the expected ones (judged by the LLM judge); code found: "
                + tool_use.reasoning,
                "details": tool_use.details | {"decided_by": judge_name},
            }
        )
    if pure_miss and tool_use.passed is False and tool_use.absorbed_by is None:
        target = ABSORBING.get(cause or "")
        if target in llm and llm[target].passed is not None:
            # target is one of ABSORBING's values only when cause is one of its keys, and
            # cause is set only from a verdict
            assert cause is not None and verdict is not None
            llm[target] = _fail(
                llm[target],
                f"the required call was not made because of {cause.replace('_', ' ')}",
                cause,
            )
            tool_use = _absorb(
                tool_use,
                _label(turn, target),
                f"missing call explained by {cause.replace('_', ' ')} ({verdict.missing_call_reasoning})",
            )
        elif (
            cause == "appropriate_clarification"
            and verdict is not None  # always: cause is set only from a verdict
            and llm.get("ambiguity_handling") is not None
            and llm["ambiguity_handling"].passed is True
        ):
            tool_use = tool_use.model_copy(
                update={
                    "passed": True,
                    "reasoning": "no call was due yet: the request was genuinely ambiguous and "
                    f"the assistant asked ({verdict.missing_call_reasoning}); code found: "
                    + tool_use.reasoning,
                    "details": tool_use.details | {"decided_by": judge_name},
                }
            )
    for dim, j in list(llm.items()):
        if j.passed is not False or j.absorbed_by:
            continue
        why = j.details.get("cause")
        if why == "tool_call":
            if tool_use.passed is False or tool_use.absorbed_by:
                llm[dim] = _absorb(
                    j, tool_use.absorbed_by or _label(turn, "tool_use"), "a tool-call problem"
                )
            else:
                llm[dim] = j.model_copy(
                    update={
                        "passed": True,
                        "reasoning": "set aside: tool calls are judged by code, which found no "
                        f"problem. Judge said: {j.reasoning}",
                        "details": j.details | {"set_aside": True},
                    }
                )
        elif why in ABSORBING and ABSORBING[why] != dim and ABSORBING[why] in llm:
            target = ABSORBING[why]
            llm[target] = _fail(
                llm[target], f"{dim} failed because of {why.replace('_', ' ')}", why
            )
            llm[dim] = _absorb(j, _label(turn, target), why.replace("_", " "))
        elif why in ABSORBING and ABSORBING[why] not in llm and pure_miss:
            # Not scored here: the over-clarification (or lapse) is the missing call itself.
            holder = tool_use.absorbed_by or _label(turn, "tool_use")
            llm[dim] = _absorb(j, holder, f"{why.replace('_', ' ')} that left the call unmade")
    kb = llm.get("kb_grounding")
    if kb is not None and kb.passed is not False and checks.false_claims:
        llm["kb_grounding"] = kb.model_copy(
            update={
                "passed": False,
                "absorbed_by": None,
                "reasoning": "deterministic guard: the assistant made a claim the benchmark marks "
                f"false ({'; '.join(checks.false_claims)}); the LLM judge's pass is overridden. "
                f"Judge said: {kb.reasoning}",
                "details": kb.details | {"guard": "must_not_claim"},
            }
        )
    return tool_use, list(llm.values())


def absorption_pass(
    judgments: list[Judgment],
    checks: Mapping[str, TurnChecks],
    outcomes: Sequence[TurnOutcome],
    judge_name: str,
) -> list[Judgment]:
    """Apply the absorption rules to every turn the LLM judge judged, in place of its
    judgments and the deterministic ``tool_use`` of the same turn; order is kept."""
    out = list(judgments)
    for outcome in outcomes:
        asked = set(outcome.dimensions)
        tool_pos = next(
            i
            for i, j in enumerate(out)
            if j.turn == outcome.turn and j.dimension == "tool_use" and j.judge == "deterministic"
        )
        llm_pos = [i for i, j in enumerate(out) if j.turn == outcome.turn and j.dimension in asked]
        llm = {out[i].dimension: out[i] for i in llm_pos}
        moved, combined = combine_turn(
            out[tool_pos], checks[outcome.turn], llm, outcome.verdict, judge_name
        )
        out[tool_pos] = moved
        for i, j in zip(llm_pos, combined, strict=True):
            out[i] = j
    return resolve_chains(out)


def resolve_chains(judgments: list[Judgment]) -> list[Judgment]:
    """Point every absorbed judgment at the judgment that finally carries the failure."""
    by_label = {_label(j.turn, j.dimension): j for j in judgments}
    out = []
    for j in judgments:
        if not j.absorbed_by:
            out.append(j)
            continue
        label, seen = j.absorbed_by, {_label(j.turn, j.dimension)}
        while label in by_label and by_label[label].absorbed_by and label not in seen:
            seen.add(label)
            label = by_label[label].absorbed_by or label
        root = by_label.get(label)
        if root is not None and root.passed is True and not root.absorbed_by:
            # The root was judged not a failure after all: this failure counts here.
            out.append(
                j.model_copy(
                    update={
                        "passed": False,
                        "absorbed_by": None,
                        "reasoning": f"{j.reasoning} (its root {label} was judged not a "
                        "failure, so this failure is counted here)",
                    }
                )
            )
        else:
            out.append(j.model_copy(update={"absorbed_by": label}) if label != j.absorbed_by else j)
    return out
