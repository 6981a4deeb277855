"""``twilio-stream/<url>`` against a fake telephony bot: a call as Twilio places it, the bot's
tools served by ``voxbench tools serve``, what it said heard from its μ-law audio."""

from __future__ import annotations

import asyncio
import base64
import functools
from pathlib import Path

import pytest

from tests.targets.realtime.conftest import collect_turn
from tests.toolserver.test_tools_serve import Served, http_client
from voxbench.audio.mulaw import mulaw_encode
from voxbench.core.benchmark import Benchmark
from voxbench.core.events import AssistantAudio, Interrupted, TurnComplete
from voxbench.core.rundir import RunDirectory
from voxbench.core.session import SessionSetup
from voxbench.evaluation import evaluate_run
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.targets.agent import twilio_events as tw
from voxbench.targets.agent.twilio import TwilioStreamSession
from voxbench.testing.scripts import GoldenScript, ListScript, Reply
from voxbench.testing.twilio_bot import FakeTwilioBot
from voxbench.toolserver.serve import run_with_served_tools


@functools.cache
def espeak():
    from voxbench.providers.speech import get_tts

    return get_tts("local/espeak")


def espeak_voice(text: str, rate: int) -> bytes:
    return espeak().synthesize(text).resampled(rate).to_pcm16()


async def call_the_bot(
    tmp_path: Path, smoke: Benchmark, only_turns: str | None
) -> tuple[FakeTwilioBot, RunDirectory]:
    served = Served()
    bot = FakeTwilioBot(GoldenScript(smoke), voice=espeak_voice, tool_client=http_client(served))
    async with bot as server:
        config = RunConfig(
            benchmark="smoke",
            target=f"twilio-stream/{server.url}",
            runs_dir=tmp_path,
            mode="audio",
            turn_timeout=60.0,
            only_turns=only_turns,
        )

        def ready(url: str, token: str | None) -> None:
            served.url, served.token = url, token

        path = await run_with_served_tools(config, transport="http", on_ready=ready)
    return bot, RunDirectory.open_existing(path)


@pytest.mark.slow
async def test_smoke_by_phone_scores_perfectly(tmp_path: Path, smoke: Benchmark) -> None:
    bot, run = await call_the_bot(tmp_path, smoke, None)
    result = await asyncio.to_thread(evaluate_run, run.path)
    records = run.turns()
    assert [r.status for r in records] == ["ok"] * len(records), [r.errors for r in records]
    # Calls and state are judged exactly: every served call is on its turn.
    decided = [j for j in result.judgments if j.dimension in ("tool_use", "state")]
    assert decided and all(j.passed is not False for j in decided), decided
    # What the bot said is known only from its 8 kHz μ-law audio, heard by Whisper tiny:
    # telephone bandwidth costs it words ("Doors open at 8:30" is heard as "in the
    # morning"), so a fact can be missed; nothing it heard is a false claim.
    facts = [j for j in result.judgments if j.dimension == "facts"]
    assert sum(j.passed is True for j in facts) >= len(facts) - 2, facts
    assert not [j for j in facts if j.details.get("false_claims")]
    assert all(j.details.get("source") == "heard" for j in facts)
    (start,) = bot.starts
    assert start.start.mediaFormat.encoding == "audio/x-mulaw"
    assert start.start.mediaFormat.sampleRate == 8000 and start.start.tracks == ["inbound"]
    assert bot.marks_played == [f"answer-{n}" for n in range(1, len(smoke.turns) + 1)]
    assert bot.stops == 1
    assert all(r.timings.first_audio is not None for r in records)
    assert [c.name for c in records[4].tool_calls] == ["register_for_session"] * 2


def tone_pcm(seconds: float, rate: int = 8000) -> bytes:
    import numpy as np

    t = np.arange(round(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * 300 * t) * 32767).astype("<i2").tobytes()


async def test_a_call_as_twilio_places_it(tmp_path: Path) -> None:
    script = ListScript([Reply(text="one two three"), Reply(text="four")])
    async with FakeTwilioBot(script, ttfb_ms=100) as bot:
        session = TwilioStreamSession(bot.url, options={"turn_end_silence": 0.3})
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        assert session.server_vad and session.info.input_sample_rate == 8000
        speech = tone_pcm(0.5, 16000)  # resampled to 8 kHz on the way
        await session.send_user_audio(speech, 16000)
        for _ in range(60):  # 1.2 s of line silence, 20 ms at a time: the bot's VAD ends it
            await session.send_user_audio(b"\x00\x00" * 320, 16000)
            await asyncio.sleep(0.02)
        await session.end_user_turn()
        events = await collect_turn(session, 15)
        await asyncio.sleep(0.2)
        await session.close()
        await asyncio.sleep(0.2)
    audio = [e for e in events if isinstance(e, AssistantAudio)]
    assert audio and {e.sample_rate for e in audio} == {8000}
    assert isinstance(events[-1], TurnComplete)
    media = [m for m in bot.received if m["event"] == "media"]
    assert [m["media"]["chunk"] for m in media[:3]] == ["1", "2", "3"]
    assert [m["media"]["timestamp"] for m in media[:3]] == ["0", "20", "40"]
    assert {len(base64.b64decode(m["media"]["payload"])) for m in media} == {160}
    sequence = [int(m["sequenceNumber"]) for m in bot.received if "sequenceNumber" in m]
    assert sequence == list(range(1, len(sequence) + 1))
    assert bot.marks_played == ["answer-1"]  # echoed once its audio had played
    assert bot.stops == 1 and bot.received[-1]["event"] == "stop"
    assert bot.received[0] == {"event": "connected", "protocol": "Call", "version": "1.0.0"}


async def test_clear_interrupts_and_returns_pending_marks() -> None:
    async with FakeTwilioBot(ListScript([])) as bot:
        session = TwilioStreamSession(bot.url)
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        sid = session.stream_sid
        payload = base64.b64encode(mulaw_encode(tone_pcm(2.0))).decode()
        await session.end_user_turn()
        await session.on_message(tw.BotMedia(streamSid=sid, media={"payload": payload}).to_json())
        await session.on_message(tw.BotMark(streamSid=sid, mark={"name": "m1"}).to_json())
        await session.on_message(tw.BotClear(streamSid=sid).to_json())
        events = []
        while not session._queue.empty():
            events.append(session._queue.get_nowait())
        await asyncio.sleep(0.1)
        await session.close()
        await asyncio.sleep(0.1)
    assert any(isinstance(e, Interrupted) for e in events)
    assert bot.marks_played == ["m1"]  # at once, not after the 2 s of audio


async def test_text_mode_and_a_dropped_call() -> None:
    from voxbench.core.errors import ConfigError
    from voxbench.core.events import TargetError

    async with FakeTwilioBot(ListScript([Reply(text="hello there")]), faults=["drop@1"]) as bot:
        with pytest.raises(ConfigError, match="audio only"):
            await TwilioStreamSession(bot.url).start(SessionSetup(system_prompt="x"))
        session = TwilioStreamSession(bot.url)
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        await session.send_user_audio(tone_pcm(0.5), 8000)
        for _ in range(60):
            await session.send_user_audio(b"\x00\x00" * 160, 8000)
        seen = []
        async for event in session.events():
            seen.append(event)
            if isinstance(event, TargetError):
                break
        await session.close()
    assert seen[-1].fatal and seen[-1].category == "connectivity"


@pytest.mark.slow
async def test_a_call_dropped_mid_answer_is_placed_again(tmp_path: Path, smoke: Benchmark) -> None:
    # The bot cuts the stream after the first chunk of its first answer: the runner records
    # the drop, places a new call (a fresh stream, new ids) and the turn completes there.
    async with FakeTwilioBot(GoldenScript(smoke), faults=["drop@1"]) as bot:
        config = RunConfig(
            benchmark="smoke",
            target=f"twilio-stream/{bot.url}",
            runs_dir=tmp_path,
            mode="audio",
            heard_asr="none",
            only_turns="0",
            turn_timeout=60.0,
        )
        path = await run_conversation(config)
    (record,) = RunDirectory.open_existing(path).turns()
    assert record.status == "ok" and record.reconnected, record.errors
    assert len(bot.starts) == 2
    assert bot.starts[0].streamSid != bot.starts[1].streamSid
