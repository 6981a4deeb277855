"""Gemini Live API wire protocol (BidiGenerateContent over a raw websocket).

Source: ai.google.dev "Get started with Gemini Live API using WebSockets" and the Live API
WebSockets reference (BidiGenerateContentClientMessage / ServerMessage), as published in
2026, cross-checked with the v1beta ``BidiGenerateContentServerContent`` proto fields
(``generationComplete``, ``inputTranscription``, ``outputTranscription``, ``interrupted``,
``turnComplete``, ``waitingForInput``). JSON field names are the proto's camelCase.

A client message holds exactly one of ``setup`` | ``clientContent`` | ``realtimeInput`` |
``toolResponse``; the first must be ``setup``, answered by ``setupComplete``. A server
message may combine ``serverContent``, ``usageMetadata`` and others in one object. Audio in
is PCM16 ``audio/pcm;rate=16000``; audio out is PCM16 at 24 kHz (``audio/pcm;rate=24000``).
There is no error event: the server reports errors by closing the socket (1007 bad input,
1008 policy/auth, 1011 internal) with a reason.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from voxbench.core.errors import ProtocolError
from voxbench.targets.realtime.wire import (
    ClientModel,
    WireModel,
    decode_json_object,
    describe_validation_error,
)

INPUT_SAMPLE_RATE = 16000
OUTPUT_SAMPLE_RATE = 24000
INPUT_MIME = f"audio/pcm;rate={INPUT_SAMPLE_RATE}"
WS_PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"

# -- shared content ------------------------------------------------------------------------


class Blob(WireModel):
    mimeType: str
    data: str
    """Base64."""


class Part(WireModel):
    text: str | None = None
    inlineData: Blob | None = None
    thought: bool | None = None


class Content(WireModel):
    role: Literal["user", "model"] | None = None
    parts: list[Part] = Field(default_factory=list)


# -- client messages -----------------------------------------------------------------------


class FunctionDeclaration(ClientModel):
    name: str
    description: str = ""
    parameters: dict[str, Any] | None = None


class Tool(ClientModel):
    functionDeclarations: list[FunctionDeclaration]


class ThinkingConfig(ClientModel):
    """Thinking: ``thinkingLevel`` (Gemini 3: minimal | low | medium | high) or, for 2.5
    models, ``thinkingBudget`` (tokens; 0 off, -1 dynamic), never both in one request."""

    thinkingBudget: int | None = None
    thinkingLevel: str | None = None
    includeThoughts: bool | None = None


THINKING_LEVELS = ("minimal", "low", "medium", "high")


class GenerationConfig(ClientModel):
    responseModalities: list[Literal["AUDIO", "TEXT"]] | None = None
    """One modality per session (the Live API guide: AUDIO or TEXT, not both)."""
    speechConfig: dict[str, Any] | None = None
    temperature: float | None = None
    maxOutputTokens: int | None = None
    thinkingConfig: ThinkingConfig | None = None


class AutomaticActivityDetection(ClientModel):
    disabled: bool | None = None
    startOfSpeechSensitivity: str | None = None
    endOfSpeechSensitivity: str | None = None
    prefixPaddingMs: int | None = None
    silenceDurationMs: int | None = None


class RealtimeInputConfig(ClientModel):
    automaticActivityDetection: AutomaticActivityDetection | None = None
    activityHandling: str | None = None


class HistoryConfig(ClientModel):
    initialHistoryInClientContent: bool | None = None
    """After ``setupComplete`` the server takes ``clientContent`` as history (no model call)
    until one has ``turnComplete: true`` (3.x live models); later ``clientContent`` turns
    are the conversation's, and ``turnComplete: true`` asks for an answer."""


class SlidingWindow(ClientModel):
    targetTokens: int | None = None


class ContextWindowCompression(ClientModel):
    """Compress the context window instead of ending the session when it fills."""

    slidingWindow: SlidingWindow | None = None
    triggerTokens: int | None = None


class SessionResumptionConfig(ClientModel):
    handle: str | None = None
    """The ``newHandle`` of an earlier session to resume; absent: a new resumable session."""


class Setup(ClientModel):
    model: str
    """``models/<name>``."""
    generationConfig: GenerationConfig | None = None
    systemInstruction: Content | None = None
    tools: list[Tool] | None = None
    realtimeInputConfig: RealtimeInputConfig | None = None
    inputAudioTranscription: dict[str, Any] | None = None
    outputAudioTranscription: dict[str, Any] | None = None
    sessionResumption: SessionResumptionConfig | None = None
    contextWindowCompression: ContextWindowCompression | None = None
    historyConfig: HistoryConfig | None = None


class ClientContent(ClientModel):
    turns: list[Content] = Field(default_factory=list)
    turnComplete: bool = False


class RealtimeInput(ClientModel):
    audio: Blob | None = None
    text: str | None = None
    activityStart: dict[str, Any] | None = None
    activityEnd: dict[str, Any] | None = None
    audioStreamEnd: bool | None = None


class FunctionResponse(ClientModel):
    id: str | None = None
    name: str
    response: dict[str, Any]


class ToolResponse(ClientModel):
    functionResponses: list[FunctionResponse]


class ClientMessage(ClientModel):
    """Exactly one field is set."""

    setup: Setup | None = None
    clientContent: ClientContent | None = None
    realtimeInput: RealtimeInput | None = None
    toolResponse: ToolResponse | None = None


# -- server messages -----------------------------------------------------------------------


class Transcription(WireModel):
    text: str = ""


class ServerContent(WireModel):
    modelTurn: Content | None = None
    generationComplete: bool | None = None
    turnComplete: bool | None = None
    interrupted: bool | None = None
    inputTranscription: Transcription | None = None
    outputTranscription: Transcription | None = None
    waitingForInput: bool | None = None
    turnCompleteReason: str | None = None


class FunctionCall(WireModel):
    id: str | None = None
    name: str
    args: Any = None
    """A JSON object; anything else is reported as unparseable arguments."""


class ToolCall(WireModel):
    functionCalls: list[FunctionCall] = Field(default_factory=list)


class ToolCallCancellation(WireModel):
    ids: list[str] = Field(default_factory=list)


class GoAway(WireModel):
    timeLeft: str | None = None


class SessionResumptionUpdate(WireModel):
    newHandle: str | None = None
    resumable: bool | None = None


class ModalityTokenCount(WireModel):
    modality: str = ""
    tokenCount: int = 0


class UsageMetadata(WireModel):
    promptTokenCount: int = 0
    cachedContentTokenCount: int = 0
    responseTokenCount: int = 0
    toolUsePromptTokenCount: int = 0
    thoughtsTokenCount: int = 0
    totalTokenCount: int = 0
    promptTokensDetails: list[ModalityTokenCount] = Field(default_factory=list)
    responseTokensDetails: list[ModalityTokenCount] = Field(default_factory=list)


class ServerMessage(WireModel):
    setupComplete: dict[str, Any] | None = None
    serverContent: ServerContent | None = None
    toolCall: ToolCall | None = None
    toolCallCancellation: ToolCallCancellation | None = None
    goAway: GoAway | None = None
    sessionResumptionUpdate: SessionResumptionUpdate | None = None
    usageMetadata: UsageMetadata | None = None

    def unknown_fields(self) -> list[str]:
        """Top-level fields this module does not model (recorded, never fatal)."""
        return sorted(self.model_extra or {})


def parse_server_message(raw: str | bytes | dict[str, Any]) -> ServerMessage:
    """One server message → its model, or ``ProtocolError``."""
    data = decode_json_object(raw, "Gemini Live server message")
    try:
        return ServerMessage.model_validate(data)
    except ValidationError as exc:
        raise ProtocolError(
            f"Gemini Live server message: {describe_validation_error(exc)}"
        ) from exc


def parse_client_message(raw: str | bytes | dict[str, Any]) -> ClientMessage:
    """One client message → its model (the fake server uses this)."""
    data = decode_json_object(raw, "Gemini Live client message")
    try:
        message = ClientMessage.model_validate(data)
    except ValidationError as exc:
        raise ProtocolError(
            f"Gemini Live client message: {describe_validation_error(exc)}"
        ) from exc
    if len(message.model_fields_set) != 1:
        raise ProtocolError(
            "Gemini Live client message must hold exactly one of setup, clientContent, "
            f"realtimeInput, toolResponse (got {sorted(data)})"
        )
    return message
