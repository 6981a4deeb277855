"""The timeline of a run: every line of ``events.jsonl`` as a typed event.

Each line is one event, stamped once by the runner from the run's clock: ``seq`` (its order),
``t`` (seconds since the clock's origin), ``turn`` (the turn it belongs to, None for run-wide
events), ``source`` (``runner`` for what the runner did, ``target`` for what the system
under test emitted) and ``type``, which selects the event's own fields. In a run on a virtual
clock (``recording_started.clock``), ``t`` is virtual time and ``wall`` says when, in real
time, the event happened (``core.clock``): latencies are measured on ``wall``.

Target events are the ``Session`` events without their bytes: an audio chunk is recorded as
its sample count and, in audio runs, ``plays_at`` (where it starts playing on
``conversation.wav``); the samples live in the wav files.

Schema history (``TIMELINE_SCHEMA``, written on the first line as ``timeline_opened``):

- 1 (before the header existed): ``{seq, t, turn, source, type, data: {...}}``; read by
  flattening ``data`` into the event (``migrate_v1``).
- 2: the event's fields sit beside the envelope; the first line says the version.
- 3: ``wall`` (optional; written only by a virtual-clock run): real seconds on the run's
  wall clock. A schema-2 line reads as it is (no ``wall``).
- 4: ``speech_stopped`` may carry ``audio_end_s`` (where in the input audio the target's
  VAD placed the end of speech, as its provider stamps it). Schema-2 and -3 lines read as
  they are.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from voxbench.core.events import (
    AssistantTextDelta,
    Interrupted,
    SpeechStarted,
    SpeechStopped,
    StageMark,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    Usage,
    UserTranscript,
)

TIMELINE_SCHEMA = 4
"""The version of ``events.jsonl`` this code writes."""


class Stamp(BaseModel):
    """The envelope every timeline event carries."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int = 0
    t: float = 0.0
    turn: str | None = None
    wall: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """Virtual-clock runs: real (monotonic) seconds on the run's wall clock when the event
    happened; ``t`` is then virtual time, which stands still while an in-process target
    computes. A resumed run's wall clock goes on from where its timeline ended. Absent
    (never written) on a real clock, where ``t`` is real time."""


class _Runner(Stamp):
    source: Literal["runner"] = "runner"


class _Target(Stamp):
    source: Literal["target"] = "target"


# -- run-wide --------------------------------------------------------------------------


class TimelineOpened(_Runner):
    """The first line of every timeline: which schema the file is written in."""

    type: Literal["timeline_opened"] = "timeline_opened"
    schema_version: int = TIMELINE_SCHEMA


class RunStarted(_Runner):
    type: Literal["run_started"] = "run_started"
    target: str


class RunResumed(_Runner):
    type: Literal["run_resumed"] = "run_resumed"
    after_turn: str


class RunFinished(_Runner):
    type: Literal["run_finished"] = "run_finished"


class RecordingStarted(_Runner):
    """``conversation.wav``'s first sample is at run-clock time ``origin``."""

    type: Literal["recording_started"] = "recording_started"
    origin: float
    clock: Literal["real", "virtual"] = "real"


# -- a turn, as the runner drives it ---------------------------------------------------


class TurnStarted(_Runner):
    type: Literal["turn_started"] = "turn_started"
    index: int


class UserTextSent(_Runner):
    type: Literal["user_text_sent"] = "user_text_sent"
    text: str


class UserTurnEnded(_Runner):
    """The user finished: the text was sent, or the last audio sample was streamed."""

    type: Literal["user_turn_ended"] = "user_turn_ended"
    audio_seconds: float | None = None
    lag: float | None = None
    """Audio runs: how far streaming fell behind the audio's own timing (seconds)."""


class HarnessNudgeSent(_Runner):
    """The harness sent a follow-up user message: the answer lacked a required call."""

    type: Literal["harness_nudge"] = "harness_nudge"
    text: str
    missing: list[str] = Field(default_factory=list)


class ToolResultSent(_Runner):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    result: Any = None
    is_duplicate: bool = False


class NoResponse(_Runner):
    type: Literal["no_response"] = "no_response"
    waited: float


class TurnTimedOut(_Runner):
    type: Literal["turn_timeout"] = "turn_timeout"
    seconds: float


class SessionDropped(_Runner):
    type: Literal["session_dropped"] = "session_dropped"
    error: str


class TurnRetry(_Runner):
    type: Literal["turn_retry"] = "turn_retry"
    attempt: int
    reason: str
    delay: float
    reconnect: bool = False


class TurnFailed(_Runner):
    type: Literal["turn_failed"] = "turn_failed"
    reason: str
    retries: int = 0


class TurnSkipped(_Runner):
    type: Literal["turn_skipped"] = "turn_skipped"
    reason: str


class TurnEnded(_Runner):
    type: Literal["turn_ended"] = "turn_ended"
    status: str


class AgentSpeechHeard(_Runner):
    """Audio runs: where the agent's speech was found in the turn and what it was heard to say."""

    type: Literal["agent_speech"] = "agent_speech"
    agent_speech_start: float | None = None
    agent_speech_end: float | None = None
    heard_text: str | None = None


# -- what the target emitted -----------------------------------------------------------


class TextRecorded(_Target, AssistantTextDelta):
    """An ``AssistantTextDelta`` on the timeline."""


class AudioRecorded(_Target):
    """An ``AssistantAudio`` chunk on the timeline: its size and where it plays."""

    type: Literal["assistant_audio"] = "assistant_audio"
    samples: int
    sample_rate: int
    plays_at: float | None = None


class ToolCallRecorded(_Target, ToolCallRequested):
    """A ``ToolCallRequested`` on the timeline."""


class TurnCompleteRecorded(_Target, TurnComplete):
    """A ``TurnComplete`` on the timeline."""


class UserTranscriptRecorded(_Target, UserTranscript):
    """A ``UserTranscript`` on the timeline."""


class SpeechStartedRecorded(_Target, SpeechStarted):
    """A ``SpeechStarted`` on the timeline."""


class SpeechStoppedRecorded(_Target, SpeechStopped):
    """A ``SpeechStopped`` on the timeline."""


class InterruptedRecorded(_Target, Interrupted):
    """An ``Interrupted`` on the timeline."""


class TargetErrorRecorded(_Target, TargetError):
    """A ``TargetError`` on the timeline."""


class UsageRecorded(_Target, Usage):
    """A ``Usage`` on the timeline."""


class StageMarkRecorded(_Target, StageMark):
    """A ``StageMark`` on the timeline."""


class StageTimingRecorded(_Target):
    """A stage duration a cascade measured itself (runs recorded before ``StageMark``)."""

    type: Literal["stage_timing"] = "stage_timing"
    stage: str
    seconds: float


TimelineEvent = Annotated[
    TimelineOpened
    | RunStarted
    | RunResumed
    | RunFinished
    | RecordingStarted
    | TurnStarted
    | UserTextSent
    | UserTurnEnded
    | HarnessNudgeSent
    | ToolResultSent
    | NoResponse
    | TurnTimedOut
    | SessionDropped
    | TurnRetry
    | TurnFailed
    | TurnSkipped
    | TurnEnded
    | AgentSpeechHeard
    | TextRecorded
    | AudioRecorded
    | ToolCallRecorded
    | TurnCompleteRecorded
    | UserTranscriptRecorded
    | SpeechStartedRecorded
    | SpeechStoppedRecorded
    | InterruptedRecorded
    | TargetErrorRecorded
    | UsageRecorded
    | StageMarkRecorded
    | StageTimingRecorded,
    Field(discriminator="type"),
]

TIMELINE_EVENT: TypeAdapter[TimelineEvent] = TypeAdapter(TimelineEvent)
"""Validates one line of ``events.jsonl`` into its event type."""

_TARGET_RECORDS: dict[str, type[Stamp]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        TextRecorded,
        ToolCallRecorded,
        TurnCompleteRecorded,
        UserTranscriptRecorded,
        SpeechStartedRecorded,
        SpeechStoppedRecorded,
        InterruptedRecorded,
        TargetErrorRecorded,
        UsageRecorded,
        StageMarkRecorded,
    )
}


def recorded_target_event(event: BaseModel, **extra: Any) -> Stamp:
    """The timeline form of a ``Session`` event (audio chunks are recorded by the runner as
    ``AudioRecorded``, since only it knows where they play)."""
    kind = getattr(event, "type", None)
    cls = _TARGET_RECORDS.get(str(kind))
    if cls is None:
        raise TypeError(f"no timeline form for session event {kind!r}")
    return cls.model_validate(event.model_dump() | extra)


def migrate_v1(row: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 line (``data`` nested) in the schema-2 shape."""
    out = {k: v for k, v in row.items() if k != "data"}
    out.update(row.get("data") or {})
    return out
