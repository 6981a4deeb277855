"""Ultravox wire protocol: the call-creation REST body and the websocket data messages.

Sources (docs.ultravox.ai, 2026): "WebSocket Integration" (create a call with
``medium.serverWebSocket {inputSampleRate, outputSampleRate, clientBufferSizeMs}``, join its
``joinUrl``; binary frames carry s16le PCM both ways) and "Protocol & Data Messages"
(client: ``user_text_message``, ``client_tool_result``, ``set_output_medium``, ``ping``,
``hang_up``; server: ``call_started``, ``state``, ``transcript {role, medium, text | delta,
final, ordinal}``, ``client_tool_invocation {toolName, invocationId, parameters}``,
``playback_clear_buffer``, ``pong``, ``debug``). Call creation: ``POST /api/calls`` with an
``X-API-Key`` header answers 201 with ``callId`` and ``joinUrl``; tools are
``selectedTools[].temporaryTool`` with ``client: {}`` (the client executes them);
``initialMessages`` roles are ``MESSAGE_ROLE_USER | AGENT | TOOL_CALL | TOOL_RESULT``;
``firstSpeakerSettings: {user: {}}`` lets the user speak first.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from voxbench.targets.realtime.wire import (
    ClientModel,
    WireModel,
    parse_tagged,
)

# -- call creation (REST) ------------------------------------------------------------------


class DynamicParameter(ClientModel):
    name: str
    location: Literal["PARAMETER_LOCATION_BODY"] = "PARAMETER_LOCATION_BODY"
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema")
    required: bool = False


class TemporaryTool(ClientModel):
    modelToolName: str
    description: str = ""
    dynamicParameters: list[DynamicParameter] = Field(default_factory=list)
    client: dict[str, Any] = Field(default_factory=dict)
    """Present (empty) for a client tool: the call is sent to us over the socket."""


class SelectedTool(ClientModel):
    temporaryTool: TemporaryTool


class ServerWebSocketMedium(ClientModel):
    inputSampleRate: int
    outputSampleRate: int | None = None
    clientBufferSizeMs: int | None = None


class CallMedium(ClientModel):
    serverWebSocket: ServerWebSocketMedium


class InitialMessage(ClientModel):
    role: Literal[
        "MESSAGE_ROLE_USER",
        "MESSAGE_ROLE_AGENT",
        "MESSAGE_ROLE_TOOL_CALL",
        "MESSAGE_ROLE_TOOL_RESULT",
    ]
    text: str = ""
    invocationId: str | None = None
    toolName: str | None = None
    medium: Literal["MESSAGE_MEDIUM_TEXT", "MESSAGE_MEDIUM_VOICE"] | None = None


class CreateCall(ClientModel):
    """The body of ``POST /api/calls``."""

    systemPrompt: str
    model: str | None = None
    voice: str | None = None
    temperature: float | None = None
    selectedTools: list[SelectedTool] = Field(default_factory=list)
    medium: CallMedium
    initialOutputMedium: Literal["MESSAGE_MEDIUM_TEXT", "MESSAGE_MEDIUM_VOICE"] | None = None
    initialMessages: list[InitialMessage] = Field(default_factory=list)
    firstSpeakerSettings: dict[str, Any] | None = None


class CallCreated(WireModel):
    """The 201 answer (other fields of the call object are kept as extras)."""

    callId: str
    joinUrl: str


# -- data messages (websocket) -------------------------------------------------------------


class ClientMessage(ClientModel):
    pass


class UserTextMessage(ClientMessage):
    type: Literal["user_text_message"] = "user_text_message"
    text: str
    deferResponse: bool | None = None


class ClientToolResult(ClientMessage):
    type: Literal["client_tool_result"] = "client_tool_result"
    invocationId: str
    result: str | None = None
    responseType: str | None = None
    agentReaction: Literal["speaks", "listens", "speaks-once"] | None = None
    errorType: Literal["undefined", "implementation-error"] | None = None
    errorMessage: str | None = None


class SetOutputMedium(ClientMessage):
    type: Literal["set_output_medium"] = "set_output_medium"
    medium: Literal["voice", "text"]


class Ping(ClientMessage):
    type: Literal["ping"] = "ping"
    timestamp: float


class HangUp(ClientMessage):
    type: Literal["hang_up"] = "hang_up"
    message: str | None = None


CLIENT_MESSAGES: dict[str, type[ClientMessage]] = {
    cls.model_fields["type"].default: cls
    for cls in (UserTextMessage, ClientToolResult, SetOutputMedium, Ping, HangUp)
}


class ServerMessage(WireModel):
    pass


class CallStarted(ServerMessage):
    type: Literal["call_started"] = "call_started"
    callId: str = ""


class State(ServerMessage):
    type: Literal["state"] = "state"
    state: str
    """``idle``, ``listening``, ``thinking`` or ``speaking``."""


class Transcript(ServerMessage):
    type: Literal["transcript"] = "transcript"
    role: Literal["user", "agent"]
    medium: Literal["text", "voice"] = "voice"
    text: str | None = None
    """The whole utterance so far (exclusive with ``delta``)."""
    delta: str | None = None
    final: bool = False
    ordinal: int = 0


class ClientToolInvocation(ServerMessage):
    type: Literal["client_tool_invocation"] = "client_tool_invocation"
    toolName: str
    invocationId: str
    parameters: Any = None
    """A JSON object; anything else is reported as unparseable arguments."""


class PlaybackClearBuffer(ServerMessage):
    type: Literal["playback_clear_buffer"] = "playback_clear_buffer"


class Pong(ServerMessage):
    type: Literal["pong"] = "pong"
    timestamp: float = 0.0


class Debug(ServerMessage):
    type: Literal["debug"] = "debug"
    message: Any = None


class UnknownServerMessage(ServerMessage):
    type: str
    data: dict[str, Any] = Field(default_factory=dict)


SERVER_MESSAGES: dict[str, type[ServerMessage]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        CallStarted,
        State,
        Transcript,
        ClientToolInvocation,
        PlaybackClearBuffer,
        Pong,
        Debug,
    )
}


def parse_server_message(raw: str | bytes | dict[str, Any]) -> ServerMessage:
    """One data message → its model; unknown types give ``UnknownServerMessage``."""
    return parse_tagged(
        raw,
        SERVER_MESSAGES,
        what="Ultravox data message",
        name="Ultravox",
        unknown=lambda kind, data: UnknownServerMessage(type=kind, data=data),
    )


def parse_client_message(raw: str | bytes | dict[str, Any]) -> ClientMessage:
    """One client data message → its model (the fake server uses this)."""
    return parse_tagged(
        raw,
        CLIENT_MESSAGES,
        what="Ultravox client message",
        name="Ultravox",
        unknown_label="Ultravox client message type",
    )
