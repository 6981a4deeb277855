"""The LLM judge as a ``RunJudge``: asks about the selected turns, with the deterministic
findings in hand, and leaves merging the two to the absorption pass."""

from __future__ import annotations

from dataclasses import dataclass

from voxbench.core.records import LLMJudgeStats
from voxbench.judging.absorption import llm_judgments
from voxbench.judging.base import JudgeContext, JudgeFindings
from voxbench.judging.cache import JudgmentCache
from voxbench.judging.deterministic import JUDGE_NAME as DETERMINISTIC
from voxbench.judging.deterministic import DeterministicResult
from voxbench.judging.llm_judge import CONCURRENCY, LLMJudge, TurnOutcome, make_judge_client
from voxbench.judging.turn_taking import turn_taking_issues

NAME = "llm"


def llm_stats(outcomes: list[TurnOutcome]) -> LLMJudgeStats:
    """What the LLM judge did: turns asked, cache hits, calls, retries, failures, usage."""
    asked = [o for o in outcomes if o.dimensions and o.decided_by_code is None]
    usage: dict[str, int] = {}
    for o in outcomes:
        for key, value in o.usage.items():
            usage[key] = usage.get(key, 0) + value
    return LLMJudgeStats(
        turns_asked=len(asked),
        from_cache=sum(o.cached for o in asked),
        calls=sum(o.attempts for o in asked),
        retried_turns=sum(o.attempts > 1 for o in asked),
        failed_turns=[o.turn for o in asked if o.verdict is None],
        decided_by_code=sum(o.decided_by_code is not None for o in outcomes),
        usage=usage,
    )


class LLMRunJudge:
    """The LLM-judged dimensions (instruction following, grounding, ...) of the selected turns.

    Its findings' ``details`` are the per-turn ``TurnOutcome``s the absorption pass reads; its
    version is the judge client's (a hash of prompt, model and schema), known once it runs.
    """

    name = NAME
    version = "per-model"

    def skip_reason(self, context: JudgeContext) -> str | None:
        """Runs only when a judge model (or client) is given and code-only was not asked for."""
        options = context.options
        if options.deterministic_only:
            return "not asked (--deterministic-only)"
        if options.client is None and not options.judge:
            return "not asked (no --judge given)"
        return None

    async def judge(self, context: JudgeContext) -> JudgeFindings:
        """Ask the judge about every selected turn (cached answers are reused)."""
        options = context.options
        deterministic = context.findings[DETERMINISTIC].details
        assert isinstance(deterministic, DeterministicResult)
        client = options.client or make_judge_client(str(options.judge), base_url=options.base_url)
        cache = JudgmentCache(options.cache_dir) if options.use_cache else None
        told = turn_taking_issues(context) if context.scoring.judge_sees_turn_taking else None
        judge = LLMJudge(
            client,
            cache=cache,
            concurrency=options.concurrency or CONCURRENCY,
            turn_taking=told,
        )
        try:
            outcomes = await judge.judge_turns(
                context.benchmark, context.records, deterministic.checks, context.selected
            )
        finally:
            await client.aclose()
        judgments = [
            j for o in outcomes for j in llm_judgments(o, judge.name, judge.version).values()
        ]
        return JudgeFindings(
            judgments=judgments,
            stats=llm_stats(outcomes),
            labels=[f"{judge.name}@{judge.version}"],
            details=LLMRunOutcomes(judge_name=judge.name, outcomes=outcomes),
        )


@dataclass
class LLMRunOutcomes:
    """The LLM judge's raw per-turn outcomes, for the absorption pass."""

    judge_name: str
    outcomes: list[TurnOutcome]
