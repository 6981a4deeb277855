"""The LLM judge: one call per turn, validated, retried, cached, never silently decided.

For each turn it asks the judge about the dimensions the benchmark's rule table gives that
turn (apart from those code decides), sending the material described in
``judging.prompt``. A reply that is not valid JSON in the schema, or misses an asked
dimension, is asked again at once with the reason fed back; transient provider errors are
retried by the shared policy (``providers.backoff.PROVIDER_CALL``). Both spend the turn's
``max_attempts`` calls; when they run out the turn is recorded as a judge failure:
``passed=None, judge_failed=True``, never a pass or a fail. Turns the agent never reached
or did not answer are decided by code without a call.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from voxbench.core.benchmark import Benchmark, Turn
from voxbench.core.errors import ProviderError
from voxbench.core.records import ToolCallRecord, TurnRecord
from voxbench.judging.cache import JudgmentCache, cache_key
from voxbench.judging.checks import TurnChecks, describe_expected
from voxbench.judging.deterministic import DETERMINISTIC_DIMENSIONS
from voxbench.judging.prompt import (
    InvalidVerdict,
    TurnVerdict,
    judge_version,
    parse_verdict,
    render_system,
    render_user,
    reply_schema,
)
from voxbench.providers.backoff import PROVIDER_CALL
from voxbench.providers.completion import Completion, CompletionRequest, TextCompletionClient
from voxbench.providers.registry import Role, make

MAX_ATTEMPTS = PROVIDER_CALL.attempts
"""Calls per turn, provider failures and unusable replies together, before it is recorded as
a judge failure."""
SCHEMA_NAME = "turn_judgment"
"""Name of the reply schema (the forced tool's name on Anthropic and Bedrock)."""
CONCURRENCY = 4
ABORTING_ERRORS = frozenset({"authentication", "not_found"})
"""Provider errors that would fail every turn alike: judging stops with the error."""
CODE_DECIDED = ("turn_taking",)
"""Dimensions that are never asked of the LLM (besides the deterministic ones)."""


def llm_dimensions(benchmark: Benchmark, turn: Turn) -> list[str]:
    """The dimensions the LLM judge decides on ``turn``, from the benchmark's rule table."""
    return [
        d
        for d in benchmark.dimensions.for_turn(turn)
        if d not in DETERMINISTIC_DIMENSIONS and d not in CODE_DECIDED
    ]


@dataclass
class TurnOutcome:
    """What the LLM judge made of one turn."""

    turn: str
    dimensions: list[str]
    verdict: TurnVerdict | None = None
    error: str | None = None
    decided_by_code: str | None = None
    """Set when no call was needed (turn not reached, no response): the reason."""
    attempts: int = 0
    cached: bool = False
    cache_key: str = ""
    usage: dict[str, int] = field(default_factory=dict)


def _call_view(call: ToolCallRecord) -> dict[str, Any]:
    view: dict[str, Any] = {"name": call.name, "arguments": call.arguments, "result": call.result}
    if call.parse_error:
        view["malformed"] = f"{call.raw_arguments!r}: {call.parse_error}"
    if call.is_duplicate:
        view["duplicate"] = True
    return view


def _history_entry(record: TurnRecord) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "turn": record.turn,
        "caller": record.user_text,
        "assistant_said": record.spoken_text,
    }
    if record.tool_calls:
        entry["tool_calls"] = [_call_view(c) for c in record.tool_calls]
    if record.status != "ok":
        entry["status"] = record.status
    return entry


def turn_taking_view(issues: list[str] | None) -> str:
    """A turn's turn-taking verdict as the judge reads it (``issues`` None: not measured)."""
    if issues is None:
        return "not analysed (no audio analysis for this turn)"
    return "failed: " + "; ".join(issues) if issues else "ok"


def turn_view(
    turn: Turn,
    record: TurnRecord,
    checks: TurnChecks,
    dimensions: list[str],
    turn_taking: str | None = None,
) -> dict[str, Any]:
    """The turn under review, as the judge sees it (``turn_taking``: its turn-taking
    verdict, when the benchmark's rules pass it to the judge)."""
    view: dict[str, Any] = {
        "turn": turn.id,
        "categories": list(turn.categories),
        "subcategory": turn.subcategory,
        "caller": record.user_text,
    }
    if record.user_transcript and record.user_transcript.strip() != record.user_text.strip():
        view["caller_as_transcribed_by_the_assistant"] = record.user_transcript
    view["golden_answer"] = turn.golden_text
    view["assistant_said"] = record.spoken_text
    if record.heard_text is not None and record.heard_text.strip() != record.assistant_text.strip():
        view["assistant_provider_transcript"] = record.assistant_text
    view["expected_calls"] = [describe_expected(c) for c in turn.expect.required_calls]
    view["tool_calls"] = [_call_view(c) for c in record.tool_calls]
    view["status"] = record.status
    if turn_taking is not None:
        view["turn_taking"] = turn_taking
    if record.errors:
        view["errors"] = record.errors
    view["code_findings"] = checks.summary()
    view["grade"] = dimensions
    return view


def make_judge_client(
    name: str, *, base_url: str | None = None, transport: Any = None
) -> TextCompletionClient:
    """The ``text_completion`` client of judge ``name`` (``provider/model``), from the registry.

    Raises ``ConfigError`` for an unknown provider or a missing base URL (naming
    ``--judge-base-url``) and ``PrerequisiteError`` naming the env var of a missing key.
    """
    return make(
        Role.TEXT_COMPLETION,
        name,
        base_url=base_url,
        transport=transport,
        base_url_field="--judge-base-url",
    )


class LLMJudge:
    """Judges turns with one ``text_completion`` client."""

    def __init__(
        self,
        client: TextCompletionClient,
        *,
        cache: JudgmentCache | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        concurrency: int = CONCURRENCY,
        turn_taking: dict[str, list[str]] | None = None,
    ) -> None:
        self.client = client
        self.turn_taking = turn_taking
        """Per turn id, its turn-taking issues (empty: clean), told to the judge; None: the
        judge is not told (the benchmark's rules do not ask for it)."""
        self.cache = cache
        self.max_attempts = max(1, max_attempts)
        self.concurrency = max(1, concurrency)
        self.name = client.name
        self.version = judge_version(client.name)
        # A self-hosted model's name says little: its server is part of its identity.
        self._endpoint = client.base_url if client.provider == "openai-compatible" else ""

    async def judge_turns(
        self,
        benchmark: Benchmark,
        records: list[TurnRecord],
        checks: dict[str, TurnChecks],
        selected: set[str] | None = None,
    ) -> list[TurnOutcome]:
        """Judge every record (or the ``selected`` turn ids), in conversation order."""
        by_id = {t.id: t for t in benchmark.turns}
        all_dims: list[str] = []
        for bench_turn in benchmark.turns:
            all_dims += [d for d in llm_dimensions(benchmark, bench_turn) if d not in all_dims]
        system = render_system(
            benchmark.render_system_prompt(), all_dims, turn_taking=self.turn_taking is not None
        )
        semaphore = asyncio.Semaphore(self.concurrency)
        jobs: list[tuple[Turn, TurnRecord, list[TurnRecord]]] = []
        for pos, record in enumerate(records):
            turn = by_id.get(record.turn)
            if turn is None or (selected is not None and record.turn not in selected):
                continue
            jobs.append((turn, record, records[:pos]))
        results: list[TurnOutcome | None] = [None] * len(jobs)

        async def run(i: int, turn: Turn, record: TurnRecord, history: list[TurnRecord]) -> None:
            async with semaphore:
                results[i] = await self.judge_turn(
                    system, turn, record, history, checks[turn.id], benchmark
                )

        try:
            async with asyncio.TaskGroup() as group:
                for i, (turn, record, history) in enumerate(jobs):
                    group.create_task(run(i, turn, record, history))
        except BaseExceptionGroup as group:
            # One aborting error (a bad key) stops every turn: report it, not the group.
            raise group.exceptions[0] from None
        return [r for r in results if r is not None]

    async def judge_turn(
        self,
        system: str,
        turn: Turn,
        record: TurnRecord,
        history: list[TurnRecord],
        checks: TurnChecks,
        benchmark: Benchmark,
    ) -> TurnOutcome:
        """Judge one turn (from the cache when the same input was judged before)."""
        dims = llm_dimensions(benchmark, turn)
        outcome = TurnOutcome(turn=turn.id, dimensions=dims)
        if not dims:
            return outcome
        if record.status == "ended_early":
            outcome.decided_by_code = "not attempted: the conversation had already ended"
            return outcome
        if not record.spoken_text.strip() and not record.tool_calls:
            outcome.decided_by_code = f"no response from the assistant ({record.status})"
            return outcome
        told = None
        if self.turn_taking is not None:
            told = turn_taking_view(self.turn_taking.get(turn.id))
        user = render_user(
            [_history_entry(r) for r in history],
            turn_view(turn, record, checks, dims, told),
            dims,
        )
        outcome.cache_key = cache_key(self.name, self.version, self._endpoint, system, user)
        if self.cache is not None:
            hit = self.cache.get(outcome.cache_key)
            if hit is not None:
                try:
                    outcome.verdict = parse_verdict(hit["reply"], dims)
                    outcome.cached = True
                    return outcome
                except (InvalidVerdict, KeyError, TypeError):
                    pass  # a stale or damaged entry: judge again
        request = CompletionRequest(
            system=system, user=user, schema=reply_schema(), schema_name=SCHEMA_NAME
        )
        await self._call_until_valid(request, dims, outcome)
        if outcome.verdict is not None and self.cache is not None:
            self.cache.put(
                outcome.cache_key,
                {
                    "judge": self.name,
                    "judge_version": self.version,
                    "turn": turn.id,
                    "reply": outcome.verdict.model_dump_json(),
                    "usage": outcome.usage,
                },
            )
        return outcome

    async def _call_until_valid(
        self, request: CompletionRequest, dims: list[str], outcome: TurnOutcome
    ) -> None:
        """Ask until a valid verdict or ``max_attempts`` calls, provider failures (retried by
        the shared policy) and unusable replies (asked again at once) counted together."""
        current = request

        async def counted() -> Completion:
            outcome.attempts += 1
            return await self.client.complete(current)

        def failed(attempt: int, error: BaseException, delay: float) -> None:
            outcome.error = str(error)

        while outcome.attempts < self.max_attempts:
            # The attempts left, whatever spent them: failed calls or unusable replies.
            policy = PROVIDER_CALL.with_retries(self.max_attempts - outcome.attempts - 1)
            try:
                reply = await policy.call(counted, on_retry=failed)
            except ProviderError as exc:
                if exc.category in ABORTING_ERRORS:
                    raise
                outcome.error = str(exc)
                return
            for key, value in reply.usage.items():
                outcome.usage[key] = outcome.usage.get(key, 0) + value
            try:
                outcome.verdict = parse_verdict(reply.text, dims)
                outcome.error = None
                return
            except InvalidVerdict as exc:
                outcome.error = f"invalid judge output: {exc}"
                current = CompletionRequest(
                    system=request.system,
                    user=request.user
                    + f"\n\nYour previous reply could not be used ({exc}). Reply again with "
                    "only the JSON object, one verdict per listed dimension.",
                    schema=request.schema,
                    schema_name=request.schema_name,
                )
