"""Amazon Nova Sonic wire protocol: the JSON events of ``InvokeModelWithBidirectionalStream``.

Sources (docs.aws.amazon.com, Amazon Nova 2 user guide, 2026): "Handling input events with
the bidirectional API" (``sessionStart {inferenceConfiguration}``, ``promptStart
{promptName, textOutputConfiguration, audioOutputConfiguration,
toolUseOutputConfiguration, toolConfiguration}``, ``contentStart {promptName, contentName,
type: TEXT|AUDIO|TOOL, interactive, role: SYSTEM|USER|ASSISTANT|TOOL, textInputConfiguration
| audioInputConfiguration | toolResultInputConfiguration}``, ``textInput`` / ``audioInput`` /
``toolResult {promptName, contentName, content}``, ``contentEnd``, ``promptEnd``,
``sessionEnd``; history once, after the system prompt and before audio; one audio content
for the whole session), "Handling output events" (``completionStart``, ``contentStart``
with ``additionalModelFields`` carrying ``generationStage`` SPECULATIVE|FINAL,
``textOutput``, ``audioOutput``, ``toolUse {toolName, toolUseId, content}``,
``contentEnd {stopReason: PARTIAL_TURN|END_TURN|INTERRUPTED|TOOL_USE}``,
``completionEnd``, ``usageEvent``; a barge-in is a text output ``{ "interrupted" : true }``),
"Tool configuration" (``toolSpec {name, description, inputSchema {json: <schema as
text>}}``) and the Bedrock API reference (each event is the ``bytes`` of a ``chunk``).

Every event is ``{"event": {<name>: {...}}}``. Client events are strict models; the fake
parses what the adapter sends with them.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from pydantic import Field, ValidationError

from voxbench.core.errors import ProtocolError

# The framing, re-exported: the fake server (room ``testing``) frames and signs through here.
from voxbench.providers.aws_eventstream import STREAMING_PAYLOAD as STREAMING_PAYLOAD
from voxbench.providers.aws_eventstream import EventSigner as EventSigner
from voxbench.providers.aws_eventstream import encode_message as encode_message
from voxbench.providers.aws_eventstream import event_frame as event_frame
from voxbench.targets.realtime.wire import ClientModel, WireModel, describe_validation_error

INPUT_RATE: Final = 16000
OUTPUT_RATES = (8000, 16000, 24000)


class InferenceConfiguration(ClientModel):
    maxTokens: int | None = None
    topP: float | None = None
    temperature: float | None = None


class TurnDetectionConfiguration(ClientModel):
    endpointingSensitivity: Literal["HIGH", "MEDIUM", "LOW"]


class SessionStart(ClientModel):
    inferenceConfiguration: InferenceConfiguration = Field(default_factory=InferenceConfiguration)
    turnDetectionConfiguration: TurnDetectionConfiguration | None = None


class MediaType(ClientModel):
    mediaType: Literal["text/plain", "application/json"] = "text/plain"


class AudioOutputConfiguration(ClientModel):
    mediaType: Literal["audio/lpcm"] = "audio/lpcm"
    sampleRateHertz: int = 24000
    sampleSizeBits: Literal[16] = 16
    channelCount: Literal[1] = 1
    voiceId: str = "matthew"
    encoding: Literal["base64"] = "base64"
    audioType: Literal["SPEECH"] = "SPEECH"


class AudioInputConfiguration(ClientModel):
    mediaType: Literal["audio/lpcm"] = "audio/lpcm"
    sampleRateHertz: Literal[8000, 16000, 24000] = INPUT_RATE
    sampleSizeBits: Literal[16] = 16
    channelCount: Literal[1] = 1
    audioType: Literal["SPEECH"] = "SPEECH"
    encoding: Literal["base64"] = "base64"


class InputSchema(ClientModel):
    json_: str = Field(alias="json")
    """The JSON schema as text."""


class ToolSpec(ClientModel):
    name: str
    description: str = ""
    inputSchema: InputSchema


class Tool(ClientModel):
    toolSpec: ToolSpec


class ToolConfiguration(ClientModel):
    tools: list[Tool] = Field(default_factory=list)


class PromptStart(ClientModel):
    promptName: str
    textOutputConfiguration: MediaType = Field(default_factory=MediaType)
    audioOutputConfiguration: AudioOutputConfiguration | None = None
    toolUseOutputConfiguration: MediaType | None = None
    toolConfiguration: ToolConfiguration | None = None


class ToolResultInputConfiguration(ClientModel):
    toolUseId: str
    type: Literal["TEXT"] = "TEXT"
    textInputConfiguration: MediaType = Field(default_factory=MediaType)


class ContentStart(ClientModel):
    promptName: str
    contentName: str
    type: Literal["TEXT", "AUDIO", "TOOL"]
    interactive: bool
    role: Literal["SYSTEM", "USER", "ASSISTANT", "TOOL"]
    textInputConfiguration: MediaType | None = None
    audioInputConfiguration: AudioInputConfiguration | None = None
    toolResultInputConfiguration: ToolResultInputConfiguration | None = None


class ContentInput(ClientModel):
    """``textInput``, ``audioInput`` (base64 PCM) and ``toolResult`` (text) alike."""

    promptName: str
    contentName: str
    content: str


class ContentEnd(ClientModel):
    promptName: str
    contentName: str


class PromptEnd(ClientModel):
    promptName: str


class SessionEnd(ClientModel):
    pass


CLIENT_EVENTS: dict[str, type[ClientModel]] = {
    "sessionStart": SessionStart,
    "promptStart": PromptStart,
    "contentStart": ContentStart,
    "textInput": ContentInput,
    "audioInput": ContentInput,
    "toolResult": ContentInput,
    "contentEnd": ContentEnd,
    "promptEnd": PromptEnd,
    "sessionEnd": SessionEnd,
}


def client_event(name: str, body: ClientModel) -> bytes:
    """``{"event": {name: body}}`` as UTF-8 JSON."""
    return json.dumps({"event": {name: body.dump()}}, separators=(",", ":")).encode("utf-8")


def _unwrap(raw: bytes | str | dict[str, Any], what: str) -> tuple[str, dict[str, Any]]:
    try:
        data = json.loads(raw) if isinstance(raw, bytes | str) else raw
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{what} is not JSON: {exc}") from exc
    event = data.get("event") if isinstance(data, dict) else None
    if not isinstance(event, dict) or len(event) != 1:
        raise ProtocolError(f'{what} is not {{"event": {{<one name>: ...}}}}: {str(data)[:200]}')
    ((name, body),) = event.items()
    if not isinstance(body, dict):
        raise ProtocolError(f"{what} {name!r} is not an object")
    return str(name), body


def parse_client_event(raw: bytes | str | dict[str, Any]) -> tuple[str, ClientModel]:
    """One input event → its name and model (the fake server uses this)."""
    name, body = _unwrap(raw, "Nova Sonic input event")
    cls = CLIENT_EVENTS.get(name)
    if cls is None:
        raise ProtocolError(f"unknown Nova Sonic input event {name!r}")
    try:
        return name, cls.model_validate(body)
    except ValidationError as exc:
        raise ProtocolError(f"Nova Sonic {name!r}: {describe_validation_error(exc)}") from exc


# -- output events ---------------------------------------------------------------------------


class OutputContentStart(WireModel):
    contentId: str = ""
    type: str = "TEXT"
    role: str = "ASSISTANT"
    additionalModelFields: str | None = None

    @property
    def stage(self) -> str:
        """``SPECULATIVE`` or ``FINAL`` (``FINAL`` when the model says nothing)."""
        try:
            fields = json.loads(self.additionalModelFields or "{}")
        except json.JSONDecodeError:
            return "FINAL"
        stage = fields.get("generationStage") if isinstance(fields, dict) else None
        return str(stage or "FINAL")


class TextOutput(WireModel):
    contentId: str = ""
    role: str = "ASSISTANT"
    content: str = ""


class AudioOutput(WireModel):
    contentId: str = ""
    content: str = ""


class ToolUse(WireModel):
    contentId: str = ""
    toolName: str
    toolUseId: str
    content: Any = None


class OutputContentEnd(WireModel):
    contentId: str = ""
    type: str = "TEXT"
    role: str = "ASSISTANT"
    stopReason: str = ""


class UsageEvent(WireModel):
    details: dict[str, Any] = Field(default_factory=dict)
    totalInputTokens: int = 0
    totalOutputTokens: int = 0


class Ignored(WireModel):
    pass


SERVER_EVENTS: dict[str, type[WireModel]] = {
    "contentStart": OutputContentStart,
    "textOutput": TextOutput,
    "audioOutput": AudioOutput,
    "toolUse": ToolUse,
    "contentEnd": OutputContentEnd,
    "usageEvent": UsageEvent,
    "completionStart": Ignored,
    "completionEnd": Ignored,
}


def parse_server_event(raw: bytes | str | dict[str, Any]) -> tuple[str, WireModel | None]:
    """One output event → its name and model; None for a name we do not model."""
    name, body = _unwrap(raw, "Nova Sonic output event")
    cls = SERVER_EVENTS.get(name)
    if cls is None:
        return name, None
    try:
        return name, cls.model_validate(body)
    except ValidationError as exc:
        raise ProtocolError(f"Nova Sonic {name!r}: {describe_validation_error(exc)}") from exc
