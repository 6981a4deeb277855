"""Speech turns: stream the user's audio like a microphone, time and record the agent.

Each user turn's audio is streamed in real time in fixed chunks (20 ms by default); with the
real clock the microphone keeps streaming silence while the agent answers, as a person's
would. The agent's audio is placed on ``conversation.wav`` where it would play. A watchdog
that knows whether the agent is speaking records a no-response when no agent output comes
within ``no_response_timeout`` of the end of the user's turn (on a virtual clock: within
``turn_timeout`` wall seconds, see below); the user's audio is never replayed into the same
session.

After each turn, local ASR of the agent channel (from where its answer starts playing to
``HEARD_TAIL`` after it stops, cut to its speech by VAD) gives what the agent was heard to
say. It runs beside the next turn; the turn is recorded once its heard text is known. The
runner measures no latency: ``voxbench.analysis`` does, once, from the timeline and the
recording.

On a virtual clock (in-process targets; ``core.clock.VirtualClock``) nothing the recording
holds depends on how fast the host is. Virtual time moves only when waited on and stands
still while the target computes: the microphone never falls behind (sending is instant in
virtual time), an answer starts playing the moment the user's turn ends (plus whatever
silence it begins with), its audio plays back to back from its first chunk (a gap between
two chunks would only be the host's processing time), and the heard-text pass is framed by
the answer itself, so the same answer always gives the ASR the same samples. How long the
host took is on the timeline as wall stamps (``analysis`` measures latency from them).

With ``perturb`` (``voxbench.audio.perturb``) the target hears each user turn perturbed —
seeded by the run's seed and the turn id, so a retry or a resume hears the same audio — while
``conversation.wav`` keeps the clean user channel (what the user said; analysis and the
reports read it). What the target heard is saved beside it as ``perturbed/<turn>.wav``. Only
the turn's own audio is perturbed: the silence the microphone streams while the agent answers
stays silent.
The watchdog's limits are then wall time, and generous: a slow or busy host must never turn
an answer being computed into a no-response, so only ``turn_timeout`` wall seconds without
an answer end the turn (``no_response_timeout`` is a real-time limit: on a real clock the
user waits through it, on a virtual clock nobody waits).
"""

from __future__ import annotations

import asyncio
import re
from functools import cached_property
from pathlib import Path

import numpy as np

from voxbench.audio.asr import ASREngine, transcribe_text
from voxbench.audio.perturb import Perturbation, parse_perturbations
from voxbench.audio.vad import SileroVAD, SpeechSegment
from voxbench.audio.wav import Audio, read_wav, write_wav
from voxbench.benchmarks.audio import ensure_benchmark_audio
from voxbench.core.benchmark import Benchmark, Turn
from voxbench.core.rundir import RunDirectory
from voxbench.core.timeline import NoResponse, TurnTimedOut, UserTurnEnded
from voxbench.providers.speech import get_asr
from voxbench.runner.config import RunConfig
from voxbench.runner.recording import ConversationRecorder
from voxbench.runner.turn_state import TurnContext, TurnState

DEFAULT_INPUT_RATE = 24_000
PERTURBED_DIR = "perturbed"
"""Where a perturbed run saves what the target heard of each user turn (``<turn>.wav``)."""
HEARD_TAIL = 0.5
"""Seconds of silence after the answer's last sample that the heard-text pass always gets, so
the VAD sees its speech end (> its 300 ms minimum silence) however soon the turn ended."""


class SpeechTurns:
    """Drives turns in audio mode for the run behind ``run`` (a narrow view of it)."""

    def __init__(
        self, run: TurnContext, config: RunConfig, benchmark: Benchmark, run_dir: RunDirectory
    ) -> None:
        self.run = run
        self.config = config
        self.benchmark = benchmark
        self.run_dir = run_dir
        self.vad = SileroVAD(min_speech_ms=100, min_silence_ms=300)
        self.recorder: ConversationRecorder | None = None
        self._clips: dict[str, Audio] = {}
        self._heard: dict[str, Audio] = {}
        self._answer_starts: float | None = None
        """Where the current turn's first agent audio plays (run clock)."""

    @cached_property
    def heard_asr(self) -> ASREngine | None:
        """The engine that transcribes what the agent said (None when disabled)."""
        name = self.config.heard_asr
        return None if name in (None, "none") else get_asr(name)

    @cached_property
    def turn_audio(self) -> dict[str, Path]:
        """Each turn's audio file: the benchmark's own, else synthesized and cached."""
        return ensure_benchmark_audio(
            self.benchmark, tts=self.config.user_tts, voice=self.config.user_voice
        )

    def open_recording(self, origin: float) -> None:
        """Start (or continue, on resume) ``conversation.wav``."""
        self.recorder = ConversationRecorder(
            self.run_dir.recording_file,
            origin,
            tags=self.config.tags,
            tags_path=self.run_dir.tags_file,
        )

    def clip(self, turn: Turn, rate: int) -> Audio:
        """The user audio of ``turn`` at ``rate`` Hz."""
        key = f"{turn.id}@{rate}"
        if key not in self._clips:
            self._clips[key] = read_wav(self.turn_audio[turn.id]).mono().resampled(rate)
        return self._clips[key]

    @cached_property
    def perturbation(self) -> Perturbation | None:
        """What the target's hearing goes through (None: the clean audio)."""
        chain = parse_perturbations(self.config.perturb)
        return chain or None

    def heard_clip(self, turn: Turn, rate: int) -> Audio:
        """The user audio of ``turn`` at ``rate`` Hz as the target hears it: perturbed when the
        run says so (same length as the clean clip), saved once as ``perturbed/<turn>.wav``."""
        clean = self.clip(turn, rate)
        if self.perturbation is None:
            return clean
        key = f"{turn.id}@{rate}"
        if key not in self._heard:
            heard = self.perturbation.apply(clean, self.config.seed, turn.id)
            folder = self.run_dir.path / PERTURBED_DIR
            folder.mkdir(exist_ok=True)
            name = re.sub(r"[^A-Za-z0-9._-]", "_", turn.id)
            write_wav(folder / f"{name}.wav", heard)
            self._heard[key] = heard
        return self._heard[key]

    async def on_sample(self) -> float:
        """Wait for the recording's next sample; returns its run-clock time.

        A turn starts there, so its stamp on the timeline (kept to the microsecond) names the
        very sample its audio starts on: a window cut from the recording by the timeline's
        times then holds the same samples however far between two samples the turn began."""
        assert self.recorder is not None
        clock = self.run.clock
        now = clock.now()
        frame = self.recorder.frame_at(now)
        if self.recorder.time_of(frame) < now:
            frame += 1
        t = self.recorder.time_of(frame)
        await clock.sleep(t - clock.now())
        return t

    async def drive(self, turn: Turn, state: TurnState, start: float) -> tuple[float, str]:
        """Stream the turn from ``start`` (a sample of the recording: ``on_sample``), wait for
        the agent's answer and its playback; returns (user_end, status)."""
        run = self.run
        session = run.session
        assert session is not None and self.recorder is not None
        clock = run.clock
        virtual = clock.virtual
        rate = session.info.input_sample_rate or DEFAULT_INPUT_RATE
        clip = self.clip(turn, rate)
        heard = self.heard_clip(turn, rate)  # what the target hears; the recording keeps clip
        # The recording takes the clip resampled once, as a whole, to its own rate: each
        # chunk's span of it goes where the chunk went (a chunk resampled alone would click).
        recorded = self.clip(turn, self.recorder.rate)
        scale = self.recorder.rate / rate
        chunk = max(1, round(rate * self.config.chunk_ms / 1000))
        # Converted once, then sliced: each chunk's bytes are the same (the conversion is per
        # sample), without an Audio and a conversion per 20 ms chunk.
        heard_pcm = heard.to_pcm16()
        frame_bytes = 2 * heard.channels
        self._answer_starts = None
        consume = asyncio.create_task(run.consume(turn, state))
        lag = 0.0  # how far sending fell behind the audio's own timing (a busy event loop)
        try:
            for i in range(0, clip.frames, chunk):
                if consume.done() and consume.exception() is not None:
                    consume.result()  # the session broke mid-utterance: retry the turn now
                due = start + lag + i / rate
                await clock.sleep(due - clock.now())
                if not virtual:
                    # A chunk sent late delays the rest (as a stalled microphone would): no
                    # burst. In virtual time sending is instant: a busy host is no stall.
                    lag += max(0.0, clock.now() - due - 0.005)
                sent = heard_pcm[i * frame_bytes : (i + chunk) * frame_bytes]
                await session.send_user_audio(sent, rate)
                last = i + chunk >= clip.frames
                span = slice(round(i * scale), None if last else round((i + chunk) * scale))
                self.recorder.add_user(
                    start + lag + i / rate, Audio(recorded.samples[span], recorded.sample_rate)
                )
            await clock.sleep(start + lag + clip.frames / rate - clock.now())
            # Stamped when the last sample went out, before the turn is committed.
            user_end = run.record(
                turn.id,
                UserTurnEnded(audio_seconds=round(clip.duration, 3), lag=round(lag, 4)),
            )
            await session.end_user_turn()
            status = await self._await_answer(turn, state, consume, user_end, rate, chunk, virtual)
        finally:
            if not consume.done():
                consume.cancel()
        playback_end = max(clock.now(), self.recorder.agent_playback_end)
        await clock.sleep(playback_end - clock.now())
        return user_end, status

    async def _await_answer(
        self,
        turn: Turn,
        state: TurnState,
        consume: asyncio.Task[str],
        user_end: float,
        rate: int,
        chunk: int,
        virtual: bool,
    ) -> str:
        run = self.run
        clock = run.clock
        silence = Audio(np.zeros(chunk, dtype=np.float32), rate).to_pcm16()
        step = chunk / rate
        # Virtual time stands still while the agent works: wait for it in wall time.
        since = clock.wall() if virtual else user_end
        silent_limit = self.config.turn_timeout if virtual else self.config.no_response_timeout
        while not consume.done():
            waited = (clock.wall() if virtual else clock.now()) - since
            if state.first_event is None and waited > silent_limit:
                run.record(turn.id, NoResponse(waited=round(waited, 3)))
                state.errors.append(f"no response within {silent_limit:g} s")
                consume.cancel()
                return "no_response"
            if waited > self.config.turn_timeout:
                run.record(turn.id, TurnTimedOut(seconds=self.config.turn_timeout))
                state.errors.append(f"no complete response within {self.config.turn_timeout:g} s")
                consume.cancel()
                return "timeout"
            if virtual:
                await asyncio.wait({consume}, timeout=0.05)
            else:
                assert run.session is not None
                await run.session.send_user_audio(silence, rate)  # the microphone stays open
                await asyncio.wait({consume}, timeout=step)
        return consume.result()

    def place_agent_audio(self, t: float, audio: Audio, first: bool) -> float:
        """Put agent audio that arrived at ``t`` on the recording; returns its play time.

        The first audio of an answer is marked with a tag tone when tags are on. On a virtual
        clock the rest of the answer is queued right behind what came before it, whenever it
        arrived: a later arrival only says how busy the host was."""
        assert self.recorder is not None
        if not first and self.run.clock.virtual:
            t = self.recorder.time_of(0)  # before the cursor: plays right after the queue
        plays_at = self.recorder.add_agent(t, audio)
        if first:
            self.recorder.add_tag(plays_at)
            self._answer_starts = plays_at
        return plays_at

    def listen(self, turn_start: float, turn_end: float) -> asyncio.Task[str] | None:
        """Start hearing what the agent said in the turn just ended; flushes the recording.

        Returns the task that gives the heard text (None when heard-text ASR is off). The
        turn's window of the agent channel is cut now, so the ASR (in a worker thread) runs
        while the conversation goes on: the next turn need not wait for it."""
        assert self.recorder is not None
        # From the answer's first sample: where the window starts decides how the VAD and
        # Whisper frame the speech, and their output changes with it.
        heard_from = self._answer_starts if self._answer_starts is not None else turn_start
        heard_until = max(turn_end, self.recorder.agent_playback_end + HEARD_TAIL)
        agent = self.recorder.agent_audio(heard_from, heard_until)
        self.recorder.flush(turn_end)
        if self.heard_asr is None:
            return None
        return asyncio.create_task(asyncio.to_thread(self._transcribe, agent))

    def _transcribe(self, agent: Audio) -> str:
        assert self.heard_asr is not None
        segments: list[SpeechSegment] = self.vad.segments(agent) if agent.frames else []
        if not segments:
            return ""
        # Only the speech: Whisper invents words in long silences.
        rate = agent.sample_rate
        first, last = int(segments[0].start * rate), int(segments[-1].end * rate) + 1
        return transcribe_text(self.heard_asr, Audio(agent.samples[first:last], rate)).strip()
