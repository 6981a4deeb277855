"""Server-VAD turns end where the target's VAD put the end of speech in the input audio.

OpenAI Realtime's ``speech_stopped`` says how much input audio the server had when its VAD
decided (``audio_end_ms``). The driver takes that as the turn's end, so a receive loop that
gets to the event late (a busy host) does not make the measured latency read low.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import numpy as np
import pytest

from voxbench.audio.wav import Audio
from voxbench.core.events import SessionEvent, SpeechStopped
from voxbench.core.session import Session
from voxbench.fullduplex.stream import StreamOptions, StreamResult, _Stream, stream_input
from voxbench.targets.realtime.openai import events as wire
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession
from voxbench.targets.registry import resolve_target
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.scripts import Reply, Script, ScriptMessage

RATE = 24_000
SPEECH = (0.1, 0.5)
"""Where the input's tone (loud enough for the fake's energy VAD) starts and ends."""
SILENCE_MS = 500
"""The fake server VAD's silence wait (its default): it reports the end of speech this
much after the tone."""
TTFB = 0.1
DELAY = 0.3
"""How late the client's receive loop gets to ``speech_stopped`` (a busy host)."""
CHUNK = 0.02


class _Answer(Script):
    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        return Reply(text="Blue is my favourite colour.")


def _input(duration: float = 1.8) -> Audio:
    samples = np.zeros(round(duration * RATE), np.float32)
    start, end = (round(s * RATE) for s in SPEECH)
    t = np.arange(end - start) / RATE
    samples[start:end] = 0.3 * np.sin(2 * np.pi * 220 * t)
    return Audio(samples, RATE)


async def test_late_speech_stopped_does_not_shorten_the_latency() -> None:
    async with FakeOpenAIRealtimeServer(_Answer(), ttfb_ms=TTFB * 1000) as server:
        factory = resolve_target(
            "openai-realtime/gpt-realtime",
            base_url=server.url,
            options={"api_key": "sk-test-key-000000000000", "turn_detection": "server_vad"},
        )

        def make_session() -> Session:
            session = factory()
            events = session.events

            async def busy() -> AsyncIterator[SessionEvent]:
                async for event in events():
                    if isinstance(event, SpeechStopped):
                        await asyncio.sleep(DELAY)  # the loop is busy elsewhere meanwhile
                    yield event

            session.events = busy  # type: ignore[method-assign]
            return session

        _, result = await stream_input(make_session, _input(), StreamOptions())

    assert result.errors == [] and result.turn_detection == "server"
    assert result.end_of_turn_sent == []
    [stamp] = result.server_speech_stopped_audio
    [received] = result.server_speech_stopped
    assert stamp is not None
    # The fake's VAD: the end of the tone plus its silence wait, to a 20 ms frame.
    assert stamp == pytest.approx(SPEECH[1] + SILENCE_MS / 1000, abs=CHUNK)
    # The event really was handled late (the chunk that ended the speech went out at its
    # start, one chunk before the stamp).
    assert received >= stamp - CHUNK + DELAY
    response = result.responses[0]
    assert response["end_of_turn"] == stamp
    first = response["first_audio"]
    assert first is not None
    # The chunk holding the end of speech goes out at its start, one chunk ahead of its
    # place on the timeline; the server answers TTFB after it has that chunk. Any delay only
    # adds to this, so the floor holds at any load. (Measured from ``received`` the latency
    # would have been about 0: the first audio had queued up behind the late event.)
    assert first - stamp >= TTFB - CHUNK - 0.001


def _stream() -> _Stream:
    audio = Audio(np.zeros(RATE, np.float32), RATE)
    result = StreamResult("in.wav", "out.wav", 1.0, RATE, "realtime", "server")
    return _Stream(None, audio, StreamOptions(), result)  # type: ignore[arg-type]


def test_turn_end_is_the_audio_stamp_else_the_receive_time() -> None:
    stream = _stream()
    stream.sent_s = 1.0
    stream.speech_stopped(SpeechStopped(audio_end_s=0.64), 0.9512)
    assert stream.server_turn_end == 0.64
    stream.speech_stopped(SpeechStopped(), 0.98)  # no stamp: when it came
    assert stream.server_turn_end == 0.98
    stream.speech_stopped(SpeechStopped(audio_end_s=1.5), 0.99)  # audio not yet sent
    assert stream.server_turn_end == 0.99
    assert stream.result.server_speech_stopped == [0.9512, 0.98, 0.99]
    assert stream.result.server_speech_stopped_audio == [0.64, None, 1.5]


async def test_openai_session_passes_audio_end_ms_on_only_when_sent() -> None:
    session = OpenAIRealtimeSession("gpt-realtime", options={"turn_detection": "server_vad"})
    for data in (
        {"type": "input_audio_buffer.speech_stopped", "audio_end_ms": 1260},
        {"type": "input_audio_buffer.speech_stopped"},
    ):
        event = wire.parse_server_event(data)
        assert isinstance(event, wire.SpeechStopped)
        await session._on_speech_stopped(event)
    got = [session._queue.get_nowait(), session._queue.get_nowait()]
    assert got == [SpeechStopped(audio_end_s=1.26), SpeechStopped()]
    # Without a stamp the event is written as before (no ``audio_end_s: null``).
    assert got[1].model_dump() == {"type": "speech_stopped"}
