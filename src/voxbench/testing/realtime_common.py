"""Media and conversation helpers shared by the realtime fake servers.

What the fake model *says* comes from ``voxbench.testing.scripts`` (``GoldenScript``,
``ListScript``, ``FaultPlan``), shared with the HTTP fakes. This module adds what only
speech servers need:

- ``synth_speech``: deterministic PCM16 whose duration follows the text (one voiced burst per
  word), standing in for the model's voice;
- ``EnergyVad``: the server-VAD simulation (speech start/stop from frame energy);
- ``Conversation``: the provider-neutral conversation a server hands its script, built from
  wire items (user text or audio, calls made, results received, what was said).
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import functools
import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from voxbench.testing.scripts import (
    Fault,
    FaultPlan,
    Reply,
    Script,
    ScriptCall,
    ScriptMessage,
    ToolOutcome,
)


def speech_duration(text: str, words_per_second: float = 2.5) -> float:
    """Seconds of synthetic speech for ``text`` (at least a quarter second)."""
    return max(0.25, len(text.split()) / words_per_second)


VOWEL_GLIDE = ((730.0, 1090.0, 2440.0), (270.0, 2290.0, 3010.0))
"""Formants (F1–F3, Hz) each synthetic word glides between: /a/ to /i/."""


def synth_speech(text: str, sample_rate: int, words_per_second: float = 2.5) -> bytes:
    """Mono PCM16 standing in for speaking ``text``: one voiced burst per word, 20% gaps.

    Each burst is a voice (harmonics of a pitch fixed per word, with a little vibrato and
    breath noise) whose formants glide from /a/ to /i/ over two syllable beats. Speech-like
    enough that Silero VAD finds it wherever it falls on the VAD's frame grid (steady tones
    were found or missed depending on their offset); deterministic per text."""
    words = text.split() or [""]
    word_samples = int(sample_rate / words_per_second)
    burst = int(word_samples * 0.8)
    t = np.arange(burst) / sample_rate
    frac = t / max(float(t[-1]), 1e-9) if burst > 1 else t
    ramp = min(burst // 4, int(0.01 * sample_rate)) or 1
    envelope = np.ones(burst)
    envelope[:ramp] = np.linspace(0.0, 1.0, ramp)
    envelope[-ramp:] = np.linspace(1.0, 0.0, ramp)
    syllables = 0.55 + 0.45 * np.sin(2 * np.pi * frac) ** 2
    top = min(4000.0, sample_rate / 2 - 100.0)
    out = np.zeros(word_samples * len(words), dtype=np.float64)
    for i, word in enumerate(words):
        code = sum(map(ord, word))
        pitch = 110.0 + 10.0 * (code % 10)  # deterministic per word
        f0 = pitch * (1.0 + 0.08 * np.sin(2 * np.pi * 3.0 * t)) * (1.0 - 0.1 * frac)
        phase = 2 * np.pi * np.cumsum(f0) / sample_rate
        wave = np.zeros(burst)
        for k in range(1, int(top // pitch) + 1):
            gain = sum(
                1.0 / (1.0 + ((k * f0 - (a + (b - a) * frac)) / 90.0) ** 2)
                for a, b in zip(*VOWEL_GLIDE, strict=True)
            )
            wave += gain / np.sqrt(k) * np.sin(k * phase)
        wave *= syllables
        peak = float(np.max(np.abs(wave))) or 1.0
        wave += 0.05 * peak * np.random.default_rng(code).standard_normal(burst)
        wave /= float(np.max(np.abs(wave))) or 1.0
        out[i * word_samples : i * word_samples + burst] = 0.65 * wave * envelope
    samples = int(round(speech_duration(text, words_per_second) * sample_rate))
    out = np.pad(out, (0, max(0, samples - len(out))))[:samples]
    return (out * 32767).astype("<i2").tobytes()


@functools.lru_cache(maxsize=64)
def speech_chunks(text: str, sample_rate: int, chunk_ms: int) -> tuple[bytes, ...]:
    """``synth_speech(text)`` cut into ``chunk_ms`` chunks (cached: answers repeat)."""
    return tuple(split_chunks(synth_speech(text, sample_rate), sample_rate, chunk_ms))


async def wait_until(deadline: float) -> None:
    """Sleep until ``time.perf_counter()`` reads ``deadline``.

    The fakes hold a response's first output until trigger time + the injected latency,
    so the work of preparing it does not add to the latency a test asked for.
    """
    delay = deadline - time.perf_counter()
    if delay > 0:
        await asyncio.sleep(delay)


def split_chunks(pcm: bytes, sample_rate: int, chunk_ms: int) -> list[bytes]:
    """``pcm`` cut into chunks of ``chunk_ms`` (the last may be shorter)."""
    size = max(2, int(sample_rate * chunk_ms / 1000) * 2)
    return [pcm[i : i + size] for i in range(0, len(pcm), size)] or [b""]


def split_words(text: str) -> list[str]:
    """Transcript deltas: each word with the space before it."""
    words = text.split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)]


class EnergyVad:
    """Frame-energy voice activity detection, the fakes' stand-in for server VAD.

    A 20 ms frame is speech when its RMS exceeds ``threshold`` (of full scale). Speech starts
    at the first speech frame (reported ``prefix_ms`` earlier) and stops after
    ``silence_ms`` of non-speech frames.
    """

    def __init__(
        self,
        sample_rate: int,
        *,
        threshold: float = 0.02,
        prefix_ms: int = 300,
        silence_ms: int = 500,
    ) -> None:
        self.sample_rate = sample_rate
        self.threshold = threshold
        self.prefix_ms = prefix_ms
        self.silence_ms = silence_ms
        self._frame = int(sample_rate * 0.02) * 2
        self._rest = b""
        self._pos_ms = 0
        self._speaking = False
        self._silence = 0

    def feed(self, pcm: bytes) -> list[tuple[str, int]]:
        """Audio in; ``("started", start_ms)`` / ``("stopped", end_ms)`` out."""
        data = self._rest + pcm
        out: list[tuple[str, int]] = []
        usable = len(data) - len(data) % self._frame
        for start in range(0, usable, self._frame):
            frame = np.frombuffer(data[start : start + self._frame], dtype="<i2") / 32768.0
            speech = float(np.sqrt(np.mean(frame**2))) > self.threshold
            if speech and not self._speaking:
                self._speaking = True
                out.append(("started", max(0, self._pos_ms - self.prefix_ms)))
            if self._speaking:
                self._silence = 0 if speech else self._silence + 20
                if self._silence >= self.silence_ms:
                    self._speaking = False
                    self._silence = 0
                    out.append(("stopped", self._pos_ms + 20))
            self._pos_ms += 20
        self._rest = data[usable:]
        return out

    @property
    def speaking(self) -> bool:
        """Inside detected speech."""
        return self._speaking


@dataclass
class Conversation:
    """The conversation one connection has seen, as the script reads it."""

    script: Script
    messages: list[ScriptMessage] = field(default_factory=list)
    calls: dict[str, ScriptCall] = field(default_factory=dict)
    """Calls the fake model made, by call id (to name their results)."""

    def user_text(self, text: str) -> None:
        """The user typed (or a history item holds) ``text``."""
        self.messages.append(ScriptMessage("user", text))

    def user_audio(self) -> str:
        """The user spoke: what they said is the script's transcript for that position."""
        number = sum(1 for m in self.messages if m.role == "user") + 1
        text = self.script.transcribe(number)
        self.messages.append(ScriptMessage("user", text))
        return text

    def assistant(self, text: str = "", calls: dict[str, ScriptCall] | None = None) -> None:
        """The model said ``text`` and/or made ``calls`` (history items included)."""
        self.calls.update(calls or {})
        self.messages.append(ScriptMessage("assistant", text, tuple((calls or {}).values())))

    def result(self, call_id: str, output: Any) -> None:
        """A tool result came back; results in a row form one tool message."""
        if isinstance(output, str):
            with contextlib.suppress(json.JSONDecodeError):
                output = json.loads(output)
        call = self.calls.get(call_id)
        outcome = ToolOutcome(call_id, call.name if call else "", output)
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "tool":
            self.messages[-1] = ScriptMessage("tool", results=(*last.results, outcome))
        else:
            self.messages.append(ScriptMessage("tool", results=(outcome,)))

    def reply(self, faults: list[Fault]) -> Reply:
        """The script's answer; a ``malformed_args`` fault cuts each call's JSON short."""
        reply = self.script.reply(self.messages)
        if any(f.kind == "malformed_args" for f in faults) and reply.calls:
            broken = tuple(
                ScriptCall(c.name, c.arguments, raw_arguments=c.arguments_json()[:-1] + ', "')
                for c in reply.calls
            )
            reply = Reply(text=reply.text, calls=broken)
        return reply

    @property
    def last_user_text(self) -> str:
        """What the user said last."""
        return next((m.text for m in reversed(self.messages) if m.role == "user"), "")


def fault_kinds(plan: FaultPlan, number: int) -> dict[str, Fault]:
    """The faults hitting response ``number``, by kind."""
    return {f.kind: f for f in plan.for_request(number)}


Voice = Callable[[str, int], bytes]
"""Text and sample rate → mono PCM16: how a fake speaks."""


class SpeechFake:
    """What every speech fake server shares: its script, faults, injected latency and records."""

    id_separator = "-"

    def setup_speech(
        self,
        script: Script,
        faults: Sequence[str | Fault],
        ttfb_ms: float,
        chunk_ms: float,
        audio_chunk_ms: int,
        out_of_order: bool,
        api_key: str | None,
        voice: Voice | None = None,
    ) -> None:
        """Store the behaviour options (called by each server's constructor)."""
        self.script = script
        self.voice = voice
        """Speaks the answers (text, rate → PCM16); None: tone bursts whose length follows the
        text. Give it real speech (e.g. eSpeak) where VAD must hear the answers as speech."""
        self._spoken: dict[tuple[str, int], tuple[bytes, ...]] = {}
        self.faults = FaultPlan.parse(faults)
        self.ttfb = ttfb_ms / 1000
        """Seconds from a response's trigger to its first output (the injected latency)."""
        self.chunk = chunk_ms / 1000
        self.audio_chunk_ms = audio_chunk_ms
        self.out_of_order = out_of_order
        self.api_key = api_key
        self.received: list[dict[str, Any]] = []
        """Every client message, as sent, across connections."""
        self.first_audio_delays: list[float] = []
        """Server-side seconds from each response's trigger to its first audio chunk."""
        self.responses = 0
        self._ids = itertools.count(1)

    def speech(self, text: str, sample_rate: int) -> tuple[bytes, ...]:
        """The answer ``text`` as PCM16 chunks of ``audio_chunk_ms``."""
        if self.voice is None:
            return speech_chunks(text, sample_rate, self.audio_chunk_ms)
        key = (text, sample_rate)
        if key not in self._spoken:
            pcm = self.voice(text, sample_rate)
            self._spoken[key] = tuple(split_chunks(pcm, sample_rate, self.audio_chunk_ms))
        return self._spoken[key]

    async def prepare_speech(self, text: str, sample_rate: int) -> None:
        """Make ``speech(text)`` ready before a response's injected latency runs out, off the
        event loop where it can be: a client sharing the loop (the tests, the benches) reads
        on meanwhile, so its stamps stay true (synthesis took 30–90 ms in the loop and made
        every measured latency that much shorter than the injected one)."""
        if self.voice is None:
            await asyncio.to_thread(speech_chunks, text, sample_rate, self.audio_chunk_ms)
        else:
            self.speech(text, sample_rate)

    def new_id(self, prefix: str) -> str:
        """A fresh id like the provider's (``item_000001``, ``call-000002``)."""
        return f"{prefix}{self.id_separator}{next(self._ids):06d}"


class WebsocketFake(SpeechFake, abc.ABC):
    """A speech fake on one websocket endpoint: subclasses check handshakes and run sessions."""

    def __init__(
        self,
        script: Script,
        *,
        faults: Sequence[str | Fault] = (),
        ttfb_ms: float = 0.0,
        chunk_ms: float = 0.0,
        audio_chunk_ms: int = 100,
        out_of_order: bool = False,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        voice: Voice | None = None,
        strict: bool = True,
    ) -> None:
        self.strict = strict
        """Refuse what the real service refuses per its docs (a fake may be lenient for
        trying out older clients); tests run strict."""
        self.setup_speech(
            script, faults, ttfb_ms, chunk_ms, audio_chunk_ms, out_of_order, api_key, voice
        )
        self.host = host
        self.port = port
        self.handshakes: list[dict[str, Any]] = []
        """Each connection attempt, as the subclass's ``check`` records it."""
        self._server: Server | None = None

    @abc.abstractmethod
    def check(self, connection: ServerConnection, request: Request) -> Response | None:
        """Accept (None) or refuse a handshake."""

    @abc.abstractmethod
    def new_session(self, ws: ServerConnection) -> Any:
        """The protocol session serving one connection (has ``run`` and ``stop``)."""

    async def start(self) -> None:
        """Listen."""
        self._server = await serve(
            self._handle, self.host, self.port, process_request=self.check, max_size=None
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and close every connection."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def serve_forever(self) -> None:
        """Serve until cancelled (the CLI's foreground mode)."""
        if self._server is None:
            await self.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.stop()

    async def _handle(self, ws: ServerConnection) -> None:
        session = self.new_session(ws)
        with contextlib.suppress(ConnectionClosed):
            await session.run()
        await session.stop()
