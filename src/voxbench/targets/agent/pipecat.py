"""``pipecat/<module:factory>``: a team's Pipecat bot, run in-process with voxbench as its transport.

The user's factory builds the bot's pipeline around a transport voxbench supplies
(``VoxbenchTransport``: ``transport.input()`` / ``transport.output()``, like Daily's or
the websocket transport), given what the benchmark sets up (``PipecatBotSetup``: system
prompt, tools as a Pipecat ``ToolsSchema``, the conversation so far as LLM messages,
modality, sample rates). It runs as a ``PipelineWorker`` in voxbench's event loop:

- user text is appended to the user context aggregator (``LLMMessagesAppendFrame`` with
  ``run_llm``); user audio goes in as ``InputAudioRawFrame`` at the pipeline's input rate.
  Turn detection ``client`` (the default): voxbench plays the VAD — it pushes
  ``VADUserStartedSpeakingFrame`` when the user's audio starts and
  ``VADUserStoppedSpeakingFrame`` when voxbench ends the turn, and the bot's own turn
  strategies take it from there. ``agent``: voxbench only streams audio; the bot's VAD and
  turn strategies decide (the runner streams silence until the answer comes).
- what reaches the output transport is stamped on voxbench's clock as it arrives: audio
  as ``AssistantAudio`` when the transport writes it, the bot's words (``TTSTextFrame``,
  or ``LLMTextFrame`` when the bot has no TTS), ``UserStarted/StoppedSpeakingFrame`` and
  its STT's final ``TranscriptionFrame``; an ``InterruptionFrame`` while the bot answers is
  a barge-in. The output transport takes audio as fast as it plays (``playback=realtime``,
  as Pipecat's network transports do) or at once (``instant``).
- the benchmark's tools are registered on every ``LLMService`` of the pipeline
  (``register_function``, replacing a handler of the same name): a call becomes
  ``ToolCallRequested`` and its result goes back through Pipecat's ``result_callback``.
- a response is over when its ``LLMFullResponseEndFrame`` has come out of the output
  transport (after the audio before it) with no benchmark tool call left unanswered.
- an error in the pipeline (an ``ErrorFrame``, an exception in a processor, the worker
  ending) is handled like a dropped connection: a fatal, retryable ``TargetError``; the
  runner builds a new pipeline with the conversation so far as history.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from voxbench.core.errors import ConfigError, ErrorCategory
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    Interrupted,
    SessionEvent,
    SpeechStarted,
    SpeechStopped,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    UserTranscript,
)
from voxbench.core.secrets import redact_text
from voxbench.core.session import Session, SessionSetup, TargetInfo
from voxbench.targets.realtime.audio import PcmResampler, is_silent

PIPECAT_LOG_LEVEL = os.environ.get("VOXBENCH_PIPECAT_LOG", "WARNING")
"""What Pipecat's own log (loguru, DEBUG to stderr by default) shows during a run."""


def _quiet_pipecat_log() -> None:
    """Pipecat logs every frame at DEBUG through loguru's default stderr handler, which buries
    voxbench's progress: that handler is replaced by one at ``VOXBENCH_PIPECAT_LOG``
    (default WARNING). A program that already replaced it keeps its own handlers."""
    from loguru import logger

    try:
        logger.remove(0)
    except ValueError:
        return
    logger.add(sys.stderr, level=PIPECAT_LOG_LEVEL)


# Pipecat (with its loguru) is an optional extra (.ci/run tests it in its own .venv-pipecat).
try:
    _quiet_pipecat_log()  # before Pipecat's import logs its banner
    from pipecat.frames.frames import (
        EndFrame,
        ErrorFrame,
        Frame,
        FunctionCallsStartedFrame,
        InputAudioRawFrame,
        InterruptionFrame,
        LLMFullResponseEndFrame,
        LLMMessagesAppendFrame,
        LLMTextFrame,
        OutputAudioRawFrame,
        StartFrame,
        TranscriptionFrame,
        TTSTextFrame,
        UserStartedSpeakingFrame,
        UserStoppedSpeakingFrame,
        VADUserStartedSpeakingFrame,
        VADUserStoppedSpeakingFrame,
    )
    from pipecat.observers.base_observer import BaseObserver, FramePushed
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
    from pipecat.services.llm_service import FunctionCallParams, LLMService
    from pipecat.transports.base_input import BaseInputTransport
    from pipecat.transports.base_output import BaseOutputTransport
    from pipecat.transports.base_transport import BaseTransport, TransportParams
except ImportError as exc:  # pragma: no cover - exercised where pipecat is absent
    raise ConfigError(
        f"the pipecat target needs Pipecat, which is not installed ({exc})",
        field="target",
        expected="pip install 'voxbench[pipecat]' (pipecat-ai), preferably in its own "
        "virtual environment",
    ) from exc

log = logging.getLogger(__name__)

TURN_DETECTION = ("client", "agent")

# After the check above: these need Pipecat too.
from voxbench.targets.agent.pipecat_setup import (  # noqa: E402
    PipecatBotSetup,
    benchmark_tools,
    failed,
    history_messages,
    load_factory,
)

__all__ = ["PipecatBotSetup", "PipecatSession", "VoxbenchTransport"]

# -- the transport -----------------------------------------------------------------------


class VoxbenchInput(BaseInputTransport):
    """Where the simulated user's audio and turn boundaries enter the pipeline."""

    def __init__(self, params: TransportParams, **kwargs: Any) -> None:
        super().__init__(params, **kwargs)
        self.started = asyncio.Event()

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)
        self.started.set()

    async def user_audio(self, pcm: bytes) -> None:
        await self.push_audio_frame(
            InputAudioRawFrame(audio=pcm, sample_rate=self.sample_rate, num_channels=1)
        )

    async def push_system(self, frame: Frame) -> None:
        """A frame from the user's side (VAD, turn), downstream from here."""
        await self.push_frame(frame)


class VoxbenchOutput(BaseOutputTransport):
    """Where the bot's audio, words and turn signals leave the pipeline, stamped as they come."""

    def __init__(
        self, session: PipecatSession, params: TransportParams, *, paced: bool, **kwargs: Any
    ) -> None:
        super().__init__(params, **kwargs)
        self.session = session
        self.paced = paced
        """Take audio no faster than it plays, as a transport to a caller does (Pipecat's
        speaking state, and what an interruption cuts, follow the playback)."""
        self._played_until = 0.0

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        self.session._on_audio(frame)
        if self.paced and frame.audio:
            seconds = len(frame.audio) / 2 / max(1, frame.num_channels) / frame.sample_rate
            now = time.monotonic()
            self._played_until = max(self._played_until, now) + seconds
            # Stay one chunk ahead of the playback, like a device buffer.
            await asyncio.sleep(max(0.0, self._played_until - seconds - now))
        return True

    async def write_transport_frame(self, frame: Frame) -> None:
        if isinstance(frame, LLMFullResponseEndFrame):
            self.session._on_response_end()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if direction == FrameDirection.DOWNSTREAM:
            if isinstance(frame, InterruptionFrame):
                self._played_until = 0.0  # the queued audio is dropped, not played
            self.session._on_frame(frame)
        await super().process_frame(frame, direction)


class VoxbenchTransport(BaseTransport):
    """The transport a factory builds its pipeline around (``input()`` / ``output()``)."""

    def __init__(
        self, session: PipecatSession, params: TransportParams, *, paced: bool = True
    ) -> None:
        super().__init__(name="VoxbenchTransport")
        self.params = params
        self._input = VoxbenchInput(params, name="VoxbenchInput")
        self._output = VoxbenchOutput(session, params, paced=paced, name="VoxbenchOutput")

    def input(self) -> VoxbenchInput:
        return self._input

    def output(self) -> VoxbenchOutput:
        return self._output


# -- the session -------------------------------------------------------------------------


class PipecatSession(Session):
    """One conversation with a Pipecat bot built by the user's factory."""

    provider = "pipecat"

    def __init__(self, spec: str, *, options: dict[str, Any] | None = None) -> None:
        self.spec = spec
        self.options = dict(options or {})
        self.factory = load_factory(spec)
        wanted = self.options.get("turn_detection", "client")
        if wanted not in TURN_DETECTION:
            raise ConfigError(
                f"unknown turn_detection {wanted!r}",
                field="target_options.turn_detection",
                expected="client (voxbench plays the VAD) or agent (the bot's own VAD)",
            )
        self.turn_detection: Literal["client", "agent"] = wanted
        output = self.options.get("output", "audio")
        if output not in ("audio", "text"):
            raise ConfigError(
                f"unknown output {output!r}",
                field="target_options.output",
                expected="audio (the bot speaks) or text (it answers in words)",
            )
        self.in_rate = int(self.options.get("input_sample_rate", 16000))
        self.out_rate = int(self.options.get("output_sample_rate", 24000))
        self.tool_timeout = float(self.options.get("tool_timeout", 60.0))
        self.playback = self.options.get("playback", "realtime")
        if self.playback not in ("realtime", "instant"):
            raise ConfigError(
                f"unknown playback {self.playback!r}",
                field="target_options.playback",
                expected="realtime (the transport takes audio as fast as it plays) or instant",
            )
        self.info = TargetInfo(
            name=f"pipecat/{spec}",
            input_modality="audio",  # the bot listens natively: audio mode adds no cascade
            output_modality="text" if output == "text" else "audio",
            input_sample_rate=self.in_rate,
            output_sample_rate=self.out_rate,
        )
        self.server_vad = self.turn_detection == "agent"
        """The bot's own VAD ends user turns (read by the FDB driver)."""
        self._queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._resample = PcmResampler(self.in_rate)
        self._text: list[str] = []
        self._speaking = False
        """Client turn detection: the VAD start of this user turn has been pushed."""
        self._answering = False
        """A response is due or under way: its ``LLMFullResponseEndFrame`` completes it."""
        self._responding = False
        """The bot has begun answering (words, audio or a tool call reached the output)."""
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        """Benchmark tool calls made and not yet answered, by call id."""
        self._followups = 0
        """Responses that made benchmark tool calls and have not ended: each is followed by
        the response to the calls' results (Pipecat runs the LLM again)."""
        self._tool_names: set[str] = set()
        self._tts_text = False
        """The bot speaks through a TTS: its words are the TTS's, not the LLM's."""
        self._said = ""
        """The last piece of text of the response under way."""
        self._dead = False
        self._closing = False
        self.transport: VoxbenchTransport | None = None
        self.worker: PipelineWorker | None = None
        self._run: asyncio.Task[None] | None = None
        self.llms: list[LLMService] = []
        """The LLM services the benchmark's tools were registered on."""

    # -- start --------------------------------------------------------------------------

    async def start(self, setup: SessionSetup) -> None:
        from pipecat.workers.runner import WorkerRunner

        self._tool_names = {t.name for t in setup.tools}
        params = TransportParams(
            audio_in_enabled=True,
            audio_in_sample_rate=self.in_rate,
            audio_out_enabled=True,
            audio_out_sample_rate=self.out_rate,
            audio_out_end_silence_secs=0,
        )
        self.transport = VoxbenchTransport(self, params, paced=self.playback == "realtime")
        bot = PipecatBotSetup(
            system_prompt=setup.system_prompt,
            tools=benchmark_tools(setup),
            history=history_messages(setup.history),
            modality=setup.modality,
            audio_in_sample_rate=self.in_rate,
            audio_out_sample_rate=self.out_rate,
            turn_detection=self.turn_detection,
        )
        self.worker = await self._build(bot)
        self.llms = [p for p in _walk(self.worker.pipeline) if isinstance(p, LLMService)]
        if self._tool_names and not self.llms:
            log.warning("pipecat: the bot has no LLMService: its tool calls cannot be routed")
        for llm in self.llms:
            for name in self._tool_names:
                llm.register_function(name, self._tool_handler)

        self.worker.add_observer(_TranscriptTap(self))

        @self.worker.event_handler("on_pipeline_error")
        async def _on_error(_worker: Any, frame: ErrorFrame) -> None:
            self._fail(f"pipeline error: {frame.error}")

        runner = WorkerRunner(handle_sigint=False, check_dangling_tasks=False)
        await runner.add_workers(self.worker)
        self._run = asyncio.create_task(runner.run())
        self._run.add_done_callback(self._on_worker_done)
        started = asyncio.create_task(self.transport.input().started.wait())
        done, _ = await asyncio.wait({started, self._run}, timeout=15.0,
                                     return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        if started not in done:
            started.cancel()
            await self.close()
            raise ConfigError(
                f"Pipecat bot {self.spec!r} did not start within 15 s",
                field="target",
                expected="a pipeline that contains transport.input() and transport.output()",
            )

    async def _build(self, bot: PipecatBotSetup) -> PipelineWorker:
        assert self.transport is not None
        try:
            built = self.factory(self.transport, bot)
            if inspect.isawaitable(built):
                built = await built
        except ConfigError:
            raise
        except Exception as exc:
            raise failed(self.spec, "building", exc) from exc
        if isinstance(built, Sequence) and not isinstance(built, str | bytes):
            built = Pipeline([self.transport.input(), *built, self.transport.output()])
        if isinstance(built, Pipeline):
            worker = PipelineWorker(
                built,
                params=PipelineParams(
                    audio_in_sample_rate=self.in_rate, audio_out_sample_rate=self.out_rate
                ),
                cancel_on_idle_timeout=False,
                enable_rtvi=False,
            )
        elif isinstance(built, PipelineWorker):
            worker = built
        else:
            raise ConfigError(
                f"Pipecat bot {self.spec!r} returned a {type(built).__name__}",
                field="target",
                expected="a Pipeline, a PipelineWorker, or a list of processors",
            )
        found = set(map(id, _walk(worker.pipeline)))
        missing = [
            name
            for name, part in (
                ("input", self.transport.input()),
                ("output", self.transport.output()),
            )  # fmt: skip
            if id(part) not in found
        ]
        if missing:
            raise ConfigError(
                f"Pipecat bot {self.spec!r}: the pipeline lacks transport.{missing[0]}()",
                field="target",
                expected="Pipeline([transport.input(), …, transport.output(), …])",
            )
        return worker

    # -- inputs -------------------------------------------------------------------------

    async def send_user_text(self, text: str) -> None:
        self._text.append(text)

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        if self.transport is None or self._dead:
            return
        data = self._resample(pcm, sample_rate)
        if not data:
            return
        if self.turn_detection == "client" and not self._speaking:
            if is_silent(data):
                return  # before the user speaks: the silence the runner streams
            self._speaking = True
            await self.transport.input().push_system(VADUserStartedSpeakingFrame())
        await self.transport.input().user_audio(data)

    async def end_user_turn(self) -> None:
        if self.worker is None or self._dead:
            return
        self._answering = True
        if self._text:
            text, self._text = " ".join(self._text), []
            self._speaking = False
            await self.worker.queue_frame(
                LLMMessagesAppendFrame(messages=[{"role": "user", "content": text}], run_llm=True)
            )
            return
        assert self.transport is not None
        tail = self._resample.flush()
        if tail:
            await self.transport.input().user_audio(tail)
        if self.turn_detection == "client" and self._speaking:
            self._speaking = False
            await self.transport.input().push_system(VADUserStoppedSpeakingFrame())

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        future = self._waiting.get(call_id)
        if future is None or future.done():
            log.warning("pipecat: result for unknown or answered call %s ignored", call_id)
            return
        self._answering = True
        future.set_result(result)

    async def _tool_handler(self, params: FunctionCallParams) -> None:
        """Pipecat's handler for every benchmark tool: the runner answers it."""
        call_id = params.tool_call_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = future
        self._answering = True
        self.emit(
            ToolCallRequested(
                call_id=call_id, name=params.function_name, arguments=dict(params.arguments)
            )
        )
        try:
            result = await asyncio.wait_for(future, self.tool_timeout)
        except TimeoutError:
            result = {"error": "TIMEOUT", "message": "voxbench gave no result in time"}
        finally:
            self._waiting.pop(call_id, None)
        await params.result_callback(result)

    # -- outputs ------------------------------------------------------------------------

    def emit(self, event: SessionEvent) -> None:
        self._queue.put_nowait(event)

    async def events(self) -> AsyncIterator[SessionEvent]:
        while True:
            yield await self._queue.get()

    def _on_audio(self, frame: OutputAudioRawFrame) -> None:
        if not frame.audio or self._dead:
            return
        pcm = frame.audio[: len(frame.audio) // 2 * 2]
        if frame.num_channels != 1:
            import numpy as np

            samples = np.frombuffer(pcm, dtype="<i2").reshape(-1, frame.num_channels)
            pcm = samples.mean(axis=1).astype("<i2").tobytes()
        self._responding = True
        self.emit(AssistantAudio(pcm=pcm, sample_rate=frame.sample_rate))

    def _on_frame(self, frame: Frame) -> None:
        """A frame arriving at the output transport (downstream), as it arrives."""
        if self._dead:
            return
        if isinstance(frame, TTSTextFrame):
            self._tts_text = True
            self._say(frame)
        elif isinstance(frame, LLMTextFrame):
            if not self._tts_text:
                self._say(frame)
        elif isinstance(frame, UserStartedSpeakingFrame):
            self.emit(SpeechStarted())
        elif isinstance(frame, UserStoppedSpeakingFrame):
            self.emit(SpeechStopped())
        elif isinstance(frame, InterruptionFrame):
            # Pipecat interrupts at every user turn start (it may reach here after voxbench
            # has ended that turn); a barge-in is one once the answer has begun (tool calls
            # under way are not cut).
            if self._responding and not self._waiting and not self._followups:
                self._answering = self._responding = False
                self._said = ""
                self.emit(Interrupted())
                self.emit(TurnComplete(status="cancelled"))
        elif isinstance(frame, FunctionCallsStartedFrame):
            ours = [c for c in frame.function_calls if c.function_name in self._tool_names]
            if ours:
                self._answering = self._responding = True
                self._followups += 1

    def _say(self, frame: TTSTextFrame | LLMTextFrame) -> None:
        """The bot's words; TTS words come without the spaces between them."""
        text = frame.text
        if not text:
            return
        joined = frame.includes_inter_frame_spaces or not self._said
        if not joined and not self._said[-1].isspace() and not text[0].isspace():
            text = " " + text
        self._said = text
        self._responding = True
        self.emit(AssistantTextDelta(text=text))

    def _on_response_end(self) -> None:
        if self._dead or not self._answering:
            return
        if self._followups:
            self._followups -= 1  # this response made calls: the LLM runs again on their results
            return
        if self._waiting:
            return
        self._answering = self._responding = False
        self._said = ""
        self.emit(TurnComplete(status="completed"))

    def _fail(self, message: str) -> None:
        """The pipeline broke: report it like a dropped connection, once."""
        if self._dead or self._closing:
            return
        self._dead = True
        for future in self._waiting.values():
            future.cancel()
        self.emit(
            TargetError(
                category=ErrorCategory.AGENT,
                message=redact_text(f"pipecat bot {self.spec}: {message}"),
                retryable=True,
                fatal=True,
            )
        )

    def _on_worker_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            self._fail("the pipeline was cancelled")
        elif task.exception() is not None:
            exc = task.exception()
            self._fail(f"the pipeline crashed: {type(exc).__name__}: {exc}")
        else:
            self._fail("the pipeline ended")

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        for future in self._waiting.values():
            future.cancel()
        if self._run is None:
            return
        if not self._run.done() and self.worker is not None:
            with contextlib.suppress(Exception):
                await self.worker.queue_frame(EndFrame())
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(self._run), 5.0)
        if not self._run.done() and self.worker is not None:
            with contextlib.suppress(Exception):
                await self.worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(self._run), 5.0)
        if not self._run.done():
            self._run.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._run


class _TranscriptTap(BaseObserver):
    """What the bot's STT heard: its final transcripts, wherever in the pipeline they go (the
    user context aggregator takes them before they reach the output transport)."""

    def __init__(self, session: PipecatSession) -> None:
        super().__init__()
        self.session = session
        self._seen: set[int] = set()

    async def on_push_frame(self, data: FramePushed) -> None:
        frame = data.frame
        if not isinstance(frame, TranscriptionFrame) or frame.id in self._seen:
            return
        self._seen.add(frame.id)
        if frame.text and not self.session._dead:
            self.session.emit(UserTranscript(text=frame.text))


def _walk(processor: FrameProcessor) -> list[FrameProcessor]:
    """Every processor inside ``processor`` (pipelines nest), itself included."""
    out = [processor]
    for child in getattr(processor, "processors", None) or []:
        out.extend(_walk(child))
    return out
