"""Speech turns: stream the user's audio like a microphone, time and record the agent.

Each user turn's audio is streamed in real time in fixed chunks (20 ms by default); with the
real clock the microphone keeps streaming silence while the agent answers, as a person's
would. The agent's audio is placed on ``conversation.wav`` where it would play. A watchdog
that knows whether the agent is speaking records a no-response when no agent output comes
within ``no_response_timeout`` of the end of the user's turn; the user's audio is never
replayed into the same session.

After each turn, VAD over the recording stamps the user's and the agent's speech, giving
voice-to-voice latency (agent speech onset − user speech end, negative when the agent talks
over the user), and local ASR of the agent channel gives what the agent was heard to say.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from voxbench.audio.asr import ASREngine
from voxbench.audio.vad import SileroVAD, SpeechSegment
from voxbench.audio.wav import Audio, read_wav
from voxbench.benchmarks.audio import ensure_benchmark_audio
from voxbench.core.benchmark import Benchmark, Turn
from voxbench.core.clock import VirtualClock
from voxbench.providers.speech import get_asr
from voxbench.runner.recording import RECORDING_FILE, ConversationRecorder

if TYPE_CHECKING:
    from voxbench.runner.conversation import ConversationRun, _TurnState

DEFAULT_INPUT_RATE = 24_000


@dataclass(frozen=True)
class UserClip:
    """A turn's audio at the target's input rate, and where its speech is."""

    audio: Audio
    speech_start: float
    speech_end: float


class SpeechTurns:
    """Drives turns in audio mode for one ``ConversationRun``."""

    def __init__(self, run: ConversationRun) -> None:
        self.run = run
        self.config = run.config
        self.benchmark: Benchmark = run.benchmark
        self.vad = SileroVAD(min_speech_ms=100, min_silence_ms=300)
        self.recorder: ConversationRecorder | None = None
        self._clips: dict[str, UserClip] = {}

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
            self.run.run_dir.path / RECORDING_FILE, origin, tags=self.config.tags
        )

    def clip(self, turn: Turn, rate: int) -> UserClip:
        """The user audio of ``turn`` at ``rate`` Hz, with its speech bounds."""
        key = f"{turn.id}@{rate}"
        if key not in self._clips:
            audio = read_wav(self.turn_audio[turn.id]).mono().resampled(rate)
            segments = self.vad.segments(audio)
            start = segments[0].start if segments else 0.0
            end = segments[-1].end if segments else audio.duration
            self._clips[key] = UserClip(audio, start, end)
        return self._clips[key]

    async def drive(self, turn: Turn, state: _TurnState, start: float) -> tuple[float, str]:
        """Stream the turn, wait for the agent's answer and its playback; returns (user_end, status)."""
        run = self.run
        session = run.session
        assert session is not None and self.recorder is not None
        clock = run.clock
        virtual = isinstance(clock, VirtualClock)
        rate = session.info.input_sample_rate or DEFAULT_INPUT_RATE
        clip = self.clip(turn, rate)
        chunk = max(1, round(rate * self.config.chunk_ms / 1000))
        consume = asyncio.create_task(run._consume(turn, state))
        lag = 0.0  # how far sending fell behind the audio's own timing (a busy event loop)
        try:
            for i in range(0, clip.audio.frames, chunk):
                if consume.done() and consume.exception() is not None:
                    consume.result()  # the session broke mid-utterance: retry the turn now
                due = start + lag + i / rate
                await clock.sleep(due - clock.now())
                # A chunk sent late delays the rest (as a stalled microphone would): no burst.
                lag += max(0.0, clock.now() - due - 0.005)
                piece = Audio(clip.audio.samples[i : i + chunk], rate)
                await session.send_user_audio(piece.to_pcm16(), rate)
                self.recorder.add_user(start + lag + i / rate, piece)
            await clock.sleep(start + lag + clip.audio.frames / rate - clock.now())
            user_end = clock.now()
            state.user_speech = (start + lag + clip.speech_start, start + lag + clip.speech_end)
            await session.end_user_turn()
            run.record(
                turn.id,
                "user_turn_ended",
                audio_seconds=round(clip.audio.duration, 3),
                lag=round(lag, 4),
            )
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
        state: _TurnState,
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
        while not consume.done():
            now = clock.now()
            if state.first_event is None and now - user_end > self.config.no_response_timeout:
                run.record(turn.id, "no_response", waited=round(now - user_end, 3))
                state.errors.append(f"no response within {self.config.no_response_timeout:g} s")
                consume.cancel()
                return "no_response"
            if now - user_end > self.config.turn_timeout:
                run.record(turn.id, "turn_timeout", seconds=self.config.turn_timeout)
                state.errors.append(f"no complete response within {self.config.turn_timeout:g} s")
                consume.cancel()
                return "timeout"
            if virtual:
                # Waiting for the agent is real work: do not jump the clock, just wait.
                await asyncio.wait({consume}, timeout=0.05)
            else:
                assert run.session is not None
                await run.session.send_user_audio(silence, rate)  # the microphone stays open
                await asyncio.wait({consume}, timeout=step)
        return consume.result()

    def place_agent_audio(self, t: float, audio: Audio, first: bool) -> float:
        """Put agent audio that arrived at ``t`` on the recording; returns its play time.

        The first audio of an answer is marked with a tag tone when tags are on."""
        assert self.recorder is not None
        plays_at = self.recorder.add_agent(t, audio)
        if first:
            self.recorder.add_tag(plays_at)
        return plays_at

    async def analyse(self, turn_start: float, turn_end: float) -> dict[str, float | str | None]:
        """VAD stamps and heard text of the agent for the turn just ended; flushes the recording.

        The model work runs in a worker thread, so other runs sharing the event loop go on.
        """
        assert self.recorder is not None
        agent = self.recorder.agent_audio(turn_start, turn_end)
        self.recorder.flush(turn_end)
        return await asyncio.to_thread(self._listen, agent, turn_start)

    def _listen(self, agent: Audio, offset: float) -> dict[str, float | str | None]:
        segments: list[SpeechSegment] = self.vad.segments(agent) if agent.frames else []
        out: dict[str, float | str | None] = {
            "agent_speech_start": None,
            "agent_speech_end": None,
            "heard_text": None if self.heard_asr is None else "",
        }
        if segments:
            out["agent_speech_start"] = round(offset + segments[0].start, 6)
            out["agent_speech_end"] = round(offset + segments[-1].end, 6)
            if self.heard_asr is not None:
                rate = agent.sample_rate
                first, last = int(segments[0].start * rate), int(segments[-1].end * rate) + 1
                spoken = Audio(agent.samples[first:last], rate)
                out["heard_text"] = self.heard_asr.transcribe(spoken).text.strip()
        return out
