"""Stream one input wav to a target Session and capture its answer on the input's timeline.

The input goes out in 20 ms chunks, paced by a clock: the real one, or virtual time for
in-process targets. Virtual time jumps over waits, and stands still while a response is in
flight (from ``end_user_turn`` to the target's ``TurnComplete``): an in-process target
answers in no time on the input's timeline, so output.wav and every metric scored on it
are the same on a fast, slow or busy host. How long the host took is still recorded, as
``processing_s`` of each response (wall seconds from the end of turn to the first audio).

Turns: a target whose server detects turns (``server_vad``) decides by itself. Its turn
ends where its VAD placed the end of the user's speech in the input audio, when the target
says so (``SpeechStopped.audio_end_s``, from OpenAI Realtime's ``audio_end_ms``): a position
on the input's own timeline, whose t=0 is the first input audio sent (each chunk goes out at
its start). It does not move with when the event was handled: with the time it was
received instead, both ends of the latency were receipt times, and a ``speech_stopped`` that
a busy host got to late made the latency read low. Without a stamp, the time the event was
received ends the turn (``server_speech_stopped`` keeps those times,
``server_speech_stopped_audio`` the stamps). Any other target gets ``end_user_turn`` from a
local Silero VAD: when the user has been silent for ``endpoint_ms`` after speech (the VAD
runs on the whole input up front, but each decision is fired only at the moment a streaming
VAD could have made it). When the user starts speaking again while the answer is playing
(or pending), playback stops and the rest of that answer is dropped, as a voice client with
barge-in does. An answer still pending when the input ends is waited for
(``response_timeout_s``), in real time as in virtual time, so it is recorded, never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from voxbench.audio.vad import SileroVAD
from voxbench.audio.wav import Audio
from voxbench.core.clock import Clock, VirtualClock
from voxbench.core.errors import ConfigError
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    Interrupted,
    SpeechStarted,
    SpeechStopped,
    StageMark,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    UserTranscript,
)
from voxbench.core.session import Session, SessionSetup
from voxbench.fullduplex.timeline import OutputTimeline

DEFAULT_SYSTEM_PROMPT = (
    "You are a friendly voice assistant in a spoken conversation. Answer briefly and "
    "naturally, as you would out loud."
)


@dataclass(frozen=True)
class StreamOptions:
    """How to stream one input."""

    chunk_ms: int = 20
    realtime: bool | None = None
    """True: real time; False: virtual time; None: virtual for in-process targets."""
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    endpoint_ms: int = 600
    """Silence after user speech before a client-side end of turn."""
    onset_ms: int = 250
    """Speech needed before a client-side barge-in (the VAD's minimum speech)."""
    barge_in: bool = True
    response_timeout_s: float = 60.0
    """The longest real wait for a response to complete: in virtual time at any point (it
    stands still meanwhile), in real time once the input has ended."""
    perturb: str | None = None
    """What the target hears each input through (``voxbench.audio.perturb``, canonical);
    the driver perturbs the input as read, seeded by ``seed`` and the sample's path."""
    seed: int = 0


@dataclass
class StreamResult:
    """What happened while streaming one input (times in seconds from the input's start)."""

    input: str
    output: str
    duration_s: float
    sample_rate: int
    clock: str
    turn_detection: str
    user_speech: list[list[float]] = field(default_factory=list)
    end_of_turn_sent: list[float] = field(default_factory=list)
    barge_ins: list[float] = field(default_factory=list)
    responses: list[dict[str, float | None]] = field(default_factory=list)
    assistant_audio: list[list[float]] = field(default_factory=list)
    interrupted: list[float] = field(default_factory=list)
    server_speech_started: list[float] = field(default_factory=list)
    server_speech_stopped: list[float] = field(default_factory=list)
    """When each of the target's ``SpeechStopped`` events was received (its receive time)."""
    server_speech_stopped_audio: list[float | None] = field(default_factory=list)
    """Beside ``server_speech_stopped``, one per event: where in the input the target's VAD
    put the end of speech (``SpeechStopped.audio_end_s``, its silence wait included), None
    when it gave no stamp. A response's ``end_of_turn`` under server turns is this stamp, or
    the receive time when there is none or it lies beyond the audio sent when the event came
    (then it is not on the input's clock). The stamp does not depend on when the event was
    handled, so an event handled late (a busy host) does not shorten the latency."""
    user_transcript: str = ""
    assistant_text: str = ""
    stage_timings: list[dict[str, Any]] = field(default_factory=list)
    """Composite targets' own stage times (a cascade's stt / llm / tts), as they came."""
    dropped_audio_s: float = 0.0
    events: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def server_decides_turns(session: Session) -> bool:
    """Whether the target's own (server) VAD ends user turns."""
    for holder in (session.info, session):
        flag = getattr(holder, "server_vad", None)
        if isinstance(flag, bool):
            return flag
    return False


class _Stream:
    def __init__(self, session: Session, audio: Audio, opts: StreamOptions, result: StreamResult):
        self.session = session
        self.audio = audio
        self.opts = opts
        self.result = result
        self.virtual = result.clock == "virtual"
        self.clock: Clock = VirtualClock() if self.virtual else Clock()
        self.timeline = OutputTimeline(audio.frames, audio.sample_rate)
        self.t0 = 0.0
        self.busy_since: float | None = None
        self.discarding = False
        self.awaiting_audio = True
        self.text: list[str] = []
        self.heard: list[str] = []
        self.counts: Counter[str] = Counter()
        self.fatal = False
        self.sent_s = 0.0
        """Seconds of the input handed to the session so far (on the input's timeline)."""
        self.server_turn_end: float | None = None
        """Where the target's VAD last ended a user turn (see ``server_speech_stopped_audio``)."""
        self.stage_starts: dict[str, float] = {}
        """Wall-clock (``clock.wall()``) start of each stage in progress."""

    def now(self) -> float:
        return self.clock.now() - self.t0

    async def wait_until(self, t: float) -> None:
        while True:
            delay = t - self.now()
            if delay <= 0:
                return
            if self.virtual and self.busy_since is not None:
                if self.clock.wall() - self.busy_since > self.opts.response_timeout_s:
                    self.result.errors.append(
                        f"no TurnComplete {self.opts.response_timeout_s:.0f} s after end of turn"
                    )
                    self.busy_since = None
                    continue
                # The target is working: wait in real time, virtual time stands still.
                await asyncio.sleep(0.005)
            else:
                await self.clock.sleep(delay)

    async def receive(self) -> None:
        async for ev in self.session.events():
            t = self.now()
            self.counts[ev.type] += 1
            if isinstance(ev, AssistantAudio):
                if self.discarding:
                    self.result.dropped_audio_s += ev.duration
                    continue
                if self.awaiting_audio or not self.result.responses:
                    self.awaiting_audio = False
                    if (
                        not self.result.responses
                        or self.result.responses[-1]["first_audio"] is not None
                    ):
                        # Server-side turns: the turn ended where the server's VAD said so.
                        self.result.responses.append(
                            {"end_of_turn": self.server_turn_end, "first_audio": None}
                        )
                    self.result.responses[-1]["first_audio"] = round(t, 4)
                    if self.busy_since is not None:
                        waited = self.clock.wall() - self.busy_since
                        self.result.responses[-1]["processing_s"] = round(waited, 4)
                self.timeline.place(Audio.from_pcm16(ev.pcm, ev.sample_rate), t)
            elif isinstance(ev, AssistantTextDelta):
                self.text.append(ev.text)
            elif isinstance(ev, UserTranscript):
                self.heard.append(ev.text)
            elif isinstance(ev, TurnComplete):
                self.busy_since = None
                self.awaiting_audio = True
            elif isinstance(ev, Interrupted):
                self.result.dropped_audio_s += self.timeline.stop(t)
                self.result.interrupted.append(round(t, 4))
            elif isinstance(ev, SpeechStarted):
                self.result.server_speech_started.append(round(t, 4))
            elif isinstance(ev, SpeechStopped):
                self.speech_stopped(ev, t)
            elif isinstance(ev, ToolCallRequested):
                await self.session.send_tool_result(
                    ev.call_id, {"error": "no tools are available in this evaluation"}
                )
            elif isinstance(ev, StageMark):
                # Stage durations are wall time: virtual time stands still while they run.
                if ev.edge == "start":
                    self.stage_starts[ev.stage] = self.clock.wall()
                elif ev.stage in self.stage_starts:
                    took = self.clock.wall() - self.stage_starts.pop(ev.stage)
                    self.result.stage_timings.append(
                        {"t": round(t, 4), "stage": ev.stage, "seconds": round(took, 4)}
                    )
            elif isinstance(ev, TargetError):
                self.result.errors.append(f"{ev.category}: {ev.message}")
                if ev.fatal:
                    self.fatal = True
                    self.busy_since = None

    def speech_stopped(self, ev: SpeechStopped, t: float) -> None:
        """The target's VAD ended the user's turn; ``t``: when the event was received."""
        self.result.server_speech_stopped.append(round(t, 4))
        stamp = None if ev.audio_end_s is None else round(ev.audio_end_s, 4)
        self.result.server_speech_stopped_audio.append(stamp)
        # A VAD cannot have heard audio not yet sent (a millisecond's rounding aside).
        on_input_clock = stamp is not None and stamp <= self.sent_s + 0.001
        self.server_turn_end = stamp if on_input_clock else round(t, 4)

    async def end_turn(self, t: float) -> None:
        await self.session.end_user_turn()
        self.result.end_of_turn_sent.append(round(t, 4))
        self.result.responses.append({"end_of_turn": round(t, 4), "first_audio": None})
        self.busy_since = self.clock.wall()
        self.discarding = False
        self.awaiting_audio = True

    def barge_in(self, t: float) -> None:
        cut = self.timeline.stop(t)
        self.result.dropped_audio_s += cut
        if cut or self.busy_since is not None:
            self.result.barge_ins.append(round(t, 4))
            self.discarding = True

    async def run(self, actions: list[tuple[float, str]]) -> Audio:
        send_rate = self.session.info.input_sample_rate or self.audio.sample_rate
        pcm = self.audio.resampled(send_rate).to_pcm16()
        step = send_rate * self.opts.chunk_ms // 1000 * 2
        chunk_s = self.opts.chunk_ms / 1000
        duration = self.audio.duration
        self.t0 = self.clock.now()
        receiver = asyncio.create_task(self.receive())
        try:
            for i, offset in enumerate(range(0, len(pcm), step)):
                await self._fire(actions, i * chunk_s)
                await self.wait_until(i * chunk_s)
                if self.fatal or receiver.done():
                    break
                chunk = pcm[offset : offset + step]
                # Counted before the send: the target may answer before the send returns.
                self.sent_s = (offset + len(chunk)) / 2 / send_rate
                await self.session.send_user_audio(chunk, send_rate)
            await self._fire(actions, duration)
            await self.wait_until(duration)
            await self.settle(receiver)
        finally:
            receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await receiver
        if receiver.done() and not receiver.cancelled() and receiver.exception() is not None:
            self.result.errors.append(f"event stream failed: {receiver.exception()}")
        # What was still queued when the input ended is never heard.
        self.result.dropped_audio_s += max(0.0, self.timeline.cursor - duration)
        return self.timeline.audio()

    async def settle(self, receiver: asyncio.Task[None]) -> None:
        """The input has ended: wait for the answer still in flight, if any.

        Virtual time already waits (it stands still while a response is pending); real time
        went on, and closing the session then cancelled an answer the target was still
        working on (a cascade whose Whisper was transcribing the last turn), losing it with
        no error. The answer is now recorded (first audio after the input's end: it is not
        in the output, ``dropped_audio_s`` counts it), or an error says it never came."""
        while self.busy_since is not None and not self.fatal and not receiver.done():
            if self.clock.wall() - self.busy_since > self.opts.response_timeout_s:
                self.result.errors.append(
                    f"no TurnComplete {self.opts.response_timeout_s:.0f} s after end of turn"
                )
                self.busy_since = None
                return
            await asyncio.sleep(0.005)

    async def _fire(self, actions: list[tuple[float, str]], upto: float) -> None:
        while actions and actions[0][0] <= upto:
            t, kind = actions.pop(0)
            await self.wait_until(t)
            if kind == "end_turn":
                await self.end_turn(t)
            elif self.opts.barge_in:
                self.barge_in(t)


def turn_actions(
    audio: Audio, opts: StreamOptions
) -> tuple[list[tuple[float, str]], list[list[float]]]:
    """When a streaming VAD would end the user's turn / detect a barge-in, and the speech."""
    vad = SileroVAD(min_speech_ms=opts.onset_ms, min_silence_ms=opts.endpoint_ms)
    segments = vad.segments(audio)
    actions: list[tuple[float, str]] = []
    for seg in segments:
        actions.append((seg.start + opts.onset_ms / 1000, "barge_in"))
        actions.append((seg.end + opts.endpoint_ms / 1000, "end_turn"))
    actions.sort()
    return actions, [[round(s.start, 4), round(s.end, 4)] for s in segments]


async def stream_input(
    make_session: Callable[[], Session],
    audio: Audio,
    opts: StreamOptions,
    *,
    input_name: str = "input.wav",
    output_name: str = "output.wav",
) -> tuple[Audio | None, StreamResult]:
    """Stream ``audio`` to a fresh session; the aligned output (None if the session failed)."""
    audio = audio.mono()
    session = make_session()
    virtual = opts.realtime is False or (opts.realtime is None and session.info.in_process)
    if virtual and not session.info.in_process:
        raise ConfigError(
            f"virtual time needs an in-process target; {session.info.name} runs elsewhere",
            field="--virtual",
            expected="--realtime for network targets",
        )
    result = StreamResult(
        input=input_name,
        output=output_name,
        duration_s=round(audio.duration, 4),
        sample_rate=audio.sample_rate,
        clock="virtual" if virtual else "realtime",
        turn_detection="client",
    )
    stream = _Stream(session, audio, opts, result)
    out: Audio | None = None
    try:
        await session.start(SessionSetup(system_prompt=opts.system_prompt, modality="audio"))
        actions: list[tuple[float, str]] = []
        if server_decides_turns(session):
            result.turn_detection = "server"
        else:
            actions, result.user_speech = turn_actions(audio, opts)
        if session.info.output_modality != "audio":
            result.errors.append(
                "target answers in text only: output.wav stays silent (use a cascade target)"
            )
        out = await stream.run(actions)
    finally:
        with contextlib.suppress(Exception):
            await session.close()
        result.assistant_audio = [
            [round(s, 4), round(min(e, audio.duration), 4)]
            for s, e in stream.timeline.spans
            if s < audio.duration
        ]
        result.assistant_text = "".join(stream.text).strip()
        result.user_transcript = " ".join(stream.heard).strip()
        result.events = dict(stream.counts)
    return out, result
