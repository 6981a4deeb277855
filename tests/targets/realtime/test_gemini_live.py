"""The Gemini Live adapter against the fake server: smoke, audio turns, faults."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed

from tests.targets.realtime.conftest import assert_perfect, collect_turn, run_smoke
from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ConfigError
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    TargetError,
    TurnComplete,
    Usage,
    UserTranscript,
)
from voxbench.core.session import HistoryMessage, SessionSetup
from voxbench.targets.realtime.gemini.session import GeminiLiveSession
from voxbench.testing.gemini_live import THOUGHT_TOKENS, FakeGeminiLiveServer
from voxbench.testing.scripts import GoldenScript, ListScript, Reply

TARGET = "gemini-live/gemini-3.1-flash-live-preview"


def tone(seconds: float, rate: int) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * 220 * t) * 32767).astype("<i2").tobytes()


async def test_smoke_scores_perfectly(tmp_path: Path, smoke: Benchmark, keys: None) -> None:
    async with FakeGeminiLiveServer(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    assert [c.name for c in run.turns()[4].tool_calls] == ["register_for_session"] * 2
    setup = server.received[0]["setup"]
    assert setup["model"] == "models/gemini-3.1-flash-live-preview"
    assert setup["generationConfig"]["responseModalities"] == ["AUDIO"]
    assert setup["realtimeInputConfig"]["automaticActivityDetection"]["disabled"] is True
    declared = {f["name"] for f in setup["tools"][0]["functionDeclarations"]}
    assert declared >= {"register_for_session", "end_session"}
    responses = [m["toolResponse"] for m in server.received if "toolResponse" in m]
    assert responses[0]["functionResponses"][0]["response"]["status"] == "success"
    assert server.handshakes[0]["has_key"]


async def test_gemini_model_name_routes_to_live(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeGeminiLiveServer(GoldenScript(smoke)) as server:
        run, _, _ = await run_smoke(
            tmp_path,
            "gemini/gemini-2.5-flash-native-audio-preview-12-2025",
            server.url,
            only_turns="0",
        )
    assert run.turns()[0].status == "ok" and server.received


async def test_manual_activity_audio_turn(keys: None) -> None:
    script = ListScript([Reply(text="Loud and clear.")], transcripts=["can you hear me"])
    async with FakeGeminiLiveServer(script) as server:
        session = GeminiLiveSession("gemini-3.1-flash-live-preview", base_url=server.url)
        await session.start(SessionSetup(system_prompt="Be brief.", modality="audio"))
        audio = tone(1.0, 24000)
        for i in range(0, len(audio), 4800):
            await session.send_user_audio(audio[i : i + 4800], 24000)
        await session.end_user_turn()
        events = await collect_turn(session)
        await session.close()
    inputs = [m["realtimeInput"] for m in server.received if "realtimeInput" in m]
    assert "activityStart" in inputs[0] and "activityEnd" in inputs[-1]
    streamed = b"".join(base64.b64decode(i["audio"]["data"]) for i in inputs if "audio" in i)
    assert abs(len(streamed) / 2 - 16000) <= 32  # resampled to 16 kHz
    assert {i["audio"]["mimeType"] for i in inputs if "audio" in i} == {"audio/pcm;rate=16000"}
    assert "".join(e.text for e in events if isinstance(e, AssistantTextDelta)) == "Loud and clear."
    assert all(e.sample_rate == 24000 for e in events if isinstance(e, AssistantAudio))
    assert [e.text for e in events if isinstance(e, UserTranscript)] == ["can you hear me"]
    assert any(isinstance(e, Usage) and e.audio_output_tokens for e in events)
    assert isinstance(events[-1], TurnComplete) and events[-1].status == "completed"


async def test_automatic_activity_detection(keys: None) -> None:
    script = ListScript([Reply(text="Got it.")], transcripts=["hello"])
    async with FakeGeminiLiveServer(script) as server:
        session = GeminiLiveSession(
            "gemini-3.1-flash-live-preview",
            base_url=server.url,
            options={"automatic_activity_detection": True},
        )
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        speech = tone(0.6, 16000) + b"\x00\x00" * 9600  # then 0.6 s of silence
        for i in range(0, len(speech), 640):
            await session.send_user_audio(speech[i : i + 640], 16000)
        events = await collect_turn(session)
        await session.close()
    setup = server.received[0]["setup"]
    assert setup["realtimeInputConfig"]["automaticActivityDetection"]["disabled"] is False
    assert not any("activityStart" in m.get("realtimeInput", {}) for m in server.received)
    assert "".join(e.text for e in events if isinstance(e, AssistantTextDelta)) == "Got it."


async def test_close_with_error_code_is_retried(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeGeminiLiveServer(GoldenScript(smoke), faults=["server_error@1"]) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    assert run.turns()[0].reconnected
    errors = [e for e in run.events() if e.type == "target_error"]
    assert errors[0].category == "server" and "1011" in errors[0].message


# The fake sends `args` as cut-off JSON text instead of an object, on purpose.
@pytest.mark.wire_nonconforming
async def test_malformed_args_and_duplicates(tmp_path: Path, smoke: Benchmark, keys: None) -> None:
    faults = ["malformed_args@2", "duplicate"]
    async with FakeGeminiLiveServer(GoldenScript(smoke), faults=faults) as server:
        run, _, _ = await run_smoke(tmp_path, TARGET, server.url)
    records = run.turns()
    calls = records[1].tool_calls
    assert calls[0].parse_error and calls[0].result["error"] == "MALFORMED_ARGUMENTS"
    assert calls[1].result["status"] == "success"
    assert all(r.status == "ok" for r in records)
    for record, turn in zip(records, smoke.turns, strict=True):
        assert record.assistant_text == turn.golden_text
    assert sum(e.type == "turn_complete" for e in run.events()) == len(smoke.turns)


async def test_input_transcript_after_turn_complete(keys: None) -> None:
    script = ListScript([Reply(text="One."), Reply(text="Two.")], transcripts=["first", "second"])
    async with FakeGeminiLiveServer(script, out_of_order=True) as server:
        session = GeminiLiveSession("m", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        turns = []
        for _ in range(2):
            await session.send_user_audio(tone(0.2, 16000), 16000)
            await session.end_user_turn()
            turns.append(await collect_turn(session))
        await session.close()
    for events, heard in zip(turns, ["first", "second"], strict=True):
        assert [e.text for e in events if isinstance(e, UserTranscript)] == [heard]


async def test_open_microphone_silence_does_not_open_an_activity(keys: None) -> None:
    script = ListScript([Reply(text="Still here.")], transcripts=["hi"])
    async with FakeGeminiLiveServer(script, chunk_ms=5) as server:
        session = GeminiLiveSession("m", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        await session.send_user_audio(tone(0.3, 16000), 16000)
        await session.end_user_turn()
        for _ in range(5):  # the runner keeps the microphone open while the agent answers
            await session.send_user_audio(b"\x00\x00" * 320, 16000)
        events = await collect_turn(session)
        await session.close()
    inputs = [m["realtimeInput"] for m in server.received if "realtimeInput" in m]
    assert sum("activityStart" in i for i in inputs) == 1
    assert isinstance(events[-1], TurnComplete) and events[-1].status == "completed"


async def test_audio_mode_run_through_the_runner(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeGeminiLiveServer(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(
            tmp_path,
            TARGET,
            server.url,
            mode="audio",
            clock="virtual",
            heard_asr="none",
            only_turns="0,1",
        )
    assert_perfect(run, card, judgments)
    assert run.turns()[1].user_transcript == smoke.turns[1].text
    inputs = [m["realtimeInput"] for m in server.received if "realtimeInput" in m]
    assert sum("activityStart" in i for i in inputs) == sum("activityEnd" in i for i in inputs) == 2


async def test_a_close_for_a_bad_key_is_an_authentication_error_never_retried(
    keys: None,
) -> None:
    script = ListScript([Reply(text="never said")])
    async with FakeGeminiLiveServer(script, faults=["unauthorized@1"]) as server:
        session = GeminiLiveSession("gemini-3.1-flash-live-preview", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x"))
        await session.send_user_text("hello")
        await session.end_user_turn()

        async def first_error() -> TargetError:
            async for event in session.events():
                if isinstance(event, TargetError):
                    return event
            raise AssertionError("the stream ended without an error")

        error = await asyncio.wait_for(first_error(), 10)
        await session.close()
    assert error.category == "authentication" and error.fatal and not error.retryable


async def test_a_3_1_model_gets_typed_turns_as_client_content(keys: None) -> None:
    # The 3.1 model page: send_client_content is supported throughout the session.
    async with FakeGeminiLiveServer(ListScript([Reply(text="Hello.")])) as server:
        session = GeminiLiveSession("gemini-3.1-flash-live-preview", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x"))
        await session.send_user_text("hi there")
        await session.end_user_turn()
        events = await collect_turn(session)
        await session.close()
    assert not any("realtimeInput" in m for m in server.received)
    contents = [m["clientContent"] for m in server.received if "clientContent" in m]
    assert contents == [
        {"turns": [{"role": "user", "parts": [{"text": "hi there"}]}], "turnComplete": True}
    ]
    assert isinstance(events[-1], TurnComplete) and events[-1].status == "completed"


async def test_realtime_text_goes_unbracketed_under_automatic_activity_detection(
    keys: None,
) -> None:
    async with FakeGeminiLiveServer(ListScript([Reply(text="Hello.")])) as server:
        options = {"text_input": "realtime_input", "automatic_activity_detection": True}
        session = GeminiLiveSession(
            "gemini-3.1-flash-live-preview", base_url=server.url, options=options
        )
        await session.start(SessionSetup(system_prompt="x"))
        await session.send_user_text("hi there")
        await session.end_user_turn()
        events = await collect_turn(session)
        await session.close()
    inputs = [m["realtimeInput"] for m in server.received if "realtimeInput" in m]
    assert inputs == [{"text": "hi there"}]
    assert isinstance(events[-1], TurnComplete) and events[-1].status == "completed"


def test_realtime_text_under_manual_turns_is_refused_before_connecting() -> None:
    with pytest.raises(ConfigError, match="automatic_activity_detection"):
        GeminiLiveSession("gemini-3.1-flash-live-preview", options={"text_input": "realtime_input"})


async def test_older_models_keep_client_content_and_history_without_history_config(
    keys: None,
) -> None:
    history = [HistoryMessage(role="user", text="hi"), HistoryMessage(role="assistant", text="yo")]
    async with FakeGeminiLiveServer(ListScript([Reply(text="Sure.")])) as server:
        session = GeminiLiveSession("gemini-live-2.5-flash-preview", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x", history=history))
        await session.send_user_text("again")
        await session.end_user_turn()
        await collect_turn(session)
        await session.close()
    assert "historyConfig" not in server.received[0]["setup"]
    contents = [m["clientContent"] for m in server.received if "clientContent" in m]
    assert [c.get("turnComplete", False) for c in contents] == [False, True]


async def _close_after(messages: list[dict[str, object]], *, strict: bool = True) -> int | None:
    """Send ``messages`` to the fake; the close code, or None while it stays open."""
    from websockets.asyncio.client import connect

    async with FakeGeminiLiveServer(ListScript([Reply(text="ok")]), strict=strict) as server:
        url = GeminiLiveSession("m", base_url=server.url).url("k")
        async with connect(url) as ws:
            for message in messages:
                await ws.send(json.dumps(message))
            try:
                while True:
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 2))
                    if "serverContent" in reply and reply["serverContent"].get("turnComplete"):
                        return None
            except ConnectionClosed:
                return ws.close_code
            except TimeoutError:
                return None


MANUAL = {"automaticActivityDetection": {"disabled": True}}
SETUP_31 = {"model": "models/gemini-3.1-flash-live-preview"}


@pytest.mark.parametrize(
    ("name", "messages"),
    [
        (
            "text bracketed by activityStart/End",
            [
                {"setup": SETUP_31 | {"realtimeInputConfig": MANUAL}},
                {"realtimeInput": {"activityStart": {}}},
                {"realtimeInput": {"text": "hi"}},
                {"realtimeInput": {"activityEnd": {}}},
            ],
        ),
        (
            "realtime text under manual turns",
            [
                {"setup": SETUP_31 | {"realtimeInputConfig": MANUAL}},
                {"realtimeInput": {"text": "hi"}},
            ],
        ),
        (
            "AUDIO and TEXT modalities together",
            [
                {
                    "setup": {"model": "models/gemini-live-2.5-flash-preview"}
                    | {"generationConfig": {"responseModalities": ["AUDIO", "TEXT"]}}
                }
            ],
        ),
        (
            "activityStart under automatic activity detection",
            [{"setup": SETUP_31}, {"realtimeInput": {"activityStart": {}}}],
        ),
        ("a second setup", [{"setup": SETUP_31}, {"setup": SETUP_31}]),
        (
            "thinkingLevel with thinkingBudget",
            [
                {
                    "setup": SETUP_31
                    | {
                        "generationConfig": {
                            "thinkingConfig": {"thinkingLevel": "low", "thinkingBudget": 128}
                        }
                    }
                }
            ],
        ),
    ],
)
async def test_the_strict_fake_closes_with_1007_on_what_the_live_api_refuses(
    name: str, messages: list[dict[str, object]], keys: None
) -> None:
    assert await _close_after(messages) == 1007, name
    assert await _close_after(messages, strict=False) is None, name


@pytest.mark.parametrize(
    "thinking", [{"thinkingLevel": "minimal"}, {"thinkingLevel": "HIGH", "includeThoughts": True}]
)
async def test_the_fake_accepts_a_valid_thinking_config(
    thinking: dict[str, object], keys: None
) -> None:
    setup = SETUP_31 | {"generationConfig": {"thinkingConfig": thinking}}
    turn = {"turns": [{"role": "user", "parts": [{"text": "hi"}]}], "turnComplete": True}
    assert await _close_after([{"setup": setup}, {"clientContent": turn}]) is None


async def test_the_fake_answers_client_content_turns_on_a_3_1_model_all_session_long(
    keys: None,
) -> None:
    turn = {"turns": [{"role": "user", "parts": [{"text": "hi"}]}], "turnComplete": True}
    history = {"historyConfig": {"initialHistoryInClientContent": True}}
    seed = {"turns": [{"role": "user", "parts": [{"text": "before"}]}], "turnComplete": True}
    messages = [{"setup": SETUP_31 | history}, {"clientContent": seed}, {"clientContent": turn}]
    assert await _close_after(messages) is None


@pytest.mark.parametrize(
    "model", ["gemini-2.5-flash-native-audio-preview-12-2025", "gemini-3.1-flash-live-preview"]
)
def test_text_output_is_refused_on_native_audio_models(model: str) -> None:
    with pytest.raises(ConfigError, match="native-audio.*AUDIO only"):
        GeminiLiveSession(model, options={"output": "text"})


async def test_the_strict_fake_refuses_text_output_on_native_audio_like_the_api(
    keys: None,
) -> None:
    from websockets.asyncio.client import connect

    async with FakeGeminiLiveServer(ListScript([])) as server:
        url = GeminiLiveSession("m", base_url=server.url).url("k")
        async with connect(url) as ws:
            setup = {"model": "models/gemini-2.5-flash-native-audio-preview-12-2025"}
            setup["generationConfig"] = {"responseModalities": ["TEXT"]}
            await ws.send(json.dumps({"setup": setup}))
            with pytest.raises(ConnectionClosed):
                await ws.recv()
        assert ws.close_code == 1007 and "non-audio" in ws.close_reason


async def test_session_resumption_and_context_compression_are_requested(keys: None) -> None:
    async with FakeGeminiLiveServer(ListScript([Reply(text="One."), Reply(text="Two.")])) as server:
        session = GeminiLiveSession("gemini-3.1-flash-live-preview", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x"))
        for text in ("a", "b"):
            await session.send_user_text(text)
            await session.end_user_turn()
            events = await collect_turn(session)
        await session.close()
        handle = session.resume_handle()
        resumed = GeminiLiveSession(
            "gemini-3.1-flash-live-preview",
            base_url=server.url,
            options={"resumption_handle": handle},
        )
        await resumed.start(SessionSetup(system_prompt="x"))
        await resumed.close()
    setup = server.received[0]["setup"]
    assert setup["sessionResumption"] == {}
    assert setup["contextWindowCompression"] == {"slidingWindow": {}}
    assert handle and handle.startswith("resume-handle") and resumed.resumed
    last = [m["setup"] for m in server.received if "setup" in m][-1]
    assert last["sessionResumption"] == {"handle": handle}
    usage = [e for e in events if isinstance(e, Usage)]
    # responseTokenCount (the words) + thoughtsTokenCount, as the HTTP adapter counts
    assert usage[-1].output_tokens == len(["Two."]) + THOUGHT_TOKENS
