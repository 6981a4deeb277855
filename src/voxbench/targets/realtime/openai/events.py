"""OpenAI Realtime wire protocol (GA), shared by the adapter and the fake server.

Source: the GA reference at developers.openai.com/api/reference/resources/realtime
(client-events and server-events pages, as published in 2026: ``session.update`` with
``session.type="realtime"``, ``audio.input.format {type: audio/pcm, rate: 24000}``,
``audio.input.turn_detection`` server_vad | semantic_vad | null, ``response.output_audio.*``
and ``response.output_audio_transcript.*`` names). xAI's Grok voice API and Azure OpenAI
speak the same events (xAI adds ``conversation.created`` and ``ping``; both are handled as
ordinary or unknown events).

Every event carries ``type``; server events carry ``event_id``; client events may carry one,
and the server names it in ``error.event_id`` when it rejects that event.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationError

from voxbench.core.errors import ProtocolError
from voxbench.targets.realtime.wire import (
    ClientModel,
    WireModel,
    decode_json_object,
    describe_validation_error,
)

INPUT_SAMPLE_RATE = 24000
"""PCM input: only 24 kHz is accepted (GA reference, ``PCMAudioFormat.rate``)."""
OUTPUT_SAMPLE_RATE = 24000

# -- session configuration -----------------------------------------------------------------


class AudioFormat(ClientModel):
    """``audio/pcm`` (24 kHz PCM16) or G.711 ``audio/pcmu`` / ``audio/pcma`` (8 kHz)."""

    type: Literal["audio/pcm", "audio/pcmu", "audio/pcma"] = "audio/pcm"
    rate: int | None = None


class TurnDetection(ClientModel):
    """Server-side turn detection; sending ``turn_detection: null`` selects manual commits."""

    KEEP_NULL: ClassVar[tuple[str, ...]] = ("type",)

    type: Literal["server_vad", "semantic_vad"] | None = "server_vad"
    """``null`` only in xAI's dialect, where ``{"type": null}`` selects manual turns."""
    threshold: float | None = None
    prefix_padding_ms: int | None = None
    silence_duration_ms: int | None = None
    eagerness: Literal["low", "medium", "high", "auto"] | None = None
    create_response: bool | None = None
    interrupt_response: bool | None = None
    idle_timeout_ms: int | None = None


class InputTranscription(ClientModel):
    """Asynchronous transcription of committed user audio."""

    model: str
    language: str | None = None
    prompt: str | None = None


class AudioInput(ClientModel):
    KEEP_NULL: ClassVar[tuple[str, ...]] = ("turn_detection", "transcription")

    format: AudioFormat | None = None
    transcription: InputTranscription | None = None
    turn_detection: TurnDetection | None = None
    noise_reduction: dict[str, Any] | None = None


class AudioOutput(ClientModel):
    format: AudioFormat | None = None
    voice: str | None = None
    speed: float | None = None


class AudioConfig(ClientModel):
    input: AudioInput | None = None
    output: AudioOutput | None = None


class FunctionTool(ClientModel):
    """A function the model may call (flat form: name/description/parameters at top level)."""

    type: Literal["function"] = "function"
    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)


class SessionConfig(ClientModel):
    """The ``session`` object of ``session.update``."""

    type: Literal["realtime"] | None = "realtime"
    """Required by OpenAI (GA); left out (None) in xAI's dialect, which does not document it."""
    model: str | None = None
    instructions: str | None = None
    output_modalities: list[Literal["audio", "text"]] | None = None
    audio: AudioConfig | None = None
    tools: list[FunctionTool] | None = None
    tool_choice: str | None = None
    max_output_tokens: int | Literal["inf"] | None = None
    voice: str | None = None
    """xAI's dialect only: the voice is a top-level session field (OpenAI: ``audio.output``)."""
    turn_detection: TurnDetection | None = None
    """xAI's dialect only: top-level, ``{"type": null}`` for manual turns (OpenAI:
    ``audio.input``)."""
    reasoning: dict[str, Any] | None = None
    """xAI's dialect only: ``{"effort": "high" | "none"}`` on its reasoning voice models."""

    KEEP_NULL: ClassVar[tuple[str, ...]] = ("turn_detection",)


# -- conversation items --------------------------------------------------------------------


class ContentPart(WireModel):
    type: Literal["input_text", "input_audio", "output_text", "output_audio", "text", "audio"]
    text: str | None = None
    audio: str | None = None
    transcript: str | None = None


class ConversationItem(WireModel):
    """A message, a function call, or a function call's output."""

    id: str | None = None
    type: Literal["message", "function_call", "function_call_output"]
    status: str | None = None
    role: Literal["user", "assistant", "system"] | None = None
    content: list[ContentPart] | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    output: str | None = None


# -- client events -------------------------------------------------------------------------


class ClientEvent(ClientModel):
    event_id: str | None = None


class SessionUpdate(ClientEvent):
    type: Literal["session.update"] = "session.update"
    session: SessionConfig


class InputAudioBufferAppend(ClientEvent):
    type: Literal["input_audio_buffer.append"] = "input_audio_buffer.append"
    audio: str
    """Base64 PCM in the session's input format."""


class InputAudioBufferCommit(ClientEvent):
    type: Literal["input_audio_buffer.commit"] = "input_audio_buffer.commit"


class InputAudioBufferClear(ClientEvent):
    type: Literal["input_audio_buffer.clear"] = "input_audio_buffer.clear"


class ConversationItemCreate(ClientEvent):
    type: Literal["conversation.item.create"] = "conversation.item.create"
    previous_item_id: str | None = None
    item: ConversationItem


class ConversationItemTruncate(ClientEvent):
    type: Literal["conversation.item.truncate"] = "conversation.item.truncate"
    item_id: str
    content_index: int = 0
    audio_end_ms: int


class ResponseCreate(ClientEvent):
    type: Literal["response.create"] = "response.create"
    response: dict[str, Any] | None = None


class ResponseCancel(ClientEvent):
    type: Literal["response.cancel"] = "response.cancel"
    response_id: str | None = None


CLIENT_EVENTS: dict[str, type[ClientEvent]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        SessionUpdate,
        InputAudioBufferAppend,
        InputAudioBufferCommit,
        InputAudioBufferClear,
        ConversationItemCreate,
        ConversationItemTruncate,
        ResponseCreate,
        ResponseCancel,
    )
}

# -- server events -------------------------------------------------------------------------


class ServerEvent(WireModel):
    event_id: str = ""


class ErrorDetail(WireModel):
    type: str = ""
    code: str | None = None
    message: str = ""
    param: str | None = None
    event_id: str | None = None
    """The client event that caused the error, when there is one."""


class ErrorEvent(ServerEvent):
    type: Literal["error"] = "error"
    error: ErrorDetail


class SessionCreated(ServerEvent):
    type: Literal["session.created"] = "session.created"
    session: dict[str, Any] = Field(default_factory=dict)


class SessionUpdated(ServerEvent):
    type: Literal["session.updated"] = "session.updated"
    session: dict[str, Any] = Field(default_factory=dict)


class ConversationCreated(ServerEvent):
    """Sent by xAI on connect; older OpenAI betas sent it too."""

    type: Literal["conversation.created"] = "conversation.created"
    conversation: dict[str, Any] = Field(default_factory=dict)


class ConversationItemAdded(ServerEvent):
    type: Literal["conversation.item.added"] = "conversation.item.added"
    previous_item_id: str | None = None
    item: ConversationItem


class ConversationItemDone(ServerEvent):
    type: Literal["conversation.item.done"] = "conversation.item.done"
    previous_item_id: str | None = None
    item: ConversationItem


class ConversationItemTruncated(ServerEvent):
    type: Literal["conversation.item.truncated"] = "conversation.item.truncated"
    item_id: str
    content_index: int = 0
    audio_end_ms: int = 0


class SpeechStarted(ServerEvent):
    type: Literal["input_audio_buffer.speech_started"] = "input_audio_buffer.speech_started"
    audio_start_ms: int = 0
    item_id: str = ""


class SpeechStopped(ServerEvent):
    type: Literal["input_audio_buffer.speech_stopped"] = "input_audio_buffer.speech_stopped"
    audio_end_ms: int = 0
    item_id: str = ""


class InputAudioBufferCommitted(ServerEvent):
    type: Literal["input_audio_buffer.committed"] = "input_audio_buffer.committed"
    previous_item_id: str | None = None
    item_id: str


class InputAudioBufferCleared(ServerEvent):
    type: Literal["input_audio_buffer.cleared"] = "input_audio_buffer.cleared"


class InputTranscriptionDelta(ServerEvent):
    type: Literal["conversation.item.input_audio_transcription.delta"] = (
        "conversation.item.input_audio_transcription.delta"
    )
    item_id: str
    content_index: int = 0
    delta: str = ""


class InputTranscriptionCompleted(ServerEvent):
    type: Literal["conversation.item.input_audio_transcription.completed"] = (
        "conversation.item.input_audio_transcription.completed"
    )
    item_id: str
    content_index: int = 0
    transcript: str = ""
    status: str | None = None
    """xAI streams partial transcripts under this name with ``status: "in_progress"``; only
    one without that status (OpenAI sends none) is final."""


class InputTranscriptionFailed(ServerEvent):
    type: Literal["conversation.item.input_audio_transcription.failed"] = (
        "conversation.item.input_audio_transcription.failed"
    )
    item_id: str
    content_index: int = 0
    error: ErrorDetail | None = None


class Usage(WireModel):
    total_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    input_token_details: dict[str, Any] = Field(default_factory=dict)
    output_token_details: dict[str, Any] = Field(default_factory=dict)


class Response(WireModel):
    """The ``realtime.response`` object of ``response.created`` / ``response.done``."""

    id: str
    object: str = "realtime.response"
    status: Literal["in_progress", "completed", "cancelled", "incomplete", "failed"] = "in_progress"
    status_details: dict[str, Any] | None = None
    output: list[ConversationItem] = Field(default_factory=list)
    usage: Usage | None = None


class ResponseCreated(ServerEvent):
    type: Literal["response.created"] = "response.created"
    response: Response


class ResponseDone(ServerEvent):
    type: Literal["response.done"] = "response.done"
    response: Response


class OutputItemAdded(ServerEvent):
    type: Literal["response.output_item.added"] = "response.output_item.added"
    response_id: str = ""
    output_index: int = 0
    item: ConversationItem


class OutputItemDone(ServerEvent):
    type: Literal["response.output_item.done"] = "response.output_item.done"
    response_id: str = ""
    output_index: int = 0
    item: ConversationItem


class _PartEvent(ServerEvent):
    response_id: str = ""
    item_id: str = ""
    output_index: int = 0
    content_index: int = 0


class ContentPartAdded(_PartEvent):
    type: Literal["response.content_part.added"] = "response.content_part.added"
    part: dict[str, Any] = Field(default_factory=dict)


class ContentPartDone(_PartEvent):
    type: Literal["response.content_part.done"] = "response.content_part.done"
    part: dict[str, Any] = Field(default_factory=dict)


class OutputAudioDelta(_PartEvent):
    type: Literal["response.output_audio.delta"] = "response.output_audio.delta"
    delta: str
    """Base64 PCM in the session's output format."""


class OutputAudioDone(_PartEvent):
    type: Literal["response.output_audio.done"] = "response.output_audio.done"


class OutputAudioTranscriptDelta(_PartEvent):
    type: Literal["response.output_audio_transcript.delta"] = (
        "response.output_audio_transcript.delta"
    )
    delta: str = ""


class OutputAudioTranscriptDone(_PartEvent):
    type: Literal["response.output_audio_transcript.done"] = "response.output_audio_transcript.done"
    transcript: str = ""


class OutputTextDelta(_PartEvent):
    type: Literal["response.output_text.delta"] = "response.output_text.delta"
    delta: str = ""


class OutputTextDone(_PartEvent):
    type: Literal["response.output_text.done"] = "response.output_text.done"
    text: str = ""


class FunctionCallArgumentsDelta(ServerEvent):
    type: Literal["response.function_call_arguments.delta"] = (
        "response.function_call_arguments.delta"
    )
    response_id: str = ""
    item_id: str = ""
    output_index: int = 0
    call_id: str
    delta: str = ""


class FunctionCallArgumentsDone(ServerEvent):
    type: Literal["response.function_call_arguments.done"] = "response.function_call_arguments.done"
    response_id: str = ""
    item_id: str = ""
    output_index: int = 0
    call_id: str
    name: str | None = None
    """Not in every published schema, but sent in practice; the output item has it too."""
    arguments: str = ""


class RateLimitsUpdated(ServerEvent):
    type: Literal["rate_limits.updated"] = "rate_limits.updated"
    rate_limits: list[dict[str, Any]] = Field(default_factory=list)


class UnknownServerEvent(ServerEvent):
    """A server event this module does not model: recorded and logged, never fatal."""

    type: str
    data: dict[str, Any] = Field(default_factory=dict)


SERVER_EVENTS: dict[str, type[ServerEvent]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        ErrorEvent,
        SessionCreated,
        SessionUpdated,
        ConversationCreated,
        ConversationItemAdded,
        ConversationItemDone,
        ConversationItemTruncated,
        SpeechStarted,
        SpeechStopped,
        InputAudioBufferCommitted,
        InputAudioBufferCleared,
        InputTranscriptionDelta,
        InputTranscriptionCompleted,
        InputTranscriptionFailed,
        ResponseCreated,
        ResponseDone,
        OutputItemAdded,
        OutputItemDone,
        ContentPartAdded,
        ContentPartDone,
        OutputAudioDelta,
        OutputAudioDone,
        OutputAudioTranscriptDelta,
        OutputAudioTranscriptDone,
        OutputTextDelta,
        OutputTextDone,
        FunctionCallArgumentsDelta,
        FunctionCallArgumentsDone,
        RateLimitsUpdated,
    )
}


def _parse(
    raw: str | bytes | dict[str, Any], table: dict[str, type[Any]], side: str
) -> tuple[str, dict[str, Any], type[Any] | None]:
    data = decode_json_object(raw, f"OpenAI Realtime {side} event")
    kind = data.get("type")
    if not isinstance(kind, str) or not kind:
        raise ProtocolError(f"OpenAI Realtime {side} event has no 'type': {str(data)[:200]}")
    return kind, data, table.get(kind)


def parse_server_event(raw: str | bytes | dict[str, Any]) -> ServerEvent:
    """One server message → its model; unknown types give ``UnknownServerEvent``."""
    kind, data, cls = _parse(raw, SERVER_EVENTS, "server")
    if cls is None:
        return UnknownServerEvent(type=kind, event_id=str(data.get("event_id", "")), data=data)
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise ProtocolError(
            f"OpenAI Realtime server event {kind!r}: {describe_validation_error(exc)}"
        ) from exc


def parse_client_event(raw: str | bytes | dict[str, Any]) -> ClientEvent:
    """One client message → its model (the fake server uses this); unknown types are errors."""
    kind, data, cls = _parse(raw, CLIENT_EVENTS, "client")
    if cls is None:
        raise ProtocolError(f"unknown OpenAI Realtime client event type {kind!r}")
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise ProtocolError(
            f"OpenAI Realtime client event {kind!r}: {describe_validation_error(exc)}"
        ) from exc
