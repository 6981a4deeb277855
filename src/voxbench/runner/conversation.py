"""Drive a benchmark's conversation through a target, recording everything as it happens.

Each turn: send the user's words, end the user turn, then consume the session's events —
executing tool calls against the backend simulator and answering them — until the target
completes its response (bounded by a per-turn timeout and a cap on tool calls). Every event
is stamped by the run's clock and appended to ``events.jsonl`` at once; a completed turn is
appended to ``transcript.jsonl`` with a backend checkpoint, so a killed run resumes after
its last completed turn with the conversation and the backend as they were.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from voxbench.benchmarks.backend import BackendSpec, ToolBackend, choose_harness
from voxbench.benchmarks.upstream_matching import aiewf_args_match
from voxbench.core.benchmark import Benchmark, Turn
from voxbench.core.clock import Clock, VirtualClock
from voxbench.core.errors import (
    AuthenticationError,
    ErrorCategory,
    ProviderError,
    RunError,
    RunIncompleteError,
)
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    SessionEvent,
    SpeechStarted,
    SpeechStopped,
    StageMark,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    Usage,
    UserTranscript,
)
from voxbench.core.matching import args_match
from voxbench.core.records import NudgeExchange, ToolCallRecord, TurnRecord, TurnTimings
from voxbench.core.rundir import RunDirectory
from voxbench.core.session import HistoryMessage, HistoryToolCall, Session, SessionSetup
from voxbench.core.timeline import (
    AgentSpeechHeard,
    AudioRecorded,
    HarnessNudgeSent,
    RecordingStarted,
    RunFinished,
    RunResumed,
    RunStarted,
    SessionDropped,
    Stamp,
    ToolResultSent,
    TurnEnded,
    TurnFailed,
    TurnRetry,
    TurnSkipped,
    TurnStarted,
    TurnTimedOut,
    UserTextSent,
    UserTurnEnded,
    recorded_target_event,
)
from voxbench.providers.backoff import TURN, RetryPolicy
from voxbench.runner.config import RunConfig
from voxbench.runner.credentials import provider_env
from voxbench.runner.turn_state import TurnState
from voxbench.targets.registry import canonical_name

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from voxbench.audio.wav import Audio
    from voxbench.runner.speech import SpeechTurns  # loads the audio stack: audio runs only

ProgressCallback = Callable[[int, int, TurnRecord], None]


class _DoneTurn(NamedTuple):
    """A turn run to its end, with what is kept beside it (the backend after it, progress)."""

    record: TurnRecord
    backend_state: dict[str, Any]
    position: int
    total: int


class _RetryTurn(Exception):
    """The turn failed in a way that a fresh attempt may fix."""

    def __init__(
        self,
        reason: str,
        retry_after: float | None,
        reconnect: bool,
        category: ErrorCategory | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.reconnect = reconnect
        self.category = category
        """The provider's error category, when the failure was classified."""


def _is_retry_turn(error: BaseException) -> bool:
    """What the runner retries: a turn (or a session opening) failed in a retryable way."""
    return isinstance(error, _RetryTurn)


def build_history(records: list[TurnRecord]) -> list[HistoryMessage]:
    """The conversation so far, from completed turns (used to resume and reconnect)."""
    history: list[HistoryMessage] = []
    for rec in records:
        if rec.status == "ended_early" or _never_answered(rec):
            continue
        history.append(HistoryMessage(role="user", text=rec.user_text))
        history.append(
            HistoryMessage(
                role="assistant",
                text=rec.spoken_text,
                tool_calls=[
                    HistoryToolCall(
                        call_id=c.call_id, name=c.name, arguments=c.arguments, result=c.result
                    )
                    for c in rec.tool_calls
                ],
            )
        )
        if rec.nudge is not None:
            history.append(HistoryMessage(role="user", text=rec.nudge.user_text))
            history.append(
                HistoryMessage(
                    role="assistant",
                    text=rec.nudge.assistant_text,
                    tool_calls=[
                        HistoryToolCall(
                            call_id=c.call_id, name=c.name, arguments=c.arguments, result=c.result
                        )
                        for c in rec.nudge.tool_calls
                    ],
                )
            )
    return history


def _never_answered(record: TurnRecord) -> bool:
    # A turn that gave up reached no model: replaying its user line with an empty answer
    # would show the next session two user messages in a row (some APIs merge them).
    return record.status == "error" and not record.assistant_text and not record.tool_calls


class ConversationRun:
    """One run of a benchmark's conversation against one target."""

    def __init__(
        self,
        config: RunConfig,
        run_dir: RunDirectory,
        benchmark: Benchmark,
        session_factory: Callable[[], Session],
        progress: ProgressCallback | None = None,
    ) -> None:
        self.config = config
        self.run_dir = run_dir
        self.benchmark = benchmark
        self.session_factory = session_factory
        self.progress = progress
        spec = BackendSpec.model_validate(benchmark.backend)
        self.harness = choose_harness(spec.harness, config.harness, config.harness_options)
        self.backend = ToolBackend(spec, {t.name for t in benchmark.tools}, harness=self.harness)
        self.clock: Clock = Clock()
        self._last_t = 0.0
        """The time of the last event appended (where a virtual clock takes over)."""
        self.session: Session | None = None
        self._resume_handle: str | None = None
        """The last closed session's ``resume_handle()``: the next session continues from it."""
        self._reached = False
        self._answered = False
        """Whether any turn of this process got past the target's error (an HTTP target's
        session opens without contacting it: only an answer shows it can be reached)."""
        self._cannot_connect = False
        """The last turn given up gave up because the target could not be connected to."""
        """Whether a session of the target has started in this process."""
        self._events: asyncio.Queue[SessionEvent | BaseException] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self.records: list[TurnRecord] = []
        self._hearing: asyncio.Task[str] | None = None
        """The heard-text ASR of the turn just run, while it is not yet paired with its record."""
        self._unheard: tuple[_DoneTurn, asyncio.Task[str]] | None = None
        """The last turn run, waiting for its heard text before it is kept (``_settle``)."""
        self._keep_failed: Exception | None = None
        """Why a turn could not be kept when its heard text came in (raised by ``_settle``)."""
        self.speech: SpeechTurns | None = None
        if config.mode == "audio":
            from voxbench.runner.speech import SpeechTurns

            self.speech = SpeechTurns(self, config, benchmark, run_dir)

    # -- session lifecycle ----------------------------------------------------------------

    async def _open_session(self) -> None:
        """Open a fresh session, rehydrated with the conversation so far, on a new event queue.

        A failed start is classified like a failed turn: rejected credentials stop the run
        (``AuthenticationError``); a retryable failure is a failed attempt (``_RetryTurn``).
        """
        await self._settle()  # the history includes the last turn as it was heard
        await self._close_session()
        session = self.session_factory()
        if self.speech is not None and session.info.input_modality == "text":
            session = _as_speech_agent(session, self.config)
        try:
            await session.start(
                SessionSetup(
                    system_prompt=self.benchmark.render_system_prompt(),
                    tools=list(self.benchmark.tools),
                    history=build_history(self.records),
                    modality=self.config.mode,
                    resume_handle=self._resume_handle,
                )
            )
        except ProviderError as exc:
            with contextlib.suppress(Exception):
                await session.close()
            if exc.category == ErrorCategory.AUTHENTICATION:
                raise self._authentication_error(str(exc)) from exc
            if exc.retryable:
                raise _RetryTurn(
                    f"{exc.category}: {exc}", exc.retry_after, reconnect=True, category=exc.category
                ) from exc
            raise
        # Each session gets its own queue: nothing a previous session said can reach it.
        self._events = asyncio.Queue()
        self.session = session
        self._reached = True
        self._pump = asyncio.create_task(self._pump_events(session, self._events))

    async def _pump_events(
        self, session: Session, queue: asyncio.Queue[SessionEvent | BaseException]
    ) -> None:
        try:
            async for event in session.events():
                await queue.put(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the stream broke: the current turn sees it as an error
            await queue.put(exc)
            return
        # A stream that simply ends is a dead session too: never let a turn wait on it.
        await queue.put(ConnectionError("the session's event stream ended"))

    async def _close_session(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump
            self._pump = None
        if self.session is not None:
            self._resume_handle = self.session.resume_handle()
            with contextlib.suppress(Exception):
                await self.session.close()
            self.session = None

    async def _discard_stale_events(self) -> None:
        """Set aside what the session said after the previous turn completed (a duplicated
        completion, a late event): a new attempt only hears answers to itself.

        Each such event is still recorded, outside any turn (``turn`` null), so nothing
        the target did is lost and no turn's measures or transcript count it."""
        if self.session is None:
            return
        await asyncio.sleep(0)  # let the pump hand over what the session already queued
        while not self._events.empty():
            item = self._events.get_nowait()
            if isinstance(item, BaseException):  # the session died between turns
                await self._close_session()
                return
            t = self.clock.now()
            if isinstance(item, TargetError) and item.fatal:
                # Its connection ended between turns (a drop, a reconnect that failed): the
                # next attempt opens a fresh session instead of talking to a dead one.
                self._append(recorded_target_event(item), t, None)
                await self._close_session()
                return
            if isinstance(item, AssistantAudio):
                plays_at = None
                if self.speech is not None:  # it was heard: it belongs on the recording
                    plays_at = round(self.speech.place_agent_audio(t, _pcm_audio(item), False), 6)
                recorded = AudioRecorded(
                    samples=len(item.pcm) // 2, sample_rate=item.sample_rate, plays_at=plays_at
                )
                self._append(recorded, t, None)
            else:
                self._append(recorded_target_event(item), t, None)

    def _authentication_error(self, message: str) -> AuthenticationError:
        env = provider_env(self.config.target)
        if env is not None and env.names and not any(name in message for name in env.names):
            message = f"{message}; check {env.describe()}"
        return AuthenticationError(
            f"{canonical_name(self.config.target)}: the provider rejected the credentials, "
            f"so the run stopped: {message}"
        )

    # -- the run ------------------------------------------------------------------------

    def record(self, turn: str | None, event: Stamp, at: float | None = None) -> float:
        """Stamp and append a runner event (at ``at``, a time already reached, when given);
        returns its time."""
        t = self.clock.now() if at is None else at
        self._append(event, t, turn)
        return t

    def _append(self, event: Stamp, t: float, turn: str | None) -> None:
        """Append ``event`` stamped ``t``; on a virtual clock also with the wall time."""
        wall = self.clock.wall() if self.clock.virtual else None
        self.run_dir.append_event(event, t=t, turn=turn, wall=wall)
        self._last_t = t

    async def run(self) -> list[TurnRecord]:
        """Run every selected turn that is not recorded yet."""
        self.records = self.run_dir.turns()
        previous = self.run_dir.events()
        start_at = previous[-1].t if previous else 0.0
        self.clock = Clock(start_at=start_at)
        self.run_dir.open_for_append()
        try:
            if self.records:
                state = self.run_dir.checkpoint(self.records[-1].turn)
                if state is None:
                    raise RunError(
                        f"{self.run_dir.path}: no backend checkpoint for turn {self.records[-1].turn}"
                    )
                self.backend.restore_state(state)
                self.record(None, RunResumed(after_turn=self.records[-1].turn))
            else:
                # At the clock's origin: a virtual clock goes on from there (_start_speech).
                self.record(
                    None, RunStarted(target=canonical_name(self.config.target)), at=start_at
                )
            done = {r.turn for r in self.records}
            selected = self._selected_turns()
            total = len(selected)
            await self._open_first_session()
            if self.speech is not None:
                self._start_speech()
            for position, (index, turn) in enumerate(selected):
                if turn.id in done:
                    continue
                if self.backend.snapshot()["ended"]:
                    record = self._ended_early(index, turn)
                else:
                    record = await self._run_turn_with_retries(index, turn)
                await self._settle()
                done_turn = _DoneTurn(record, self.backend.export_state(), position + 1, total)
                if self._hearing is not None:  # kept once its heard text is known
                    self._unheard, self._hearing = (done_turn, self._hearing), None
                    self._unheard[1].add_done_callback(self._heard)
                else:
                    self._keep(done_turn)
                if record.status != "error":
                    self._answered = True
                elif not self._reached or (self._cannot_connect and not self._answered):
                    raise self._unreachable(record, total - position - 1)
            await self._settle()
            self.record(None, RunFinished())
        except BaseException:
            # Whatever stopped the run, the last turn it ran is kept, its heard text first (a
            # failure of that ASR leaves the turn to be run again, and the first error stands).
            with contextlib.suppress(Exception):
                await self._settle()
            raise
        finally:
            await self._close_session()
            self.run_dir.close()
        return self.records

    async def _settle(self) -> None:
        """Keep the turn whose heard text is still being transcribed, once it is known.

        An audio turn's heard-text ASR runs beside the next turn (``SpeechTurns.listen``);
        the turn goes to the transcript, with its checkpoint, as soon as the text is in
        (``_heard``), so a kill loses no more than before the overlap: a turn whose ASR had
        not finished. It is waited for before the next turn is kept, before a session opens
        (its history holds what the agent was heard to say), and when the run stops."""
        if self._unheard is not None:
            await asyncio.wait({self._unheard[1]})
            if self._unheard is not None:  # its callback has not run yet, or the ASR failed
                self._keep_heard()
        if self._keep_failed is not None:
            failed, self._keep_failed = self._keep_failed, None
            raise failed

    def _heard(self, hearing: asyncio.Task[str]) -> None:
        """Keep the waiting turn the moment its heard text is in (a done-callback); an ASR
        that failed is raised by ``_settle``, as is a failure to write the turn."""
        if self._unheard is None or self._unheard[1] is not hearing:
            return
        if hearing.cancelled() or hearing.exception() is not None:
            return
        try:
            self._keep_heard()
        except Exception as exc:  # noqa: BLE001 - raised in the run's own flow by _settle
            self._keep_failed = exc

    def _keep_heard(self) -> None:
        assert self._unheard is not None
        (done_turn, hearing), self._unheard = self._unheard, None
        heard_text = hearing.result()
        self.record(done_turn.record.turn, AgentSpeechHeard(heard_text=heard_text))
        record = done_turn.record.model_copy(update={"heard_text": heard_text})
        self._keep(done_turn._replace(record=record))

    def _keep(self, done_turn: _DoneTurn) -> None:
        """Append a completed turn to the transcript, with its checkpoint; report progress."""
        self.run_dir.append_turn(done_turn.record, done_turn.backend_state)
        self.records.append(done_turn.record)
        if self.progress:
            self.progress(done_turn.position, done_turn.total, done_turn.record)

    def _start_speech(self) -> None:
        """Open the recording, on a virtual clock for in-process targets (``clock: auto``).

        Virtual time stood still while the first session opened: it goes on from the last
        stamp, so a fresh run's recording starts at 0.0 whatever the host's speed. A resumed
        run continues its recording where the file ends."""
        assert self.session is not None and self.speech is not None
        virtual = self.config.clock == "virtual" or (
            self.config.clock == "auto" and self.session.info.in_process
        )
        real = self.clock
        if virtual:
            self.clock = VirtualClock(start_at=self._last_t, wall=real)
        origin = next(
            (e.origin for e in self.run_dir.events() if isinstance(e, RecordingStarted)), None
        )
        if origin is None:
            origin = self.clock.now()
            self.record(
                None, RecordingStarted(origin=origin, clock="virtual" if virtual else "real")
            )
        self.speech.open_recording(origin)
        end = self.speech.recorder.end_time if self.speech.recorder else origin
        if end > self.clock.now():
            self.clock = VirtualClock(start_at=end, wall=real) if virtual else Clock(start_at=end)

    async def _open_first_session(self) -> None:
        """Open the run's first session. A text run retries a failed opening as part of its
        first turn's attempts; an audio run needs the session before its recording starts, so
        it retries here, as a turn would, and stops when the target cannot be reached."""
        if self.speech is None:
            with contextlib.suppress(_RetryTurn):
                await self._open_session()
            return
        policy = self._turn_policy()

        def retrying(retry: int, failed: _RetryTurn, delay: float) -> None:
            log.warning(
                "the target's session did not open (%s); retry %d of %d in %.1f s",
                failed.reason, retry, policy.retries, delay,
            )  # fmt: skip

        try:
            await policy.call(self._open_session, on_retry=retrying, retry_if=_is_retry_turn)
        except _RetryTurn as failed:
            raise RunIncompleteError(
                f"{self.run_dir.path}: the target could not be reached (its session did "
                f"not open after {policy.retries} retries: {failed.reason}); no turn was tried: "
                "check that it is running and reachable, then start a new run"
            ) from None

    def _turn_policy(self) -> RetryPolicy:
        """The shared policy for a turn (and a first session): ``max_retries`` retries."""
        return TURN.with_retries(self.config.max_retries)

    def _unreachable(self, record: TurnRecord, untried: int) -> RunIncompleteError:
        """A turn gave up without a session of the target ever starting: every later turn
        would only wait through the same retries (minutes, on a long benchmark), so the run
        stops here, its ``run.json`` saying why."""
        why = record.errors[0] if record.errors else "no error recorded"
        return RunIncompleteError(
            f"{self.run_dir.path}: the target could not be reached (turn {record.turn}: {why}); "
            f"{untried} later turn(s) not tried: check that it is running and reachable, then "
            "start a new run"
        )

    def _selected_turns(self) -> list[tuple[int, Turn]]:
        turns = list(enumerate(self.benchmark.turns))
        if self.config.only_turns is None:
            return turns
        wanted = set(self.config.only_turns)
        unknown = wanted - set(range(len(turns)))
        if unknown:
            raise RunError(
                f"--only-turns names turns that do not exist: {sorted(unknown)} "
                f"(the benchmark has turns 0-{len(turns) - 1})"
            )
        return [(i, t) for i, t in turns if i in wanted]

    def _ended_early(self, index: int, turn: Turn) -> TurnRecord:
        t = self.record(turn.id, TurnSkipped(reason="conversation already ended"))
        return TurnRecord(
            turn=turn.id,
            index=index,
            user_text=turn.text,
            timings=TurnTimings(start=t, end=t),
            status="ended_early",
            state_after=self.backend.snapshot(),
        )

    async def _run_turn_with_retries(self, index: int, turn: Turn) -> TurnRecord:
        """The turn, retried by the shared policy (``TURN``: ``max_retries`` retries) from the
        state it started in, each retry logged and recorded as a ``TurnRetry``."""
        start_state = self.backend.export_state()
        policy = self._turn_policy()
        retries = 0
        reconnected = False

        async def attempt() -> TurnRecord:
            try:
                await self._discard_stale_events()
                if self.session is None:  # the first attempt after a failure, or a dead session
                    await self._open_session()
                return await self._run_turn(index, turn)
            except _RetryTurn:
                self.backend.restore_state(start_state)
                # The failed attempt's session may still answer it: the next attempt, or the
                # next turn after a give-up, starts on a fresh session with a clean queue.
                await self._close_session()
                raise

        def retrying(failed_attempt: int, retry: _RetryTurn, delay: float) -> None:
            nonlocal retries, reconnected
            retries = failed_attempt
            reconnected = reconnected or retry.reconnect
            log.warning(
                "turn %s: attempt %d failed (%s); retry %d of %d in %.1f s",
                turn.id, retries, retry.reason, retries, policy.retries, delay,
            )  # fmt: skip
            self.record(
                turn.id,
                TurnRetry(
                    attempt=retries,
                    reason=retry.reason,
                    delay=round(delay, 3),
                    reconnect=retry.reconnect,
                ),
            )

        try:
            record = await policy.call(attempt, on_retry=retrying, retry_if=_is_retry_turn)
        except _RetryTurn as retry:
            self._cannot_connect = retry.category == ErrorCategory.CONNECTIVITY
            t = self.record(turn.id, TurnFailed(reason=retry.reason, retries=retries))
            return TurnRecord(
                turn=turn.id,
                index=index,
                user_text=turn.text,
                timings=TurnTimings(start=t, end=t),
                status="error",
                errors=[f"gave up after {retries} retries: {retry.reason}"],
                retries=retries,
                reconnected=reconnected,
                state_after=self.backend.snapshot(),
            )
        return record.model_copy(update={"retries": retries, "reconnected": reconnected})

    async def _run_turn(self, index: int, turn: Turn) -> TurnRecord:
        assert self.session is not None
        session = self.session
        self.backend.begin_turn(turn.id)
        state = TurnState()
        nudge: NudgeExchange | None = None
        if self.speech is not None:
            # The turn starts on a sample of the recording, where its audio starts.
            start = self.record(turn.id, TurnStarted(index=index), at=await self.speech.on_sample())
            user_end, status = await self.speech.drive(turn, state, start)
        else:
            start = self.record(turn.id, TurnStarted(index=index))
            await session.send_user_text(turn.text)
            self.record(turn.id, UserTextSent(text=turn.text))
            await session.end_user_turn()
            user_end = self.record(turn.id, UserTurnEnded())
            try:
                status, nudge = await asyncio.wait_for(
                    self._answer_with_nudge(turn, state), self.config.turn_timeout
                )
            except TimeoutError:
                status = "timeout"
                self.record(turn.id, TurnTimedOut(seconds=self.config.turn_timeout))
        if status == "timeout":
            # A hang is retried like any transient failure, on a fresh session.
            raise _RetryTurn(
                f"timeout: no complete response within {self.config.turn_timeout:g} s",
                None,
                reconnect=True,
            )
        if status == "no_response":
            await self._close_session()  # it may still be talking: the next turn opens anew
        end = self.record(turn.id, TurnEnded(status=status))
        if self.speech is not None:
            self._hearing = self.speech.listen(start, end)
            if self._hearing is None:
                self.record(turn.id, AgentSpeechHeard(heard_text=None))
            await self.clock.sleep(self.config.inter_turn_gap)
        text = "".join(state.text).strip()
        silent = not text and not state.record_calls and not state.first_audio
        record_status: Literal["ok", "no_response", "error"]
        if status == "no_response" or silent:
            record_status = "no_response"
        else:
            record_status = "ok" if status == "completed" else "error"
        return TurnRecord(
            turn=turn.id,
            index=index,
            user_text=turn.text,
            assistant_text=text,
            user_transcript=" ".join(state.user_transcript) or None,
            tool_calls=state.record_calls,
            usage=state.usage,
            timings=TurnTimings(
                start=start,
                user_end=user_end,
                first_event=state.first_event,
                first_text=state.first_text,
                first_audio=state.first_audio,
                end=end,
            ),
            status=record_status,
            errors=state.errors,
            state_after=self.backend.snapshot(),
            nudge=nudge,
        )

    async def _answer_with_nudge(
        self, turn: Turn, state: TurnState
    ) -> tuple[str, NudgeExchange | None]:
        """The agent's answer, then, when the harness nudges and a required call is missing,
        one follow-up user message and the answer to it (recorded apart, never scored)."""
        status = await self.consume(turn, state)
        missing = self._missing_required_calls(turn, state)
        if status != "completed" or not missing:
            return status, None
        assert self.session is not None
        text = self.harness.nudge_text
        self.backend.forget_duplicates()  # a new attempt: upstream clears its repeat tracking
        self.record(turn.id, HarnessNudgeSent(text=text, missing=missing))
        await self.session.send_user_text(text)
        await self.session.end_user_turn()
        follow_up = TurnState()
        status = await self.consume(turn, follow_up)
        state.errors.extend(follow_up.errors)
        for key, value in follow_up.usage.items():
            state.usage[key] = state.usage.get(key, 0) + value
        return status, NudgeExchange(
            user_text=text,
            missing=missing,
            assistant_text="".join(follow_up.text).strip(),
            tool_calls=follow_up.record_calls,
        )

    def _missing_required_calls(self, turn: Turn, state: TurnState) -> list[str]:
        """Required calls the answer lacks, when this run's harness nudges (text runs only)."""
        if not self.harness.nudge or self.speech is not None:
            return []
        made = [c for c in state.record_calls if not c.is_duplicate and c.parse_error is None]
        if self.harness.nudge_match == "aiewf":
            return [
                want.name
                for want in turn.expect.required_calls
                if not any(
                    c.name == want.name and aiewf_args_match(want.args, c.arguments) for c in made
                )
            ]
        return [
            want.name
            for want in turn.expect.required_calls
            if not any(c.name == want.name and args_match(want, c.arguments) for c in made)
        ]

    async def consume(self, turn: Turn, state: TurnState) -> str:
        """Handle the target's events until it completes its response; returns its status."""
        assert self.session is not None
        while True:
            item = await self._events.get()
            if isinstance(item, BaseException):
                self.record(turn.id, SessionDropped(error=f"{type(item).__name__}: {item}"))
                raise _RetryTurn(f"session stream failed: {item}", None, reconnect=True)
            event = item
            t = self.clock.now()
            if state.first_event is None and not isinstance(event, _NOT_AGENT_OUTPUT):
                state.first_event = t
            if isinstance(event, AssistantAudio):
                first = state.first_audio is None
                state.first_audio = t if first else state.first_audio
                plays_at = None
                if self.speech is not None:
                    plays_at = round(self.speech.place_agent_audio(t, _pcm_audio(event), first), 6)
                recorded = AudioRecorded(
                    samples=len(event.pcm) // 2, sample_rate=event.sample_rate, plays_at=plays_at
                )
                self._append(recorded, t, turn.id)
                continue
            self._append(recorded_target_event(event), t, turn.id)
            if isinstance(event, AssistantTextDelta):
                state.first_text = state.first_text if state.first_text is not None else t
                state.text.append(event.text)
            elif isinstance(event, UserTranscript):
                state.user_transcript.append(event.text)
            elif isinstance(event, Usage):
                for key, value in event.model_dump(exclude={"type"}).items():
                    state.usage[key] = state.usage.get(key, 0) + value
            elif isinstance(event, ToolCallRequested):
                await self._answer_tool_call(turn, event, state, t)
            elif isinstance(event, TargetError):
                if event.category == ErrorCategory.AUTHENTICATION:
                    raise self._authentication_error(event.message)
                state.errors.append(f"{event.category}: {event.message}")
                nothing_yet = not state.text and not state.record_calls
                if event.fatal or (event.retryable and nothing_yet):
                    raise _RetryTurn(
                        f"{event.category}: {event.message}",
                        event.retry_after,
                        reconnect=event.fatal,
                        category=event.category,
                    )
            elif isinstance(event, TurnComplete):
                return event.status

    async def _answer_tool_call(
        self, turn: Turn, event: ToolCallRequested, state: TurnState, t: float
    ) -> None:
        assert self.session is not None
        if event.parse_error is not None:
            result: Any = {
                "status": "error",
                "error": "MALFORMED_ARGUMENTS",
                "message": f"arguments are not valid JSON: {event.parse_error}",
            }
            duplicate = False
        elif len(state.record_calls) >= self.config.max_tool_calls_per_turn:
            result = {
                "status": "error",
                "error": "TOO_MANY_CALLS",
                "message": f"at most {self.config.max_tool_calls_per_turn} tool calls per turn",
            }
            duplicate = False
        else:
            result, duplicate = self.backend.call(event.name, event.arguments)
        state.record_calls.append(
            ToolCallRecord(
                call_id=event.call_id,
                name=event.name,
                arguments=event.arguments,
                raw_arguments=event.raw_arguments,
                parse_error=event.parse_error,
                result=result,
                is_duplicate=duplicate,
                t_requested=t,
            )
        )
        await self.session.send_tool_result(event.call_id, result)
        self.record(
            turn.id,
            ToolResultSent(
                call_id=event.call_id, name=event.name, result=result, is_duplicate=duplicate
            ),
        )


_NOT_AGENT_OUTPUT = (UserTranscript, Usage, SpeechStarted, SpeechStopped, StageMark)


def _pcm_audio(event: AssistantAudio) -> Audio:  # the audio import kept lazy for text runs
    from voxbench.audio.wav import Audio

    return Audio.from_pcm16(event.pcm, event.sample_rate)


def _as_speech_agent(session: Session, config: RunConfig) -> Session:
    """A text target in audio mode hears through STT and speaks through TTS (a cascade)."""
    from voxbench.targets.cascade import build_cascade

    stt = config.stt or ("none" if session.info.name == "local/oracle" else None)
    options = {k: v for k, v in {"stt": stt, "tts": config.tts}.items() if v is not None}
    return build_cascade(session, options)
