"""The response and tool-call state machine of the OpenAI Realtime adapter.

Rules it keeps:
- ``ToolCallRequested`` once per ``call_id``, and only for a response that ends
  ``completed``: ``function_call_arguments.done`` is also sent for a response that is then
  cancelled (barge-in) or cut short (``incomplete``), whose arguments may be truncated, so
  calls are held until ``response.done`` says how the response ended (calls a server only
  reports in ``response.done``'s output, as xAI may, are read there too).
- The calls of one response are answered together: once every call has a result *and* the
  response is done, the outputs go out followed by one ``response.create`` (never while a
  response is active: that is the ``conversation_already_has_active_response`` error).
- ``TurnComplete`` only when a response finishes with no call pending. When user audio was
  committed with transcription on, it waits (at most ``transcript_grace`` seconds) for that
  item's transcript, which the server sends asynchronously and may deliver after
  ``response.done``; a transcript that comes later still is dropped, not given to the next
  turn.
- A user transcript with ``status: "in_progress"`` (xAI's partials, sent under the
  ``...completed`` name) is not final: it neither becomes the turn's transcript nor releases
  the turn; the last partial stands in only when the final never comes within the grace.
- Transcript text: deltas are emitted as they come; the ``.done`` event's full transcript is
  authoritative, so a delta that was never delivered is emitted from it, and a delta that
  arrives after ``.done`` (out of order) is ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from voxbench.core.errors import ErrorCategory
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    Interrupted,
    SessionEvent,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    Usage,
    UserTranscript,
)
from voxbench.targets.realtime.audio import b64decode
from voxbench.targets.realtime.base import parse_tool_arguments
from voxbench.targets.realtime.openai import events as ev


class TrackedSession(Protocol):
    """What the tracker needs of its session (the session owns the tracker, not the reverse)."""

    provider: str
    options: dict[str, Any]
    """The session's target options (the tracker reads ``transcript_grace``)."""

    def emit(self, event: SessionEvent) -> None:
        """Queue an event for the runner."""

    async def send_tool_outputs(self, outputs: list[tuple[str, Any]]) -> None:
        """Send the outputs of a response's calls, then ask the model to continue."""


log = logging.getLogger(__name__)

BENIGN_ERROR_CODES = frozenset(
    {"response_cancel_not_active", "conversation_already_has_active_response"}
)
"""Errors that only say a harmless request raced the server (logged, not reported)."""


@dataclass
class _Part:
    emitted: str = ""
    done: bool = False


class ResponseTracker:
    """Turns OpenAI response events into Session events for one session."""

    def __init__(self, session: TrackedSession) -> None:
        self.session = session
        self.transcript_grace = float(session.options.get("transcript_grace", 1.0))
        self.transcribes = False
        """Set by the session: committed user audio gets an asynchronous transcript."""
        self.responding = False
        self._requested: set[str] = set()
        self._seen_calls: set[str] = set()
        self._call_names: dict[str, str] = {}
        self._results: dict[str, Any] = {}
        self._unbatched: list[str] = []
        self._held_calls: dict[str, tuple[str | None, str]] = {}
        """Calls of the response in progress (name, arguments), until it is done."""
        self._batches: list[list[str]] = []
        """Per done response, its call ids: answered together, in order."""
        self._done_responses: set[str] = set()
        self._parts: dict[tuple[str, int], _Part] = {}
        self._awaiting: set[str] = set()
        self._expired: set[str] = set()
        self._partials: dict[str, str] = {}
        """The latest partial user transcript per item (xAI), until its final one."""
        self._pending_status: str | None = None
        self._grace: asyncio.Task[None] | None = None

    # -- requests from the session --------------------------------------------------------

    def response_requested(self, event_id: str) -> None:
        """We sent ``response.create`` with this client event id."""
        self._requested.add(event_id)

    async def answer(self, call_id: str, result: Any) -> None:
        """The runner's result for ``call_id`` (it may come before the response is done)."""
        if call_id not in self._seen_calls:
            log.warning("%s: result for unknown call %s ignored", self.session.provider, call_id)
            return
        self._results.setdefault(call_id, result)
        await self._continue_if_answered()

    def on_barge_in(self) -> None:
        """The user started speaking: an active response is being interrupted."""
        if self.responding:
            self.session.emit(Interrupted())

    def cancel_timers(self) -> None:
        """Stop the transcript grace timer (session closing)."""
        if self._grace is not None:
            self._grace.cancel()

    # -- server events --------------------------------------------------------------------

    async def on_error(self, event: ev.ErrorEvent) -> None:
        error = event.error
        if error.code in BENIGN_ERROR_CODES:
            log.debug("%s: benign error %s: %s", self.session.provider, error.code, error.message)
            return
        category, retryable = classify_error(error)
        code = f" [{error.code}]" if error.code else ""
        self.session.emit(
            TargetError(
                category=category,
                message=f"{self.session.provider}: {error.type}{code}: {error.message}",
                retryable=retryable,
            )
        )
        if error.event_id in self._requested and not self.responding:
            # Our response.create was refused: no response will come for this turn.
            self._requested.discard(error.event_id)
            self._finish("failed")

    async def on_committed(self, event: ev.InputAudioBufferCommitted) -> None:
        if self.transcribes:
            self._awaiting.add(event.item_id)

    async def on_user_transcript(self, event: ev.InputTranscriptionCompleted) -> None:
        if event.item_id in self._expired:
            log.info("%s: late transcript of %s dropped", self.session.provider, event.item_id)
            return
        if event.status == "in_progress":
            self._partials[event.item_id] = event.transcript
            return
        self._partials.pop(event.item_id, None)
        if event.transcript:
            self.session.emit(UserTranscript(text=event.transcript))
        self._awaiting.discard(event.item_id)
        self._release_if_ready()

    async def on_user_transcript_failed(self, event: ev.InputTranscriptionFailed) -> None:
        self._awaiting.discard(event.item_id)
        self._release_if_ready()

    async def on_response_created(self, event: ev.ResponseCreated) -> None:
        self.responding = True
        self._requested.clear()

    async def on_output_item_added(self, event: ev.OutputItemAdded) -> None:
        item = event.item
        if item.type == "function_call" and item.call_id and item.name:
            self._call_names[item.call_id] = item.name

    async def on_audio_delta(self, event: ev.OutputAudioDelta) -> None:
        pcm = b64decode(event.delta, "response.output_audio.delta")
        if pcm:
            self.session.emit(AssistantAudio(pcm=pcm, sample_rate=ev.OUTPUT_SAMPLE_RATE))

    async def on_text_delta(
        self, event: ev.OutputAudioTranscriptDelta | ev.OutputTextDelta
    ) -> None:
        part = self._parts.setdefault((event.item_id, event.content_index), _Part())
        if part.done:
            log.info("%s: transcript delta after its .done ignored", self.session.provider)
            return
        if event.delta:
            part.emitted += event.delta
            self.session.emit(AssistantTextDelta(text=event.delta))

    async def on_text_done(self, event: ev.OutputAudioTranscriptDone | ev.OutputTextDone) -> None:
        part = self._parts.setdefault((event.item_id, event.content_index), _Part())
        if part.done:
            return
        part.done = True
        final = event.transcript if isinstance(event, ev.OutputAudioTranscriptDone) else event.text
        if final.startswith(part.emitted):
            if final[len(part.emitted) :]:
                self.session.emit(AssistantTextDelta(text=final[len(part.emitted) :]))
        else:
            log.warning(
                "%s: streamed transcript %r disagrees with final %r",
                self.session.provider,
                part.emitted[:80],
                final[:80],
            )

    async def on_function_call(self, event: ev.FunctionCallArgumentsDone) -> None:
        self._held_calls.setdefault(event.call_id, (event.name, event.arguments))

    async def on_response_done(self, event: ev.ResponseDone) -> None:
        response = event.response
        if response.id in self._done_responses:
            return
        self._done_responses.add(response.id)
        self.responding = False
        held, self._held_calls = self._held_calls, {}
        if response.status in ("completed", "in_progress"):
            for call_id, (name, arguments) in held.items():
                self._register_call(call_id, name, arguments)
            for item in response.output:
                if item.type == "function_call" and item.call_id:
                    self._register_call(item.call_id, item.name, item.arguments or "")
        elif held:
            log.info(
                "%s: calls %s of a %s response not executed",
                self.session.provider,
                sorted(held),
                response.status,
            )
        if response.usage is not None:
            self.session.emit(_usage(response.usage))
        if self._unbatched:
            self._batches.append(list(self._unbatched))
            self._unbatched.clear()
            await self._continue_if_answered()
            return
        if response.status == "failed":
            self.session.emit(
                TargetError(
                    category=ErrorCategory.SERVER,
                    message=f"{self.session.provider}: response failed: {response.status_details}",
                    retryable=True,
                )
            )
        status = "completed" if response.status == "in_progress" else response.status
        self._finish(status)

    # -- internals ------------------------------------------------------------------------

    def _register_call(self, call_id: str, name: str | None, raw: str) -> None:
        if call_id in self._seen_calls:
            return  # announced already (duplicate event, or repeated in response.done)
        self._seen_calls.add(call_id)
        self._unbatched.append(call_id)
        arguments, error = parse_tool_arguments(raw)
        self.session.emit(
            ToolCallRequested(
                call_id=call_id,
                name=name or self._call_names.get(call_id, ""),
                arguments=arguments,
                raw_arguments=raw if error else None,
                parse_error=error,
            )
        )

    async def _continue_if_answered(self) -> None:
        while self._batches and all(c in self._results for c in self._batches[0]):
            batch = self._batches.pop(0)
            await self.session.send_tool_outputs([(c, self._results.pop(c)) for c in batch])

    def _finish(self, status: str) -> None:
        if self._awaiting:
            self._pending_status = status
            self._grace = asyncio.create_task(self._grace_expiry())
            return
        self._complete(status)

    def _release_if_ready(self) -> None:
        if self._pending_status is not None and not self._awaiting:
            if self._grace is not None:
                self._grace.cancel()
            self._complete(self._pending_status)

    async def _grace_expiry(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(self.transcript_grace)
            for item_id in sorted(self._awaiting):
                partial = self._partials.pop(item_id, "")
                if partial:  # the final never came: the last partial is all we heard
                    self.session.emit(UserTranscript(text=partial))
            self._expired |= self._awaiting
            self._awaiting.clear()
            if self._pending_status is not None:
                self._complete(self._pending_status)

    def _complete(self, status: str) -> None:
        self._pending_status = None
        self._parts.clear()
        self._call_names.clear()
        self._requested.clear()
        self.session.emit(TurnComplete(status=status))  # type: ignore[arg-type]


def _usage(usage: ev.Usage) -> Usage:
    details_in = usage.input_token_details or {}
    details_out = usage.output_token_details or {}
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_input_tokens=int(details_in.get("cached_tokens", 0) or 0),
        audio_input_tokens=int(details_in.get("audio_tokens", 0) or 0),
        audio_output_tokens=int(details_out.get("audio_tokens", 0) or 0),
    )


def classify_error(error: ev.ErrorDetail) -> tuple[ErrorCategory, bool]:
    """``(category, retryable)`` of a server ``error`` event."""
    text = f"{error.type} {error.code or ''}".lower()
    if "rate_limit" in text:
        return ErrorCategory.RATE_LIMIT, True
    if "auth" in text or "permission" in text or "api_key" in text:
        return ErrorCategory.AUTHENTICATION, False
    if "server" in text or "internal" in text or "overloaded" in text:
        return ErrorCategory.SERVER, True
    return ErrorCategory.BAD_REQUEST, False
