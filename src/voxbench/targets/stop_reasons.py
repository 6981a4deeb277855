"""How a text model's response ended: every documented stop / finish value, per provider.

A value maps to the turn's status and, where the turn did not succeed, to the category of
the error recorded with it. A value a table does not list is recorded as it came
(``TurnComplete.stop_reason``) with a ``protocol`` error, and the turn is ``incomplete``:
an undocumented ending is never counted a success.

Tool calls of a step that did not end ``completed`` (Anthropic ``max_tokens`` / ``refusal``,
OpenAI ``length`` / ``content_filter``, an undocumented value, …) are never executed: their
arguments may be cut short or refused content. The chat session drops them and ends the
turn here with an error naming them and the stop value (as the realtime targets do with the
calls of a cancelled or incomplete response), so the turn is recorded as an error, not a
success.

Sources (as published 2025–2026): OpenAI Chat Completions ``finish_reason``; Anthropic
Messages ``stop_reason``; Gemini ``Candidate.FinishReason`` (also google-genai's
``types.FinishReason``); Bedrock Converse ``stopReason`` (botocore's ``StopReason`` enum).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from voxbench.core.errors import ErrorCategory
from voxbench.core.events import TargetError, TurnComplete


@dataclass(frozen=True)
class Ending:
    """What a documented stop value means for the turn."""

    status: Literal["completed", "incomplete", "failed"]
    category: ErrorCategory | None = None
    """The error category recorded with a turn that did not succeed (None: no error)."""


COMPLETED = Ending("completed")
CUT_SHORT = Ending("incomplete", ErrorCategory.BAD_REQUEST)
REFUSED = Ending("failed", ErrorCategory.REFUSED)
MALFORMED = Ending("failed", ErrorCategory.MALFORMED_TOOL_CALL)
BROKEN = Ending("failed", ErrorCategory.PROTOCOL)

OPENAI: Mapping[str, Ending] = {
    "stop": COMPLETED,
    "tool_calls": COMPLETED,
    "function_call": COMPLETED,
    "length": Ending("incomplete"),
    "content_filter": REFUSED,
}
ANTHROPIC: Mapping[str, Ending] = {
    "end_turn": COMPLETED,
    "stop_sequence": COMPLETED,
    "tool_use": COMPLETED,
    "max_tokens": Ending("incomplete"),
    "pause_turn": Ending("incomplete", ErrorCategory.SERVER),
    "model_context_window_exceeded": CUT_SHORT,
    "refusal": REFUSED,
}
GEMINI: Mapping[str, Ending] = {
    "STOP": COMPLETED,
    "MAX_TOKENS": Ending("incomplete"),
    "SAFETY": REFUSED,
    "RECITATION": REFUSED,
    "LANGUAGE": REFUSED,
    "BLOCKLIST": REFUSED,
    "PROHIBITED_CONTENT": REFUSED,
    "SPII": REFUSED,
    "IMAGE_SAFETY": REFUSED,
    "IMAGE_PROHIBITED_CONTENT": REFUSED,
    "IMAGE_RECITATION": REFUSED,
    "IMAGE_OTHER": REFUSED,
    "NO_IMAGE": BROKEN,
    "OTHER": BROKEN,
    "FINISH_REASON_UNSPECIFIED": BROKEN,
    "MALFORMED_FUNCTION_CALL": MALFORMED,
    "UNEXPECTED_TOOL_CALL": MALFORMED,
    "TOO_MANY_TOOL_CALLS": MALFORMED,
    "MISSING_THOUGHT_SIGNATURE": Ending("failed", ErrorCategory.BAD_REQUEST),
    "MALFORMED_RESPONSE": BROKEN,
    "ESCALATION": REFUSED,
    "MODEL_ARMOR": REFUSED,
    "PUP_LIMITED_DISABLED": Ending("failed", ErrorCategory.AUTHENTICATION),
    "CONTINUATION": Ending("incomplete"),
}
BEDROCK: Mapping[str, Ending] = {
    "end_turn": COMPLETED,
    "tool_use": COMPLETED,
    "stop_sequence": COMPLETED,
    "max_tokens": Ending("incomplete"),
    "model_context_window_exceeded": CUT_SHORT,
    "guardrail_intervened": REFUSED,
    "content_filtered": REFUSED,
    "malformed_tool_use": MALFORMED,
    "malformed_model_output": BROKEN,
}


def completes(table: Mapping[str, Ending], stop_reason: str | None) -> bool:
    """Whether a response that stopped with ``stop_reason`` ended well (its calls may run).

    No value at all (some OpenAI-compatible servers omit it) counts as completed.
    """
    if stop_reason is None:
        return True
    ending = table.get(stop_reason)
    return ending is not None and ending.status == "completed"


def turn_ending(
    provider: str,
    table: Mapping[str, Ending],
    stop_reason: str | None,
    unexecuted: Sequence[str] = (),
) -> list[TargetError | TurnComplete]:
    """The events that end a turn whose last response stopped with ``stop_reason``.

    No value at all (some OpenAI-compatible servers omit it) is a completed turn.
    ``unexecuted`` names the tool calls of that response that were dropped (it did not
    complete); the error recorded with the turn names them.
    """
    dropped = (
        f"; its tool call{'s' if len(unexecuted) > 1 else ''} "
        f"{', '.join(unexecuted)} {'were' if len(unexecuted) > 1 else 'was'} not executed"
        if unexecuted
        else ""
    )
    if stop_reason is None:
        return [TurnComplete(status="completed")]
    ending = table.get(stop_reason)
    if ending is None:
        error = TargetError(
            category=ErrorCategory.PROTOCOL,
            message=f"{provider}: undocumented stop reason {stop_reason!r}{dropped}",
            retryable=False,
        )
        return [error, TurnComplete(status="incomplete", stop_reason=stop_reason)]
    events: list[TargetError | TurnComplete] = []
    if ending.category is not None or dropped:
        events.append(
            TargetError(
                # A truncated step (no category of its own) that asked for tools: the
                # request's max_tokens was too small for the calls.
                category=ending.category or ErrorCategory.BAD_REQUEST,
                message=f"{provider}: the response stopped with {stop_reason!r}{dropped}",
                retryable=False,
            )
        )
    events.append(TurnComplete(status=ending.status, stop_reason=stop_reason))
    return events
