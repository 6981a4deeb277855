"""The Ultravox adapter against the fake: call creation, smoke, audio, faults."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.targets.realtime.conftest import assert_perfect, collect_turn, run_smoke
from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ProviderError
from voxbench.core.events import AssistantAudio, AssistantTextDelta, TurnComplete, UserTranscript
from voxbench.core.session import SessionSetup
from voxbench.targets.realtime.ultravox.session import UltravoxSession
from voxbench.testing.scripts import GoldenScript, ListScript, Reply
from voxbench.testing.ultravox import FakeUltravoxServer

TARGET = "ultravox/ultravox-v0.7"


async def test_smoke_scores_perfectly(tmp_path: Path, smoke: Benchmark, keys: None) -> None:
    async with FakeUltravoxServer(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    assert [c.name for c in run.turns()[4].tool_calls] == ["register_for_session"] * 2
    (call,) = server.calls.values()
    assert call.model == "ultravox-v0.7" and call.firstSpeakerSettings == {"user": {}}
    assert call.medium.serverWebSocket.inputSampleRate == 16000
    tool = next(
        t.temporaryTool
        for t in call.selectedTools
        if t.temporaryTool.modelToolName == "register_for_session"
    )
    assert {p.name: p.required for p in tool.dynamicParameters} == {
        "name": True,
        "session_id": True,
    }
    assert tool.client == {}
    results = [m for m in server.received if m["type"] == "client_tool_result"]
    assert '"success"' in results[0]["result"]


async def test_drop_reconnects_with_initial_messages(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    # Response 4 is turn 2's answer: by then turn 1 (with its call) is history.
    async with FakeUltravoxServer(GoldenScript(smoke), faults=["drop@4"]) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url, only_turns="0-2")
    assert_perfect(run, card, judgments)
    assert run.turns()[2].reconnected
    second = list(server.calls.values())[1]
    roles = [m.role for m in second.initialMessages]
    assert roles == [
        "MESSAGE_ROLE_USER",
        "MESSAGE_ROLE_AGENT",
        "MESSAGE_ROLE_USER",
        "MESSAGE_ROLE_TOOL_CALL",
        "MESSAGE_ROLE_TOOL_RESULT",
        "MESSAGE_ROLE_AGENT",
    ]
    assert second.initialMessages[3].toolName == "register_for_session"


async def test_malformed_duplicates_and_closed_call(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    faults = ["server_error@1", "malformed_args@3", "duplicate"]
    async with FakeUltravoxServer(GoldenScript(smoke), faults=faults) as server:
        run, _, _ = await run_smoke(tmp_path, TARGET, server.url)
    records = run.turns()
    assert records[0].reconnected  # the call was closed with 1011 before answering
    calls = records[1].tool_calls
    assert calls[0].parse_error and calls[0].result["error"] == "MALFORMED_ARGUMENTS"
    assert calls[1].result["status"] == "success"
    assert all(r.status == "ok" for r in records)
    for record, turn in zip(records, smoke.turns, strict=True):
        assert record.assistant_text == turn.golden_text
    assert sum(e.type == "turn_complete" for e in run.events()) == len(smoke.turns)


async def test_spoken_turn_and_late_user_transcript(keys: None) -> None:
    script = ListScript([Reply(text="Sure thing."), Reply(text="Done.")], transcripts=["a", "b"])
    async with FakeUltravoxServer(script, out_of_order=True) as server:
        session = UltravoxSession("ultravox-v0.7", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        t = np.arange(24000 * 6 // 10) / 24000
        speech = (0.3 * np.sin(2 * np.pi * 200 * t) * 32767).astype("<i2").tobytes()
        turns = []
        for _ in range(2):
            for i in range(0, len(speech), 4800):
                await session.send_user_audio(speech[i : i + 4800], 24000)
            await session.send_user_audio(b"\x00\x00" * 14400, 24000)  # 0.6 s of silence
            await session.end_user_turn()
            turns.append(await collect_turn(session))
        await session.close()
    assert abs(server.audio_bytes / 2 - 2 * 1.2 * 16000) <= 64  # resampled to 16 kHz
    for events, heard, said in zip(turns, ["a", "b"], ["Sure thing.", "Done."], strict=True):
        assert [e.text for e in events if isinstance(e, UserTranscript)] == [heard]
        assert "".join(e.text for e in events if isinstance(e, AssistantTextDelta)) == said
        assert any(isinstance(e, AssistantAudio) and e.sample_rate == 24000 for e in events)
        assert isinstance(events[-1], TurnComplete)


async def test_call_creation_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ULTRAVOX_API_KEY", "wrong-key-123456")
    async with FakeUltravoxServer(ListScript([]), api_key="right") as server:
        session = UltravoxSession("ultravox-v0.7", base_url=server.url)
        with pytest.raises(ProviderError) as info:
            await session.start(SessionSetup(system_prompt="x"))
    assert info.value.category == "authentication" and info.value.status == 403
    assert "wrong-key" not in str(info.value)
