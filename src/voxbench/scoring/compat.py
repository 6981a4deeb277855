"""``--compat conversation-bench``: our judgments summarized with ConversationBench semantics.

So numbers can be set beside published ones, the summary follows the public benchmark's
counting rules, including the ones voxbench's own scorecard deliberately does not use:

- ``tool_use_correct`` is counted over *all* turns, and every turn without a required call
  counts as a pass (a spurious call never fails it); a required call made one turn early or
  late passes on the turn it was due.
- ``turn_taking``, ``instruction_following`` and ``kb_grounding``: passes over all turns.
- ``ambiguity_handling`` and ``state_tracking``: passes over the turns that score them.
- ``turn_pass``: the strict per-turn rate of the original 30-turn benchmark (tool use,
  instruction following and knowledge grounding all pass on the same turn).

Our denominators for the extended dimensions come from the rule table (the public judge's
depend on which turns its judge returned null for), and a turn our judge could not decide
counts as not passed; ``notes`` lists every such difference.
"""

from __future__ import annotations

from typing import Any

from voxbench.core.benchmark import Benchmark
from voxbench.core.records import Judgment, Scorecard, TurnRecord

COMPAT_NAMES = ("conversation-bench",)
_OTHER_TOOL_PROBLEMS = ("missing", "wrong_arguments", "forbidden", "spurious", "malformed")


def _tool_use_correct(turn_has_call: bool, j: Judgment | None) -> bool:
    if not turn_has_call:
        return True
    if j is None or j.passed is None:
        return False
    if j.passed:
        return True
    # The public judge realigns early and late calls and then counts both turns as correct.
    details = j.details
    return bool(details.get("shifted")) and not any(details.get(k) for k in _OTHER_TOOL_PROBLEMS)


def conversation_bench_summary(
    benchmark: Benchmark,
    card: Scorecard,
    records: list[TurnRecord],
    judgments: list[Judgment],
) -> dict[str, Any]:
    """A ConversationBench-style summary (``passes``, ``turns_scored``, ``category_totals``)."""
    by_key = {(j.turn, j.dimension): j for j in judgments}
    turns = {t.id: t for t in benchmark.turns}
    ids = [r.turn for r in records]
    n = len(ids)

    def passed(turn: str, dim: str) -> bool:
        j = by_key.get((turn, dim))
        return j is not None and j.passed is True

    def count(dim: str, over: list[str]) -> int:
        return sum(passed(t, dim) for t in over)

    def scored_on(dim: str) -> list[str]:
        return [t for t in ids if dim in benchmark.dimensions.for_turn(turns[t])]

    tool_ok = {
        t: _tool_use_correct(bool(turns[t].expect.required_calls), by_key.get((t, "tool_use")))
        for t in ids
    }
    judged_dims = {j.dimension for j in judgments}
    passes: dict[str, int | None] = {
        "turn_taking": count("turn_taking", ids) if "turn_taking" in judged_dims else None,
        "instruction_following": count("instruction_following", ids)
        if "instruction_following" in judged_dims
        else None,
        "kb_grounding": count("kb_grounding", ids) if "kb_grounding" in judged_dims else None,
        "tool_use_correct": sum(tool_ok.values()),
    }
    totals: dict[str, int] = {"tool_use_correct": n}
    for dim in ("ambiguity_handling", "state_tracking"):
        over = scored_on(dim)
        passes[dim] = count(dim, over) if dim in judged_dims and over else None
        totals[dim] = len(over)
    rates = {
        dim: round(value / (totals.get(dim) or n), 4) if value is not None and n else None
        for dim, value in passes.items()
    }
    strict = None
    if {"instruction_following", "kb_grounding"} <= judged_dims:
        strict = sum(
            tool_ok[t] and passed(t, "instruction_following") and passed(t, "kb_grounding")
            for t in ids
        )
    notes = [
        "tool_use_correct counts every turn without a required call as a pass (the public "
        "benchmark's rule); voxbench's own tool_use dimension fails spurious and forbidden calls",
        "ambiguity_handling / state_tracking denominators come from the benchmark's rule "
        "table, not from which turns a judge returned null for",
        "a turn the judge could not decide counts as not passed",
    ]
    if passes["turn_taking"] is None:
        notes.append(
            "turn_taking was not analysed for this run; the public benchmark would count every "
            "turn as a pass in that case, voxbench reports it as missing"
        )
    if passes["instruction_following"] is None:
        notes.append("no LLM judge ran: instruction_following and kb_grounding are missing")
    return {
        "compat": "conversation-bench",
        "model_name": card.target,
        "judge_name": next((j for j in card.judges if not j.startswith("deterministic")), None),
        "judge_versions": card.judges,
        "turns_scored": n,
        "passes": passes,
        "category_totals": totals,
        "rates": rates,
        "turn_pass": {
            "count": strict,
            "total": n,
            "rate": round(strict / n, 4) if strict is not None and n else None,
        },
        "notes": notes,
    }
