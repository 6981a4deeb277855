"""The OpenAI Realtime adapter against the fake server: smoke run, audio, server VAD."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.targets.realtime.conftest import assert_perfect, collect_turn, run_smoke, silence, tone
from voxbench.core.benchmark import Benchmark
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    SpeechStarted,
    SpeechStopped,
    ToolCallRequested,
    TurnComplete,
    Usage,
    UserTranscript,
)
from voxbench.core.session import SessionSetup
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.scripts import GoldenScript, ListScript, Reply, ScriptCall


async def test_smoke_scores_perfectly(tmp_path: Path, smoke: Benchmark, keys: None) -> None:
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(tmp_path, "openai-realtime/gpt-realtime", server.url)
    assert_perfect(run, card, judgments)
    records = run.turns()
    # Tool calls went through the protocol: turn 4 retried after the injected INTERNAL_ERROR.
    assert [c.name for c in records[4].tool_calls] == ["register_for_session"] * 2
    assert records[1].usage["input_tokens"] > 0 and records[1].timings.first_audio is not None
    sent = [e["type"] for e in server.received]
    assert sent[0] == "session.update"
    update = server.received[0]["session"]
    assert update["audio"]["input"]["turn_detection"] is None  # manual commits by default
    assert update["audio"]["input"]["format"] == {"type": "audio/pcm", "rate": 24000}
    assert {t["name"] for t in update["tools"]} >= {"register_for_session", "end_session"}
    outputs = [
        e for e in server.received if e.get("item", {}).get("type") == "function_call_output"
    ]
    assert json.loads(outputs[0]["item"]["output"])["status"] == "success"
    assert server.handshakes[0]["auth"] == "bearer"
    assert server.handshakes[0]["query"] == {"model": "gpt-realtime"}


async def test_text_provider_name_routes_to_realtime(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(
            tmp_path, "openai/gpt-realtime", server.url, only_turns="0,1"
        )
    assert [r.status for r in run.turns()] == ["ok", "ok"]
    assert server.handshakes, "the realtime socket was used"


async def test_manual_commit_audio_turn(keys: None) -> None:
    script = ListScript([Reply(text="You said something.")], transcripts=["hello there"])
    async with FakeOpenAIRealtimeServer(script) as server:
        session = OpenAIRealtimeSession("gpt-realtime", base_url=server.url)
        await session.start(SessionSetup(system_prompt="Be brief.", modality="audio"))
        for i in range(0, 16000, 1600):  # one second at 16 kHz, resampled to 24 kHz
            await session.send_user_audio(tone(1.0, 16000)[i * 2 : (i + 1600) * 2], 16000)
        await session.end_user_turn()
        events = await collect_turn(session)
        await session.close()
    kinds = [e["type"] for e in server.received]
    assert kinds.index("input_audio_buffer.commit") < kinds.index("response.create")
    appended = b"".join(
        __import__("base64").b64decode(e["audio"])
        for e in server.received
        if e["type"] == "input_audio_buffer.append"
    )
    assert abs(len(appended) / 2 - 24000) <= 48  # resampled to the provider's 24 kHz
    text = "".join(e.text for e in events if isinstance(e, AssistantTextDelta))
    assert text == "You said something."
    audio = [e for e in events if isinstance(e, AssistantAudio)]
    assert audio and all(a.sample_rate == 24000 for a in audio)
    assert [e.text for e in events if isinstance(e, UserTranscript)] == ["hello there"]
    assert isinstance(events[-1], TurnComplete) and events[-1].status == "completed"
    assert any(isinstance(e, Usage) for e in events)


async def test_server_vad_detects_the_turn(keys: None) -> None:
    script = ListScript([Reply(text="Heard you.")], transcripts=["are you there"])
    async with FakeOpenAIRealtimeServer(script) as server:
        session = OpenAIRealtimeSession(
            "gpt-realtime",
            base_url=server.url,
            options={"turn_detection": {"type": "server_vad", "silence_duration_ms": 300}},
        )
        await session.start(SessionSetup(system_prompt="Be brief.", modality="audio"))
        speech = silence(0.2, 24000) + tone(0.6, 24000) + silence(0.5, 24000)
        for i in range(0, len(speech), 960):
            await session.send_user_audio(speech[i : i + 960], 24000)
        await session.end_user_turn()  # a no-op: the server already committed the turn
        events = await collect_turn(session)
        await session.close()
    kinds = [e["type"] for e in server.received]
    assert "input_audio_buffer.commit" not in kinds and "response.create" not in kinds
    assert server.received[0]["session"]["audio"]["input"]["turn_detection"]["type"] == "server_vad"
    order = [type(e) for e in events if isinstance(e, SpeechStarted | SpeechStopped | TurnComplete)]
    assert order == [SpeechStarted, SpeechStopped, TurnComplete]
    # The session's own silence wait (300 ms, not the server's default 500) after 0.8 s of audio.
    stopped = next(e for e in events if isinstance(e, SpeechStopped))
    assert stopped.audio_end_s == pytest.approx(1.1, abs=0.02)
    assert "".join(e.text for e in events if isinstance(e, AssistantTextDelta)) == "Heard you."


async def test_parallel_calls_are_answered_together(keys: None) -> None:
    calls = (ScriptCall("lookup", {"q": "a"}), ScriptCall("lookup", {"q": "b"}))
    script = ListScript([Reply(calls=calls), Reply(text="Both found.")])
    async with FakeOpenAIRealtimeServer(script) as server:
        session = OpenAIRealtimeSession("gpt-realtime", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x"))
        await session.send_user_text("find a and b")
        await session.end_user_turn()
        seen: list = []
        async for event in session.events():
            seen.append(event)
            if isinstance(event, ToolCallRequested):
                await session.send_tool_result(event.call_id, {"found": event.arguments["q"]})
            if isinstance(event, TurnComplete):
                break
        await session.close()
    requested = [e for e in seen if isinstance(e, ToolCallRequested)]
    assert [e.arguments for e in requested] == [{"q": "a"}, {"q": "b"}]
    assert sum(isinstance(e, TurnComplete) for e in seen) == 1
    kinds = [e["type"] for e in server.received]
    # both outputs, then a single response.create
    tail = kinds[kinds.index("conversation.item.create", 2) :]
    assert tail == ["conversation.item.create", "conversation.item.create", "response.create"]


async def test_audio_mode_run_through_the_runner(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    # The runner streams each turn's synthesized speech; the adapter commits it manually.
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(
            tmp_path,
            "openai-realtime/gpt-realtime",
            server.url,
            mode="audio",
            clock="virtual",
            heard_asr="none",
            only_turns="0,1",
        )
    assert_perfect(run, card, judgments)
    records = run.turns()
    assert records[1].user_transcript == smoke.turns[1].text  # the fake's ASR of the audio
    assert records[0].timings.first_audio is not None
    assert server.received[0]["session"]["audio"]["input"]["transcription"]["model"]
    kinds = [e["type"] for e in server.received]
    assert kinds.count("input_audio_buffer.commit") == 2
