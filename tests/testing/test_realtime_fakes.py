"""The realtime fake servers on their own: protocol behaviour a raw client can observe."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from voxbench.testing.gemini_live import FakeGeminiLiveServer
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.realtime_common import EnergyVad, speech_duration, synth_speech
from voxbench.testing.scripts import ListScript, Reply
from voxbench.testing.ultravox import FakeUltravoxServer


def test_synthetic_speech_lasts_as_long_as_the_text() -> None:
    text = "one two three four five"
    pcm = synth_speech(text, 24000)
    assert len(pcm) / 2 / 24000 == pytest.approx(speech_duration(text)) == pytest.approx(2.0)
    assert synth_speech(text, 24000) == pcm  # deterministic
    assert np.abs(np.frombuffer(pcm, "<i2")).max() > 5000


def test_energy_vad_finds_speech_bounds() -> None:
    rate = 16000
    silence = np.zeros(int(0.5 * rate))
    tone = 0.3 * np.sin(2 * np.pi * 200 * np.arange(int(0.4 * rate)) / rate)
    pcm = (np.concatenate([silence, tone, silence]) * 32767).astype("<i2").tobytes()
    vad = EnergyVad(rate, prefix_ms=100, silence_ms=300)
    events = []
    for i in range(0, len(pcm), 1000):  # odd chunk sizes: frames straddle chunks
        events += vad.feed(pcm[i : i + 1000])
    assert [k for k, _ in events] == ["started", "stopped"]
    assert events[0][1] == 400  # speech at 500 ms, reported 100 ms early (prefix padding)
    assert events[1][1] == 1200  # 300 ms of silence after speech ends at 900 ms


# The client sends an event type that does not exist, on purpose.
@pytest.mark.wire_nonconforming
async def test_openai_fake_errors_like_the_api() -> None:
    async with FakeOpenAIRealtimeServer(ListScript([Reply(text="Hi.")])) as server:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(server.url + "/realtime?model=m"):
                pass
        assert refused.value.response.status_code == 401
        headers = {"Authorization": "Bearer k"}
        async with connect(server.url + "/realtime?model=m", additional_headers=headers) as ws:
            assert json.loads(await ws.recv())["type"] == "session.created"
            await ws.send(json.dumps({"type": "input_audio_buffer.commit", "event_id": "c1"}))
            error = json.loads(await ws.recv())["error"]
            assert error["code"] == "input_audio_buffer_commit_empty" and error["event_id"] == "c1"
            await ws.send(json.dumps({"type": "no.such.event"}))
            assert json.loads(await ws.recv())["error"]["type"] == "invalid_request_error"
            await ws.send(json.dumps({"type": "response.create", "event_id": "r1"}))
            await ws.send(json.dumps({"type": "response.create", "event_id": "r2"}))
            seen = []
            while "response.done" not in seen:
                event = json.loads(await ws.recv())
                seen.append(event["type"])
                if event["type"] == "error":
                    assert event["error"]["code"] == "conversation_already_has_active_response"
                    assert event["error"]["event_id"] == "r2"
            assert seen[0] == "response.created" and "error" in seen
            assert "response.output_audio.delta" in seen


async def test_gemini_fake_requires_setup_first() -> None:
    async with FakeGeminiLiveServer(ListScript([])) as server:
        path = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
        with pytest.raises(InvalidStatus):
            async with connect(server.url + path):
                pass
        async with connect(server.url + path + "?key=k") as ws:
            await ws.send(json.dumps({"realtimeInput": {"text": "hi"}}))
            with pytest.raises(ConnectionClosed):
                await ws.recv()
            assert ws.close_code == 1007


async def test_ultravox_fake_validates_call_creation() -> None:
    async with FakeUltravoxServer(ListScript([])) as server:
        async with httpx.AsyncClient(trust_env=False) as http:
            url = server.url + "/api/calls"
            assert (await http.post(url, json={})).status_code == 403
            bad = await http.post(url, json={"systemPrompt": "x"}, headers={"X-API-Key": "k"})
            assert bad.status_code == 400 and "medium" in bad.text
            body = {"systemPrompt": "x", "medium": {"serverWebSocket": {"inputSampleRate": 16000}}}
            created = await http.post(url, json=body, headers={"X-API-Key": "k"})
        assert created.status_code == 201
        async with connect(created.json()["joinUrl"]) as ws:
            assert json.loads(await ws.recv())["type"] == "call_started"
            assert json.loads(await ws.recv()) == {"type": "state", "state": "listening"}


@pytest.mark.parametrize(
    "kind", ["openai-realtime", "gemini-live", "ultravox", "websocket", "twilio-stream"]
)
async def test_fake_server_command_builds_each_kind(kind: str) -> None:
    from voxbench.cli.fake_server import FAKE_SERVER_KINDS, build_fake_server

    server = build_fake_server(kind, "golden:smoke", faults=["drop@3"], ttfb_ms=5)
    async with server:
        assert server.url.startswith(("ws://127.0.0.1:", "http://127.0.0.1:"))
        assert server.faults.for_request(3)[0].kind == "drop"
    assert "{url}" in FAKE_SERVER_KINDS[kind].usage


async def _session_update_answer(
    session: dict[str, object], *, dialect: str = "openai", strict: bool = True
) -> dict[str, object]:
    async with FakeOpenAIRealtimeServer(ListScript([]), dialect=dialect, strict=strict) as server:  # type: ignore[arg-type]
        headers = {"Authorization": "Bearer k"}
        async with connect(server.url + "/realtime?model=m", additional_headers=headers) as ws:
            await ws.recv()  # session.created / conversation.created
            await ws.send(json.dumps({"type": "session.update", "session": session}))
            return json.loads(await ws.recv())


# What the services refuse, sent on purpose: the SDK check would flag it too.
@pytest.mark.wire_nonconforming
@pytest.mark.parametrize(
    ("session", "code", "param"),
    [
        ({"instructions": "x"}, "missing_required_parameter", "session.type"),
        (
            {
                "type": "realtime",
                "audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}},
            },
            "invalid_value",
            "session.audio.input.format.rate",
        ),
        (
            {
                "type": "realtime",
                "audio": {"output": {"format": {"type": "audio/pcm", "rate": 16000}}},
            },
            "invalid_value",
            "session.audio.output.format.rate",
        ),
    ],
)
async def test_openai_fake_refuses_a_session_without_type_or_with_a_rate_other_than_24k(
    session: dict[str, object], code: str, param: str
) -> None:
    answer = await _session_update_answer(session)
    assert answer["type"] == "error"
    error = answer["error"]
    assert isinstance(error, dict)
    assert (error["type"], error["code"], error["param"]) == ("invalid_request_error", code, param)
    lenient = await _session_update_answer(session, strict=False)
    assert lenient["type"] == "session.updated"


@pytest.mark.wire_nonconforming
@pytest.mark.parametrize(
    ("session", "param"),
    [
        (
            {"audio": {"input": {"transcription": {"model": "gpt-4o-mini-transcribe"}}}},
            "session.audio.input.transcription",
        ),
        ({"type": "realtime", "instructions": "x"}, "session.type"),
        ({"output_modalities": ["audio"]}, "session.output_modalities"),
        ({"tool_choice": "auto"}, "session.tool_choice"),
        ({"audio": {"output": {"voice": "Ara"}}}, "session.audio.output.voice"),
    ],
)
async def test_xai_fake_refuses_session_fields_xai_does_not_document(
    session: dict[str, object], param: str
) -> None:
    answer = await _session_update_answer(session, dialect="xai")
    assert answer["type"] == "error"
    error = answer["error"]
    assert isinstance(error, dict)
    assert (error["code"], error["param"]) == ("unknown_parameter", param)
    lenient = await _session_update_answer(session, dialect="xai", strict=False)
    assert lenient["type"] == "session.updated"


async def test_xai_fake_takes_the_documented_session() -> None:
    pcm = {"format": {"type": "audio/pcm", "rate": 24000}}
    session = {"voice": "Ara", "instructions": "x", "turn_detection": {"type": None}}
    session |= {"audio": {"input": pcm, "output": pcm}, "reasoning": {"effort": "high"}}
    answer = await _session_update_answer(session, dialect="xai")
    assert answer["type"] == "session.updated"


# Top-level session.voice is xAI's dialect, unknown to OpenAI (and to its SDK), on purpose.
@pytest.mark.wire_nonconforming
@pytest.mark.parametrize("strict", [True, False])
async def test_openai_fake_refuses_xai_top_level_session_fields_when_strict(strict: bool) -> None:
    async with FakeOpenAIRealtimeServer(ListScript([]), strict=strict) as server:
        headers = {"Authorization": "Bearer k"}
        async with connect(server.url + "/realtime?model=m", additional_headers=headers) as ws:
            await ws.recv()  # session.created
            update = {"type": "realtime", "voice": "Ara"}
            await ws.send(json.dumps({"type": "session.update", "session": update}))
            answer = json.loads(await ws.recv())
    if strict:
        assert answer["type"] == "error" and answer["error"]["code"] == "unknown_parameter"
    else:
        assert answer["type"] == "session.updated"
        assert answer["session"]["audio"]["output"]["voice"] == "Ara"
