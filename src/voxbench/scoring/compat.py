"""``--compat NAME``: a run's judgments summarized with a public benchmark's counting rules.

The run is judged under the profile's scoring rules (``core.benchmark.CompatProfile``: its
tool-use rules, argument matching and what its LLM judge is told), so ``tool_use`` already
means the public ``tool_use_correct`` on every turn. This summary then counts the way that
benchmark's summary does (``passes``, ``turns_scored``, ``category_totals``):

- ``tool_use_correct``, ``turn_taking``, ``instruction_following`` and ``kb_grounding``:
  passes over all turns (a tool-use failure counted on ambiguity or state tracking passes
  tool use, as upstream's penalty absorption does).
- ``ambiguity_handling`` and ``state_tracking``: passes over the turns that score them.
- ``turn_pass``: the turns passing every dimension of the profile's ``turn_pass``.

A summary needs the dimensions only an LLM judge decides (``llm_dimensions``): without them
the numbers would sit in the leaderboard's range while measuring tool use alone, so the
evaluation refuses to write one (``missing_llm_dimensions``). Our denominators for the
extended dimensions come from the rule table, and a turn our judge could not decide counts
as not passed; ``notes`` lists every difference the profile knows of.
"""

from __future__ import annotations

from typing import Any

from voxbench.core.benchmark import Benchmark, CompatProfile
from voxbench.core.records import Judgment, Scorecard, TurnRecord

PUBLIC_NAMES = {"tool_use": "tool_use_correct"}
"""Their dimension names that voxbench spells differently."""


def missing_llm_dimensions(profile: CompatProfile, judgments: list[Judgment]) -> list[str]:
    """The profile's LLM-judged dimensions that no judgment decided on this run."""
    judged = {j.dimension for j in judgments if j.passed is not None or j.judge_failed}
    return [d for d in profile.llm_dimensions if d not in judged]


def compat_summary(
    profile: CompatProfile,
    benchmark: Benchmark,
    card: Scorecard,
    records: list[TurnRecord],
    judgments: list[Judgment],
) -> dict[str, Any]:
    """The profile's summary (``passes``, ``turns_scored``, ``category_totals``, ``rates``)."""
    by_key = {(j.turn, j.dimension): j for j in judgments}
    turns = {t.id: t for t in benchmark.turns}
    ids = [r.turn for r in records]
    n = len(ids)
    judged_dims = {j.dimension for j in judgments}

    def passed(turn: str, dim: str) -> bool:
        j = by_key.get((turn, dim))
        return j is not None and j.passed is True

    def scored_on(dim: str) -> list[str]:
        return [t for t in ids if dim in benchmark.dimensions.for_turn(turns[t])]

    passes: dict[str, int | None] = {}
    totals: dict[str, int] = {}
    for dim in ("turn_taking", "tool_use", "instruction_following", "kb_grounding"):
        name = PUBLIC_NAMES.get(dim, dim)
        passes[name] = sum(passed(t, dim) for t in ids) if dim in judged_dims else None
    totals["tool_use_correct"] = n
    for dim in ("ambiguity_handling", "state_tracking"):
        over = scored_on(dim)
        passes[dim] = sum(passed(t, dim) for t in over) if dim in judged_dims and over else None
        totals[dim] = len(over)
    rates = {
        dim: round(value / (totals.get(dim) or n), 4) if value is not None and n else None
        for dim, value in passes.items()
    }
    strict = None
    if set(profile.turn_pass) <= judged_dims:
        strict = sum(all(passed(t, d) for d in profile.turn_pass) for t in ids)
    notes = list(profile.cannot_reproduce)
    if passes["turn_taking"] is None:
        notes.append(
            "turn_taking was not analysed for this run; the public benchmark would count every "
            "turn as a pass in that case, voxbench reports it as missing"
        )
    return {
        "compat": profile.name,
        "title": profile.title,
        "model_name": card.target,
        "judge_name": next((j for j in card.judges if not j.startswith("deterministic")), None),
        "judge_versions": card.judges,
        "rules": profile.scoring.model_dump(mode="json"),
        "turns_scored": n,
        "passes": passes,
        "category_totals": totals,
        "rates": rates,
        "turn_pass": {
            "count": strict,
            "total": n,
            "rate": round(strict / n, 4) if strict is not None and n else None,
            "dimensions": list(profile.turn_pass),
        },
        "reproduces": list(profile.reproduces),
        "notes": notes,
    }
