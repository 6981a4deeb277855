"""What a Session emits, and how the runner records it on the timeline.

Session events are a flat discriminated union keyed on ``type``. The runner stamps each one
once, from the run's clock, into a line of ``events.jsonl``; runner-side happenings (a turn
starting, a tool result sent, a retry) are recorded the same way so the timeline is one file.
Every line is a typed ``TimelineEvent`` (see ``voxbench.core.timeline``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from voxbench.core.errors import ErrorCategory


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AssistantTextDelta(_Event):
    """A piece of what the agent says (text targets) or its provider transcript (audio)."""

    type: Literal["assistant_text"] = "assistant_text"
    text: str


class AssistantAudio(_Event):
    """A chunk of agent audio: mono PCM16 little-endian at ``sample_rate``."""

    type: Literal["assistant_audio"] = "assistant_audio"
    pcm: bytes = Field(repr=False)
    sample_rate: int

    @property
    def duration(self) -> float:
        """Seconds of audio in the chunk."""
        return len(self.pcm) / 2 / self.sample_rate


class ToolCallRequested(_Event):
    """The agent asks for a tool call.

    ``arguments`` is the parsed object; when the provider sent JSON that does not parse,
    ``arguments`` is empty, ``raw_arguments`` holds what was sent and ``parse_error`` why.
    """

    type: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None
    parse_error: str | None = None


class TurnComplete(_Event):
    """The agent finished its response and has no tool call outstanding."""

    type: Literal["turn_complete"] = "turn_complete"
    status: Literal["completed", "cancelled", "incomplete", "failed"] = "completed"
    stop_reason: str | None = None
    """The provider's own stop / finish value, as it came (recorded, never interpreted)."""


class UserTranscript(_Event):
    """What the target heard the user say (its own ASR)."""

    type: Literal["user_transcript"] = "user_transcript"
    text: str


class SpeechStarted(_Event):
    """The target's own VAD detected the user starting to speak."""

    type: Literal["speech_started"] = "speech_started"


class SpeechStopped(_Event):
    """The target's own VAD detected the user stopping."""

    type: Literal["speech_stopped"] = "speech_stopped"
    audio_end_s: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """Where in the input audio (seconds since the session's first input audio) the target's
    VAD placed the end of the user's speech, as the provider reports it (OpenAI Realtime's
    ``audio_end_ms``, which includes its silence wait). A stamp on the input's own clock: it
    does not move with when the client got to the event. None (and not written) when the
    provider gives none."""


class Interrupted(_Event):
    """The target stopped speaking because the user barged in."""

    type: Literal["interrupted"] = "interrupted"


class TargetError(_Event):
    """Something went wrong on the target side; ``category`` follows the error taxonomy."""

    type: Literal["target_error"] = "target_error"
    category: ErrorCategory
    message: str
    retryable: bool = False
    retry_after: float | None = None
    fatal: bool = False
    """The session cannot continue (a dropped connection that needs a reconnect)."""


class Usage(_Event):
    """Token accounting for one model response."""

    type: Literal["usage"] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    audio_input_tokens: int = 0
    audio_output_tokens: int = 0


class StageMark(_Event):
    """A composite target crossing the start or the end of one of its stages.

    The target reads no clock: the runner stamps the mark like every event, and analysis
    turns each start/end pair into the stage's duration (a cascade's ``stt``,
    ``llm_first_token``, ``tts_first_audio``)."""

    type: Literal["stage_mark"] = "stage_mark"
    stage: str
    edge: Literal["start", "end"]


SessionEvent = Annotated[
    AssistantTextDelta
    | AssistantAudio
    | ToolCallRequested
    | TurnComplete
    | UserTranscript
    | SpeechStarted
    | SpeechStopped
    | Interrupted
    | TargetError
    | Usage
    | StageMark,
    Field(discriminator="type"),
]
