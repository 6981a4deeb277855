"""What a run produces: run metadata, per-turn records, judgments and the scorecard."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION = 1


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
    """Passes over scored turns for one dimension, with a 95% bootstrap interval."""

    dimension: str
    passed: int
    scored: int
    rate: float | None
    ci95: tuple[float, float] | None = None
    failed_turns: list[str] = Field(default_factory=list)
    undecided_turns: list[str] = Field(default_factory=list)
    """Turns the judge could not decide (counted as scored and not passed)."""
    absorbed_turns: list[str] = Field(default_factory=list)
    """Turns whose failure is counted on its root cause elsewhere (counted as passed)."""


class Scorecard(Record):
    """The scores of one run."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    benchmark: str
    target: str
    turns: int
    dimensions: list[DimensionScore]
    strict_pass: DimensionScore
    checks: dict[str, Any] = Field(default_factory=dict)
    """Totals of the deterministic checks (calls matched, forbidden calls, facts, state)."""
    latency: dict[str, dict[str, float]] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    judges: list[str] = Field(default_factory=list)

    def dimension(self, name: str) -> DimensionScore | None:
        """The score of dimension ``name``."""
        return next((d for d in self.dimensions if d.dimension == name), None)
