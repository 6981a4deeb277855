"""The Session interface: how the runner drives every system under test.

A text model is a Session that ignores audio; a cascade composes STT + a text Session +
TTS; a realtime model maps its websocket protocol onto it. The runner never knows which
kind it drives. Targets implement ``Session`` and nothing else: retries, timeouts,
recording and timestamps belong to the runner.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from voxbench.core.benchmark import ToolSpec
from voxbench.core.events import SessionEvent


class HistoryToolCall(BaseModel):
    """A tool call in the conversation history, with the result it got."""

    model_config = ConfigDict(extra="forbid")

    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None


class HistoryMessage(BaseModel):
    """One message of the conversation so far, used to resume or rehydrate a session."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    text: str = ""
    tool_calls: list[HistoryToolCall] = Field(default_factory=list)


class SessionSetup(BaseModel):
    """Everything a session needs before the first user turn."""

    model_config = ConfigDict(extra="forbid")

    system_prompt: str
    tools: list[ToolSpec] = Field(default_factory=list)
    history: list[HistoryMessage] = Field(default_factory=list)
    """Conversation so far (resume, reconnect); empty for a fresh run."""
    modality: Literal["text", "audio"] = "text"
    resume_handle: str | None = None
    """What the previous session of this conversation gave as ``Session.resume_handle()``
    (a reconnect): a target that keeps the conversation server-side resumes it instead of
    replaying ``history``, and replays ``history`` when the server refuses the handle."""


class TargetInfo(BaseModel):
    """What kind of system a session is: what it takes in and puts out."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """``provider/model``."""
    input_modality: Literal["text", "audio"] = "text"
    """``audio``: listens to ``send_user_audio`` natively (realtime models, cascades). In
    audio mode the runner wraps a ``text`` target in a cascade (STT → target → TTS)."""
    output_modality: Literal["text", "audio"] = "text"
    input_sample_rate: int | None = None
    output_sample_rate: int | None = None
    in_process: bool = False
    """Runs inside this process (no network): the runner may use a virtual clock."""


class Session(abc.ABC):
    """One conversation with a system under test."""

    info: TargetInfo

    @abc.abstractmethod
    async def start(self, setup: SessionSetup) -> None:
        """Open the conversation: connect, send instructions, tools and history."""

    @abc.abstractmethod
    async def send_user_text(self, text: str) -> None:
        """Add user text to the current turn."""

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        """Stream a chunk of user audio (mono PCM16); text-only targets ignore it."""
        return None

    @abc.abstractmethod
    async def end_user_turn(self) -> None:
        """The user is done: the target should respond."""

    @abc.abstractmethod
    async def send_tool_result(self, call_id: str, result: Any) -> None:
        """Answer a ``ToolCallRequested``; once all calls of a response are answered the
        target continues by itself."""

    @abc.abstractmethod
    def events(self) -> AsyncIterator[SessionEvent]:
        """The single stream of everything the target emits, for the session's lifetime."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release connections; safe to call twice."""

    def resume_handle(self) -> str | None:
        """A provider handle to the conversation as of the last completed turn, with which a
        new session continues it server-side (``SessionSetup.resume_handle``); None when
        the target keeps no such state or holds no current handle (then history is replayed)."""
        return None
