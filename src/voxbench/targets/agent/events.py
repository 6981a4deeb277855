"""The voxbench agent protocol (``voxbench-agent/1``): every message, as pydantic models.

One definition of each message, used by the ``websocket/<url>`` target, the fake agent in
``voxbench.testing.agent_ws`` and (as documentation) ``docs/agent-protocol.md``. Text frames
carry one JSON object with a ``type``; binary frames carry raw audio, mono PCM16
little-endian, at the rate each side announced (``base64`` audio in JSON is accepted too).

voxbench → agent: ``session.start``, ``user.text``, ``user.audio`` (base64 transport only),
``user.turn_end``, ``tool.result``, ``session.end``.
agent → voxbench: ``session.ready``, ``agent.text``, ``agent.audio`` (base64 transport
only), ``user.transcript``, ``speech.started``, ``speech.stopped``, ``tool.call``,
``agent.interrupted``, ``turn.end``, ``error``.

Messages from voxbench are strict (the fake refuses a field voxbench invents); messages from
an agent tolerate extra fields, so an agent may add its own.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from voxbench.targets.realtime.wire import (
    ClientModel,
    WireModel,
    parse_tagged,
)

PROTOCOL = "voxbench-agent/1"
SAMPLE_RATES = (16000, 24000, 8000, 22050, 44100, 48000)
"""Input rates voxbench offers, preferred first (it resamples to whichever the agent picks)."""
TurnDetection = Literal["client", "agent"]
"""``client``: voxbench sends ``user.turn_end``; ``agent``: the agent's own VAD decides."""
AudioTransport = Literal["binary", "base64"]

# -- voxbench → agent -----------------------------------------------------------------------


class ToolDefinition(ClientModel):
    """A tool the agent may ask voxbench to run: a JSON-schema function."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)


class HistoryCall(ClientModel):
    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None


class HistoryItem(ClientModel):
    """One message of the conversation so far (a reconnect or a resumed run)."""

    role: Literal["user", "assistant"]
    text: str = ""
    tool_calls: list[HistoryCall] = Field(default_factory=list)


class ClientMessage(ClientModel):
    pass


class SessionStart(ClientMessage):
    """The first message on every connection."""

    type: Literal["session.start"] = "session.start"
    protocol: str = PROTOCOL
    system_prompt: str = ""
    """The benchmark's instructions and knowledge base (an agent that keeps its own prompt
    may ignore it)."""
    tools: list[ToolDefinition] = Field(default_factory=list)
    history: list[HistoryItem] = Field(default_factory=list)
    modality: Literal["text", "audio"] = "text"
    """``text``: user turns come as ``user.text`` and the agent answers in text;
    ``audio``: user turns come as audio and the agent answers with audio (and its text)."""
    input_sample_rates: list[int] = Field(default_factory=lambda: list(SAMPLE_RATES))
    """Rates voxbench can send the user's audio at, preferred first."""
    turn_detection: TurnDetection | None = None
    """What voxbench asks for; None: the agent chooses. The agent's answer decides."""


class UserText(ClientMessage):
    type: Literal["user.text"] = "user.text"
    text: str


class UserAudio(ClientMessage):
    """User audio as base64 PCM16 (only when the agent chose the ``base64`` transport)."""

    type: Literal["user.audio"] = "user.audio"
    audio: str


class UserTurnEnd(ClientMessage):
    """The user finished a turn: answer it (text turns always; audio turns with ``client``
    turn detection)."""

    type: Literal["user.turn_end"] = "user.turn_end"


class ToolResult(ClientMessage):
    type: Literal["tool.result"] = "tool.result"
    call_id: str
    result: Any = None


class SessionEnd(ClientMessage):
    type: Literal["session.end"] = "session.end"


CLIENT_MESSAGES: dict[str, type[ClientMessage]] = {
    cls.model_fields["type"].default: cls
    for cls in (SessionStart, UserText, UserAudio, UserTurnEnd, ToolResult, SessionEnd)
}

# -- agent → voxbench -----------------------------------------------------------------------


class ServerMessage(WireModel):
    type: str
    """The message's tag (each subclass fixes its own; ``UnknownServerMessage`` keeps any)."""


class SessionReady(ServerMessage):
    """The agent's answer to ``session.start``: the audio it takes and gives."""

    type: Literal["session.ready"] = "session.ready"
    input_sample_rate: int = 16000
    """The rate the agent wants user audio at (any rate; voxbench resamples)."""
    output_sample_rate: int = 24000
    """The rate of the agent's audio."""
    turn_detection: TurnDetection = "client"
    audio_transport: AudioTransport = "binary"
    agent: str | None = None
    """The agent's name and version, recorded with the run."""


class AgentText(ServerMessage):
    """A piece of what the agent says (its words, or the transcript of its speech)."""

    type: Literal["agent.text"] = "agent.text"
    text: str


class AgentAudio(ServerMessage):
    type: Literal["agent.audio"] = "agent.audio"
    audio: str


class UserTranscript(ServerMessage):
    """What the agent's ASR heard the user say."""

    type: Literal["user.transcript"] = "user.transcript"
    text: str


class SpeechStarted(ServerMessage):
    type: Literal["speech.started"] = "speech.started"


class SpeechStopped(ServerMessage):
    type: Literal["speech.stopped"] = "speech.stopped"
    audio_end_ms: int | None = None
    """Optional: where the agent's VAD placed the end of speech, in ms of user audio since
    the session's first (what OpenAI Realtime's ``audio_end_ms`` is): a stamp on the input's
    own clock, however late the message arrives."""


class ToolCall(ServerMessage):
    """The agent asks voxbench to run a benchmark tool; answered with ``tool.result``."""

    type: Literal["tool.call"] = "tool.call"
    call_id: str
    name: str
    arguments: Any = None
    """A JSON object (or JSON text of one); anything else is recorded as unparseable."""


class AgentInterrupted(ServerMessage):
    """The agent stopped speaking because the user barged in."""

    type: Literal["agent.interrupted"] = "agent.interrupted"


class TurnEnd(ServerMessage):
    """The agent finished its response and waits for no tool result."""

    type: Literal["turn.end"] = "turn.end"
    status: Literal["completed", "cancelled", "failed"] = "completed"


class AgentErrorMessage(ServerMessage):
    type: Literal["error"] = "error"
    message: str = ""
    fatal: bool = False
    """The agent cannot go on with this connection (it closes it)."""


class UnknownServerMessage(ServerMessage):
    type: str
    data: dict[str, Any] = Field(default_factory=dict)


SERVER_MESSAGES: dict[str, type[ServerMessage]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        SessionReady,
        AgentText,
        AgentAudio,
        UserTranscript,
        SpeechStarted,
        SpeechStopped,
        ToolCall,
        AgentInterrupted,
        TurnEnd,
        AgentErrorMessage,
    )
}


def parse_server_message(raw: str | bytes | dict[str, Any]) -> ServerMessage:
    """One agent message → its model; unknown types give ``UnknownServerMessage``."""
    return parse_tagged(
        raw,
        SERVER_MESSAGES,
        what="agent message",
        name="agent",
        unknown=lambda kind, data: UnknownServerMessage(type=kind, data=data),
    )


def parse_client_message(raw: str | bytes | dict[str, Any]) -> ClientMessage:
    """One voxbench message → its model (what an agent, or the fake, reads)."""
    return parse_tagged(
        raw,
        CLIENT_MESSAGES,
        what="voxbench message",
        name="voxbench",
        unknown_label="voxbench message type",
    )
