"""What a run produces: run metadata, per-turn records, judgments and the scorecard."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION = 1
SCORECARD_SCHEMA: Final = 3
"""``scorecard.json``'s format: 2 made its checks, counts and latency typed; 3 added which
dimensions were judged and by what, the rules they were judged by, what strict pass covers,
and absorbed failures counted apart from passes. Format 2 files are still read."""


class Record(BaseModel):
    """Base of run artifacts: strict on read, so a corrupted file is noticed."""

    model_config = ConfigDict(extra="forbid")


class ComponentSpec(Record):
    """A component of a run (target, judge, TTS, ...) as ``provider/model`` plus its args."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class RunInfo(Record):
    """``run.json``: what was run and how to run it again (secrets redacted)."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    benchmark: str
    benchmark_version: str
    benchmark_hash: str
    benchmark_path: str | None = None
    target: ComponentSpec
    config: dict[str, Any] = Field(default_factory=dict)
    """The RunConfig, secrets redacted: enough to resume or rerun."""
    mode: Literal["text", "audio"] = "text"
    only_turns: list[str] | None = None
    seed: int = 0
    versions: dict[str, str] = Field(default_factory=dict)
    started_at: str
    ended_at: str | None = None
    status: Literal["started", "success", "error", "cancelled"] = "started"
    error: str | None = None
    resumed: int = 0
    """How many times the run was resumed after being stopped."""
    perturbations: str | None = None
    """What the target heard was perturbed by this spec (``voxbench.audio.perturb``, canonical
    spelling; seeded by ``seed``); None: the clean audio (and every run written before)."""


class ToolCallRecord(Record):
    """One tool call the agent made on a turn, and what the backend answered."""

    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None
    parse_error: str | None = None
    result: Any = None
    is_duplicate: bool = False
    t_requested: float | None = None


class NudgeExchange(Record):
    """A harness follow-up inside a turn and the agent's answer to it (AIEWF's nudge).

    Kept apart from the turn's own answer and calls: upstream leaves its recovery turns out
    of the judgment, so no judge reads this; the conversation history does."""

    user_text: str
    missing: list[str] = Field(default_factory=list)
    """The required calls (tool names) whose absence triggered it."""
    assistant_text: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)


class TurnTimings(Record):
    """Stamps of one turn (run-clock seconds), as the runner took them.

    Latencies are measured from the timeline and the recording by ``voxbench.analysis``
    (``analysis.json``), never here; transcripts written before that carried derived
    latencies too, which are dropped when read."""

    start: float
    user_end: float | None = None
    """When the user finished (text sent, or the last audio sample streamed)."""
    first_event: float | None = None
    first_text: float | None = None
    first_audio: float | None = None
    end: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _drop_measured(cls, data: Any) -> Any:
        if isinstance(data, dict) and _MEASURED_BEFORE.intersection(data):
            return {k: v for k, v in data.items() if k not in _MEASURED_BEFORE}
        return data


_MEASURED_BEFORE = frozenset(
    {
        "ttfb",
        "ttft",
        "first_audio_latency",
        "user_speech_start",
        "user_speech_end",
        "agent_speech_start",
        "agent_speech_end",
        "voice_to_voice",
        "stages",
    }
)
"""Latencies older runners derived into the transcript; ``analysis.json`` holds them now."""


class TurnRecord(Record):
    """One line of ``transcript.jsonl``: a turn as it happened."""

    turn: str
    index: int
    user_text: str
    assistant_text: str = ""
    heard_text: str | None = None
    """Local ASR of the agent's audio (audio runs); the judge reads this when present."""
    user_transcript: str | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    usage: dict[str, int] = Field(default_factory=dict)
    timings: TurnTimings
    status: Literal["ok", "no_response", "error", "ended_early"] = "ok"
    errors: list[str] = Field(default_factory=list)
    retries: int = 0
    reconnected: bool = False
    state_after: dict[str, Any] = Field(default_factory=dict)
    """Backend snapshot after the turn (the expected-state check reads it)."""
    nudge: NudgeExchange | None = None
    """The harness's follow-up when the answer lacked a required call (never scored)."""

    @property
    def spoken_text(self) -> str:
        """What the agent said, as heard when that is known."""
        return self.heard_text if self.heard_text is not None else self.assistant_text


class Judgment(Record):
    """One verdict on one dimension of one turn.

    ``passed`` is None when the dimension does not apply or the judge failed (then
    ``judge_failed`` is true): a judge failure is never silently a pass or a fail.
    """

    turn: str
    dimension: str
    passed: bool | None
    reasoning: str = ""
    evidence: list[str] = Field(default_factory=list)
    judge: str = "deterministic"
    judge_version: str = ""
    judge_failed: bool = False
    absorbed_by: str | None = None
    """When this failure is counted on another judgment (its root cause), that judgment as
    ``"turn <id> <dimension>"``; ``passed`` is then True so the failure is counted once."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Structured findings behind the verdict (realigned calls, state diff, cache key)."""


class DimensionScore(Record):
    """Passes over decided turns for one dimension, with a 95% Wilson score interval.

    A failure absorbed into an earlier root cause is never a pass: it is counted in
    ``absorbed`` (and ``absorbed_turns``), not in ``passed``, so ``passed + absorbed +
    len(failed_turns) == scored``. ``rate`` is ``passed / scored``."""

    dimension: str
    passed: int
    """Turns that passed on their own (absorbed failures excluded)."""
    scored: int
    """Turns decided (passed or failed); undecided turns are not in the denominator."""
    rate: float | None
    ci95: tuple[float, float] | None = None
    failed_turns: list[str] = Field(default_factory=list)
    undecided: int = 0
    """How many turns the judge could not decide (left out of ``scored``)."""
    undecided_turns: list[str] = Field(default_factory=list)
    """Turns the judge could not decide (neither passed nor failed)."""
    absorbed_turns: list[str] = Field(default_factory=list)
    """Turns that failed only because of an earlier failure, counted on that root cause."""
    absorbed: int = 0
    """How many (``absorbed_turns``); neither passed nor counted as this dimension's failure."""

    @model_validator(mode="before")
    @classmethod
    def _count_undecided(cls, data: Any) -> Any:
        # Scorecards written before the count existed list the turns only.
        if isinstance(data, dict) and "undecided" not in data and data.get("undecided_turns"):
            data = {**data, "undecided": len(data["undecided_turns"])}
        # Format 2 counted absorbed failures as passes: take them out of ``passed``.
        if isinstance(data, dict) and "absorbed" not in data and data.get("absorbed_turns"):
            absorbed = len(data["absorbed_turns"])
            passed = max(0, int(data.get("passed", 0)) - absorbed)
            scored = data.get("scored") or 0
            data = {
                **data,
                "absorbed": absorbed,
                "passed": passed,
                "rate": round(passed / scored, 4) if scored else data.get("rate"),
            }
        return data

    @property
    def absorbed_note(self) -> str | None:
        """``"40 caused by earlier misses"``, or None when nothing was absorbed."""
        if not self.absorbed:
            return None
        return f"{self.absorbed} caused by earlier misses"


class LatencySummary(Record):
    """Percentiles of one latency over the turns that have it (values ≤ 0 included); the
    analysis (``core.measures.RunAnalysis``) and the scorecard share it."""

    count: int = 0
    mean: float | None = None
    min: float | None = None
    max: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None


class Rate(Record):
    """Passes over scored judgments of one kind."""

    passed: int
    scored: int
    rate: float | None


class EndState(Record):
    """The run-level check of the final backend state against the last expected value of
    every state key."""

    passed: bool
    diff: list[str] = Field(default_factory=list)
    """Readable differences, one per key."""
    explained_by: list[str] = Field(default_factory=list)
    """Penalized failures that explain the differences (``"turn <id> <dimension>"``)."""
    expected: dict[str, Any] = Field(default_factory=dict)


class CheckTotals(Record):
    """Totals of the deterministic checks over a run's judged turns."""

    turns: int = 0
    tool_use_passed: int = 0
    tool_turns: int = 0
    """Turns that involve tools (a required, forbidden or allowed call, or a call made)."""
    tool_turns_passed: int = 0
    required_calls: int = 0
    required_calls_on_time: int = 0
    calls_early: int = 0
    calls_late: int = 0
    missing_calls: int = 0
    wrong_argument_calls: int = 0
    forbidden_calls_made: int = 0
    spurious_calls: int = 0
    malformed_calls: int = 0
    duplicate_calls: int = 0
    facts: int = 0
    facts_covered: int = 0
    false_claims: int = 0
    state_checks: int = 0
    state_checks_passed: int = 0
    state_failures_absorbed: int = 0
    speech_wer_mean: float | None = None
    """Audio runs: mean WER of the heard audio against the agent's own transcript."""
    speech_uncorroborated_turns: int | None = None
    """Audio runs: turns whose heard audio does not corroborate the transcript."""
    end_state: EndState | None = None
    cascade_note: str | None = None
    tool_use_over_tool_turns: Rate | None = None
    """``tool_use`` over the turns involving tools (after absorption)."""
    tool_use_over_all_turns: Rate | None = None


class LLMJudgeStats(Record):
    """What the LLM judge did on a run."""

    turns_asked: int = 0
    from_cache: int = 0
    calls: int = 0
    retried_turns: int = 0
    failed_turns: list[str] = Field(default_factory=list)
    decided_by_code: int = 0
    """Turns decided without a call (not reached, no response)."""
    usage: dict[str, int] = Field(default_factory=dict)


class RunCounts(Record):
    """How many turns went wrong, and how."""

    turns: int = 0
    ok: int = 0
    no_response: int = 0
    error: int = 0
    ended_early: int = 0
    retried: int = 0
    reconnected: int = 0
    judge_failures: int = 0
    absorbed: int = 0


class JudgedDimensions(Record):
    """Which dimensions were judged on a run, and by what."""

    deterministic: list[str] = Field(default_factory=list)
    """Decided by code (tool use, facts, state)."""
    llm: list[str] = Field(default_factory=list)
    """Decided by an LLM judge (instruction following, grounding, ...)."""
    analysis: list[str] = Field(default_factory=list)
    """Read off the audio analysis (turn taking)."""
    not_judged: list[str] = Field(default_factory=list)
    """In the benchmark's rule table but judged by nothing on this run (no ``--judge``)."""


NOT_COMPARABLE_TOOL_USE = "tool use only — not comparable"


class Scorecard(Record):
    """The scores of one run (``scorecard.json``)."""

    schema_version: Literal[2, 3] = SCORECARD_SCHEMA
    run_id: str
    benchmark: str
    target: str
    turns: int
    dimensions: list[DimensionScore]
    strict_pass: DimensionScore
    checks: CheckTotals | None = None
    """Totals of the deterministic checks (None when the deterministic judge did not run)."""
    llm_judge: LLMJudgeStats | None = None
    judge_status: dict[str, str] = Field(default_factory=dict)
    """One line per judge that did not simply run (``turn-taking``: "not analysed: text run")."""
    latency: dict[str, LatencySummary] = Field(default_factory=dict)
    """Percentiles per latency metric, from the run's analysis (measured once)."""
    counts: RunCounts = Field(default_factory=RunCounts)
    judges: list[str] = Field(default_factory=list)
    undecided_turns: list[str] = Field(default_factory=list)
    """Turns with at least one judgment the judges could not decide."""
    undecided_limit: float | None = None
    """The share of undecided turns above which the evaluation is not trusted (None: no limit)."""
    too_many_undecided: bool = False
    """More than ``undecided_limit`` of the judged turns are undecided: the scores rest on
    too few decided turns to be read as the run's result."""
    judged: JudgedDimensions | None = None
    """Which dimensions were judged, and by what (None: a format 2 scorecard)."""
    scoring_rules: str = "voxbench"
    """The rules the run was judged by: ``voxbench`` (its own), ``benchmark`` (its
    package's ``scoring:`` block) or a compat profile's name."""
    strict_pass_covers: list[str] = Field(default_factory=list)
    """The dimensions the strict per-turn pass is over on this run."""
    strict_pass_note: str | None = None
    """Why the strict pass cannot be set beside a published number, when it cannot:
    ``"tool use only — not comparable"`` when no LLM judge ran on a benchmark without
    facts or state checks."""

    @property
    def undecided_share(self) -> float:
        """The share of judged turns with an undecided judgment."""
        return len(self.undecided_turns) / self.turns if self.turns else 0.0

    def undecided_summary(self) -> str | None:
        """One line on the undecided turns, or None when every judgment was decided."""
        if not self.undecided_turns:
            return None
        n = len(self.undecided_turns)
        line = (
            f"{n} of {self.turns} turns undecided ({self.undecided_share:.0%}): "
            "a judge could not decide them; they are left out of the rates"
        )
        if self.too_many_undecided and self.undecided_limit is not None:
            line += f"; more than the {self.undecided_limit:.0%} allowed"
        return line

    def dimension(self, name: str) -> DimensionScore | None:
        """The score of dimension ``name``."""
        return next((d for d in self.dimensions if d.dimension == name), None)
