"""The base of every text chat adapter: one provider request per assistant step.

A user turn starts a response; each step is one streamed provider request whose text
deltas are emitted as they arrive. A step that asks for tools emits one
``ToolCallRequested`` per call; once every call has its ``send_tool_result``, the next step
is requested by itself. ``TurnComplete`` follows the first step without tool calls, or the
first step that stopped badly (cut short, refused, an undocumented stop value): that step's
tool calls are not executed (``stop_reasons.completes``) and the turn ends with its status.
Subclasses implement ``request_step`` (build the request, parse the wire protocol) and
nothing else: failures become ``TargetError`` events here, and the runner retries.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from voxbench.core.errors import ErrorCategory, PrerequisiteError
from voxbench.core.events import SessionEvent, TargetError, ToolCallRequested, TurnComplete
from voxbench.core.secrets import get_secret
from voxbench.core.session import HistoryToolCall, Session, SessionSetup, TargetInfo
from voxbench.providers.http import error_from_exception, error_from_status, make_http_client
from voxbench.targets import stop_reasons
from voxbench.targets.stop_reasons import Ending, completes, turn_ending
from voxbench.targets.text_history import ChatMessage, messages_from_history

log = logging.getLogger(__name__)

MAX_STEPS_PER_TURN = 16
"""A model that keeps calling tools is stopped after this many steps (the runner's per-turn
call cap answers the calls; this stops the requests)."""


class StepFailed(Exception):
    """A step's request failed; carries the classified error."""

    def __init__(self, error: TargetError) -> None:
        super().__init__(error.message)
        self.error = error


@dataclass
class StepResult:
    """What one provider response produced."""

    text: str = ""
    calls: list[ToolCallRequested] = field(default_factory=list)
    native: Any = None
    """Provider rendering to keep with the step (see ``ChatMessage.native``)."""
    stop_reason: str | None = None


Emit = Callable[[SessionEvent], None]


class ChatSession(Session, abc.ABC):
    """A Session over a stateless chat API: the conversation is resent on every request."""

    provider = "chat"
    """Provider name used in error messages."""
    stop_reasons: Mapping[str, Ending] = stop_reasons.OPENAI
    """The provider's documented stop / finish values and what each means for the turn."""
    key_vars: tuple[str, ...] = ()
    """Env vars holding the API key, in order of preference; empty when no key is needed."""
    key_required = True
    """False for local servers where a key is optional (vLLM, a generic endpoint)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        options: dict[str, Any] | None = None,
        target_name: str | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.options = dict(options or {})
        self.info = TargetInfo(name=target_name or f"{self.provider}/{model}")
        self.setup: SessionSetup | None = None
        self.conversation: list[ChatMessage] = []
        self.api_key: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._user_text: list[str] = []
        self._task: asyncio.Task[None] | None = None
        self._waiting: dict[str, HistoryToolCall] = {}
        self._all_answered = asyncio.Event()
        self._turn_output = False

    # -- Session ---------------------------------------------------------------------------

    async def start(self, setup: SessionSetup) -> None:
        self.api_key = self.resolve_key()
        self.setup = setup
        self.conversation = messages_from_history(setup.history)
        self._client = make_http_client(self.options.get("timeout"))

    def resolve_key(self) -> str | None:
        """The API key from the environment; raises ``PrerequisiteError`` naming the vars."""
        if not self.key_vars:
            return None
        return get_secret(*self.key_vars, required=self.key_required, purpose=self.info.name)

    async def send_user_text(self, text: str) -> None:
        self._user_text.append(text)

    async def end_user_turn(self) -> None:
        if self.setup is None:
            raise PrerequisiteError(f"{self.info.name}: start() the session before a turn")
        text = " ".join(t.strip() for t in self._user_text if t.strip())
        self._user_text.clear()
        self.conversation.append(ChatMessage(role="user", text=text))
        self._turn_output = False
        self._task = asyncio.create_task(self._respond())

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        call = self._waiting.pop(call_id, None)
        if call is None:
            return  # unknown or already answered: a duplicate answer must not restart a step
        call.result = result
        if not self._waiting:
            self._all_answered.set()

    async def events(self) -> AsyncIterator[SessionEvent]:
        while True:
            yield await self._queue.get()

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._task = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # -- the response loop -------------------------------------------------------------------

    def _emit(self, event: SessionEvent) -> None:
        if not isinstance(event, TargetError | TurnComplete):
            self._turn_output = True
        self._queue.put_nowait(event)

    async def _respond(self) -> None:
        for _ in range(MAX_STEPS_PER_TURN):
            try:
                step = await self.request_step(self._emit)
            except StepFailed as failed:
                self._fail(failed.error)
                return
            except httpx.HTTPError as exc:
                self._fail(error_from_exception(exc, provider=self.provider))
                return
            except Exception as exc:  # an adapter bug is a recorded failure, never a hang
                message = f"{self.provider}: {type(exc).__name__}: {exc}"
                self._fail(TargetError(category=ErrorCategory.PROTOCOL, message=message))
                return
            if step.calls and not completes(self.stop_reasons, step.stop_reason):
                # A truncated or refused step: its calls' arguments cannot be trusted, and
                # the history keeps only its text (no tool_use left without a result).
                names = [c.name for c in step.calls]
                log.info(
                    "%s: calls %s of a step that stopped with %r not executed",
                    self.info.name,
                    names,
                    step.stop_reason,
                )
                self.conversation.append(ChatMessage(role="assistant", text=step.text))
                ending = turn_ending(self.provider, self.stop_reasons, step.stop_reason, names)
                for event in ending:
                    self._emit(event)
                return
            calls = [
                HistoryToolCall(call_id=c.call_id, name=c.name, arguments=c.arguments)
                for c in step.calls
            ]
            self.conversation.append(
                ChatMessage(role="assistant", text=step.text, calls=calls, native=step.native)
            )
            if not calls:
                for event in turn_ending(self.provider, self.stop_reasons, step.stop_reason):
                    self._emit(event)
                return
            self._waiting = {c.call_id: c for c in calls}
            self._all_answered.clear()
            for call in step.calls:
                self._emit(call)
            await self._all_answered.wait()
        self._fail(
            TargetError(
                category=ErrorCategory.AGENT,
                message=f"{self.info.name}: still calling tools after {MAX_STEPS_PER_TURN} steps",
            )
        )

    def _fail(self, error: TargetError) -> None:
        # A retryable failure after the turn produced output cannot be resumed by this
        # session: mark it fatal so the runner rebuilds the turn from history.
        if error.retryable and self._turn_output:
            error = error.model_copy(update={"fatal": True})
        self._queue.put_nowait(error)
        self._queue.put_nowait(TurnComplete(status="failed"))

    # -- for subclasses ------------------------------------------------------------------------

    @abc.abstractmethod
    async def request_step(self, emit: Emit) -> StepResult:
        """Send the conversation, stream the response (emitting text deltas and usage as they
        arrive) and return what the step produced; raise ``StepFailed`` on a bad response."""

    @property
    def client(self) -> httpx.AsyncClient:
        """The session's HTTP client (after ``start``)."""
        if self._client is None:
            raise PrerequisiteError(f"{self.info.name}: the session is not started")
        return self._client

    async def check_response(self, response: httpx.Response) -> None:
        """Raise ``StepFailed`` with the classified error when ``response`` is not a 2xx."""
        if response.is_success:
            return
        body = await response.aread()
        raise StepFailed(
            error_from_status(
                response.status_code,
                response.headers,
                body,
                provider=self.provider,
                key_vars=self.key_vars,
                url=str(response.request.url),
            )
        )

    def protocol_error(self, message: str) -> StepFailed:
        """A response that breaks the provider's documented protocol (retryable: a glitch)."""
        return StepFailed(
            TargetError(
                category=ErrorCategory.PROTOCOL,
                message=f"{self.provider}: {message}",
                retryable=True,
            )
        )
