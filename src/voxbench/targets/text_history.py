"""The conversation of a text chat session, provider-neutral, and what every provider needs
to render it: history normalisation, tool-result serialisation, argument parsing.

A ``ChatMessage`` is one user message or one assistant *step* (what one provider response
produced: text, then tool calls with their results). The runner's history has one assistant
message per turn with all of the turn's calls and its whole spoken text; since an agent
speaks its final words after its tools answer, ``messages_from_history`` splits such a
message into a call step followed by a text step, so every provider renders a valid order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from voxbench.core.session import HistoryMessage, HistoryToolCall


@dataclass
class ChatMessage:
    """One message of a chat session's conversation."""

    role: Literal["user", "assistant"]
    text: str = ""
    calls: list[HistoryToolCall] = field(default_factory=list)
    native: Any = None
    """The provider's own rendering of an assistant step it produced (Gemini keeps its parts
    with their thought signatures); ``None`` for steps rebuilt from history."""


def messages_from_history(history: list[HistoryMessage]) -> list[ChatMessage]:
    """Normalise the runner's history into user messages and assistant steps."""
    out: list[ChatMessage] = []
    for message in history:
        if message.role == "user":
            if message.text.strip():
                out.append(ChatMessage(role="user", text=message.text))
            continue
        if message.tool_calls:
            out.append(ChatMessage(role="assistant", calls=list(message.tool_calls)))
        if message.text.strip():
            out.append(ChatMessage(role="assistant", text=message.text))
    return out


def result_text(result: Any) -> str:
    """A tool result as the string providers take (JSON unless it already is a string)."""
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)


def result_object(result: Any) -> dict[str, Any]:
    """A tool result as a JSON object (Gemini and Bedrock want one): non-objects are wrapped."""
    if isinstance(result, dict):
        return result
    return {"result": result}


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse streamed tool-call arguments: ``(arguments, None)`` or ``({}, why it failed)``.

    Empty arguments mean a call without parameters (several providers send ``""``).
    """
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"{exc.msg} at position {exc.pos}"
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}"
    return value, None


_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def safe_call_id(call_id: str) -> str:
    """A call id in the ``[A-Za-z0-9_-]`` alphabet Anthropic and Bedrock require."""
    return _ID_CHARS.sub("_", call_id)[:64] or "call"
