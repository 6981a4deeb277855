"""Judge a recorded run from its artifacts alone (the target is never called again).

Order: the deterministic judge on every recorded turn (realignment and cascades need the
whole conversation), then the LLM judge on the selected turns, then the absorption rules
that merge the two, then the turn-taking hook. The result is one judgment per (turn,
applicable dimension), in conversation order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxbench.core.benchmark import Benchmark
from voxbench.core.records import Judgment, TurnRecord
from voxbench.judging.absorption import combine_turn, resolve_chains
from voxbench.judging.cache import JudgmentCache
from voxbench.judging.deterministic import JUDGE_NAME, JUDGE_VERSION, judge_deterministic
from voxbench.judging.llm_judge import CONCURRENCY, LLMJudge, TurnOutcome, make_judge_client
from voxbench.judging.turn_taking import TurnTakingAnalyser, turn_taking_judgments
from voxbench.providers.completion import TextCompletionClient


@dataclass
class JudgeOptions:
    """How to judge a run."""

    judge: str | None = None
    """LLM judge as ``provider/model``; None judges with code only."""
    base_url: str | None = None
    only_turns: list[int] | None = None
    """Turn positions (0-based, as in the benchmark) to judge; None judges every turn."""
    skip_turn_taking: bool = False
    deterministic_only: bool = False
    use_cache: bool = True
    cache_dir: Path | None = None
    concurrency: int = CONCURRENCY


@dataclass
class JudgedRun:
    """Everything judging produced."""

    judgments: list[Judgment]
    records: list[TurnRecord]
    """The judged turns."""
    totals: dict[str, Any]
    judges: list[str]
    turn_taking: str
    llm: dict[str, Any] = field(default_factory=dict)


def _llm_stats(outcomes: list[TurnOutcome]) -> dict[str, Any]:
    asked = [o for o in outcomes if o.dimensions and o.decided_by_code is None]
    usage: dict[str, int] = {}
    for o in outcomes:
        for key, value in o.usage.items():
            usage[key] = usage.get(key, 0) + value
    return {
        "turns_asked": len(asked),
        "from_cache": sum(o.cached for o in asked),
        "calls": sum(o.attempts for o in asked),
        "retried_turns": sum(o.attempts > 1 for o in asked),
        "failed_turns": [o.turn for o in asked if o.verdict is None],
        "decided_by_code": sum(o.decided_by_code is not None for o in outcomes),
        "usage": usage,
    }


async def judge_run(
    benchmark: Benchmark,
    records: list[TurnRecord],
    *,
    run_path: Path | None = None,
    options: JudgeOptions | None = None,
    client: TextCompletionClient | None = None,
    turn_taking: TurnTakingAnalyser | None = None,
) -> JudgedRun:
    """Judge ``records`` of ``benchmark``; ``client`` overrides ``options.judge`` (tests)."""
    options = options or JudgeOptions()
    det = judge_deterministic(benchmark, records)
    if options.only_turns is not None:
        wanted = set(options.only_turns)
        selected = {r.turn for r in records if r.index in wanted}
    else:
        selected = {r.turn for r in records}
    by_turn: dict[str, list[Judgment]] = {}
    for j in det.judgments:
        by_turn.setdefault(j.turn, []).append(j)
    judges = [f"{JUDGE_NAME}@{JUDGE_VERSION}"]
    llm_stats: dict[str, Any] = {}

    use_llm = not options.deterministic_only and (client is not None or options.judge)
    if use_llm:
        if client is None:
            client = make_judge_client(str(options.judge), base_url=options.base_url)
        cache = JudgmentCache(options.cache_dir) if options.use_cache else None
        judge = LLMJudge(client, cache=cache, concurrency=options.concurrency)
        try:
            outcomes = await judge.judge_turns(benchmark, records, det.checks, selected)
        finally:
            await client.aclose()
        for outcome in outcomes:
            own = by_turn[outcome.turn]
            tool_use = next(j for j in own if j.dimension == "tool_use")
            moved, extra = combine_turn(
                tool_use, det.checks[outcome.turn], outcome, judge.name, judge.version
            )
            by_turn[outcome.turn] = [moved if j is tool_use else j for j in own] + extra
        judges.append(f"{judge.name}@{judge.version}")
        llm_stats = _llm_stats(outcomes)

    tt, tt_status = turn_taking_judgments(
        run_path,
        [r for r in records if r.turn in selected],
        turn_taking,
        skip=options.skip_turn_taking,
    )
    for j in tt:
        by_turn.setdefault(j.turn, []).append(j)
    judges += sorted({f"{j.judge}@{j.judge_version}".rstrip("@") for j in tt})

    ordered = [j for r in records for j in by_turn.get(r.turn, [])]
    resolved = [j for j in resolve_chains(ordered) if j.turn in selected]
    return JudgedRun(
        judgments=resolved,
        records=[r for r in records if r.turn in selected],
        totals=det.totals,
        judges=judges,
        turn_taking=tt_status,
        llm=llm_stats,
    )
