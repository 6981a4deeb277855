"""``websocket/<url>`` against the fake agent: smoke (text, audio), latency, drops, errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.targets.realtime.conftest import assert_perfect, collect_turn, run_smoke, silence, tone
from voxbench.analysis import analyse_run
from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ConfigError, ProviderError
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    SpeechStopped,
    TargetError,
    ToolCallRequested,
    TurnComplete,
)
from voxbench.core.rundir import RunDirectory
from voxbench.core.session import SessionSetup
from voxbench.evaluation import evaluate_run
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.targets.agent.websocket import AgentWebsocketSession
from voxbench.targets.registry import canonical_name, resolve_target
from voxbench.testing.agent_ws import FakeAgentServer
from voxbench.testing.scripts import GoldenScript, ListScript, Reply, ScriptCall


def target(server: FakeAgentServer) -> str:
    return f"websocket/{server.url}"


async def test_smoke_in_text_mode_scores_perfectly(tmp_path: Path, smoke: Benchmark) -> None:
    async with FakeAgentServer(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(tmp_path, target(server), None)
    assert_perfect(run, card, judgments)
    (start,) = server.starts
    assert start.modality == "text" and start.protocol == "voxbench-agent/1"
    assert {t.name for t in start.tools} >= {"register_for_session", "end_session"}
    assert "Knowledge base" in start.system_prompt or start.system_prompt
    kinds = [m["type"] for m in server.received]
    assert kinds.count("user.text") == kinds.count("user.turn_end") == len(smoke.turns)
    results = [m for m in server.received if m["type"] == "tool.result"]
    assert results and results[0]["result"]["status"] == "success"
    assert run.info().target.name == target(server)


async def test_smoke_in_audio_mode_scores_perfectly(tmp_path: Path, smoke: Benchmark) -> None:
    injected = 0.05
    async with FakeAgentServer(GoldenScript(smoke), ttfb_ms=injected * 1000) as server:
        run, card, judgments = await run_smoke(
            tmp_path, target(server), None, mode="audio", heard_asr="none", clock="virtual"
        )
    assert_perfect(run, card, judgments)
    records = run.turns()
    # Virtual time stood still while the agent answered: on the run clock each answer starts
    # where the user's turn ended, and its latency is the wall time it took.
    analysis = analyse_run(run.path)
    assert analysis.clock == "virtual"
    assert all(r.timings.first_event == r.timings.user_end for r in records)
    assert all(t.ttfb >= injected - 0.001 for t in analysis.turns), analysis.turns
    # The fake heard each turn (its "ASR" is the script's transcript) and spoke every answer.
    assert [r.user_transcript for r in records] == [t.text for t in smoke.turns]
    assert all(r.timings.first_audio is not None for r in records)
    assert server.starts[0].modality == "audio"
    assert server.audio_bytes > 0
    ends = [m for m in server.received if m["type"] == "user.turn_end"]
    assert len(ends) == len(smoke.turns)  # client turn detection: voxbench ends each turn


@pytest.mark.slow
async def test_agent_vad_ends_the_turns_in_real_time(tmp_path: Path, smoke: Benchmark) -> None:
    # Turn 3 pauses ~0.5 s mid-sentence: the agent's VAD must wait it out.
    async with FakeAgentServer(GoldenScript(smoke), turn_detection="agent") as server:
        run, card, judgments = await run_smoke(
            tmp_path, target(server), None, mode="audio", heard_asr="none", only_turns="0-3"
        )
    assert_perfect(run, card, judgments)
    assert not [m for m in server.received if m["type"] == "user.turn_end"]
    kinds = [e.type for e in run.events()]
    assert kinds.count("speech_stopped") == 4 and kinds.count("user_transcript") == 4


async def test_latency_is_measured_at_the_wire(tmp_path: Path, smoke: Benchmark) -> None:
    injected = 0.25
    async with FakeAgentServer(GoldenScript(smoke), ttfb_ms=injected * 1000) as server:
        run, card, judgments = await run_smoke(tmp_path, target(server), None, only_turns="0-3")
    assert_perfect(run, card, judgments)
    measured = sorted(r.timings.first_event - r.timings.user_end for r in run.turns())
    # Never early (the stamp is taken when the bytes arrive, after the injected wait); the
    # fastest turn close to it. How close on a quiet machine is a figure, not a test:
    # bench/ttfb_accuracy.py prints it (+3-4 ms); a test that shares 2 cores with other test
    # workers saw up to +20 ms on a turn.
    assert all(m >= injected - 0.001 for m in measured), measured
    assert measured[0] - injected <= 0.05, measured


async def test_a_connection_dropped_mid_turn_reconnects_with_history(
    tmp_path: Path, smoke: Benchmark
) -> None:
    # Response 2 is turn 1's tool call: the fake sends it, then cuts the connection.
    async with FakeAgentServer(GoldenScript(smoke), faults=["drop@2"]) as server:
        run, card, judgments = await run_smoke(tmp_path, target(server), None, only_turns="0-2")
    assert_perfect(run, card, judgments)
    records = run.turns()
    assert records[1].reconnected and not records[0].reconnected
    assert [c.name for c in records[1].tool_calls] == ["register_for_session"]
    assert len(server.starts) == 2
    history = server.starts[1].history
    assert [h.role for h in history] == ["user", "assistant"]
    assert history[0].text == smoke.turns[0].text


async def test_agent_errors_closes_and_duplicates(tmp_path: Path, smoke: Benchmark) -> None:
    faults = ["server_error@1", "malformed_args@3", "duplicate", "rate_limit@6"]
    async with FakeAgentServer(GoldenScript(smoke), faults=faults) as server:
        run, _, _ = await run_smoke(tmp_path, target(server), None, only_turns="0-3")
    records = run.turns()
    assert records[0].reconnected  # closed with 1011 before answering
    calls = records[1].tool_calls
    assert calls[0].parse_error and calls[0].result["error"] == "MALFORMED_ARGUMENTS"
    assert calls[1].result["status"] == "success"
    assert all(r.status == "ok" for r in records), [r.errors for r in records]
    for record, turn in zip(records, smoke.turns, strict=False):
        assert record.assistant_text == turn.golden_text
    assert sum(e.type == "turn_complete" for e in run.events()) == len(records)


async def test_base64_transport_and_negotiated_rates(smoke: Benchmark) -> None:
    script = ListScript([Reply(calls=(ScriptCall("lookup", {"q": "a"}),)), Reply(text="Found.")])
    fake = FakeAgentServer(
        script, input_sample_rate=8000, output_sample_rate=16000, audio_transport="base64"
    )
    async with fake as server:
        session = AgentWebsocketSession(server.url, options={"input_sample_rate": 24000})
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        assert session.info.input_sample_rate == 8000
        await session.send_user_audio(b"\x10\x00" * 2400, 24000)  # 0.1 s at 24 kHz
        await session.end_user_turn()
        first = await collect_turn_until_call(session)
        await session.send_tool_result(first.call_id, {"found": True})
        events = await collect_turn(session)
        await session.close()
    assert server.starts[0].input_sample_rates[0] == 24000
    received = [m for m in server.received if m["type"] == "user.audio"]
    assert received and abs(server.audio_bytes / 2 - 800) <= 16  # resampled to 8 kHz
    audio = [e for e in events if isinstance(e, AssistantAudio)]
    assert audio and {e.sample_rate for e in audio} == {16000}
    assert "".join(e.text for e in events if isinstance(e, AssistantTextDelta)) == "Found."
    assert isinstance(events[-1], TurnComplete)
    assert server.received[-1] == {"type": "session.end"}


async def test_the_agent_vad_stamps_where_speech_ended() -> None:
    # 0.2 s silence, 0.6 s speech, then silence: the agent's VAD (300 ms wait) ends the turn
    # 1.1 s into the user's audio, a stamp on the input's clock that travels with the event.
    script = ListScript([Reply(text="Heard you.")])
    fake = FakeAgentServer(script, turn_detection="agent", vad_silence_ms=300)
    async with fake as server:
        session = AgentWebsocketSession(server.url)
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        rate = session.info.input_sample_rate
        speech = silence(0.2, rate) + tone(0.6, rate) + silence(0.5, rate)
        for i in range(0, len(speech), rate // 25):  # 20 ms chunks
            await session.send_user_audio(speech[i : i + rate // 25], rate)
        events = await collect_turn(session)
        await session.close()
    stopped = [e for e in events if isinstance(e, SpeechStopped)]
    assert len(stopped) == 1 and stopped[0].audio_end_s == pytest.approx(1.1, abs=0.02)
    assert [m for m in server.received if m["type"] == "user.turn_end"] == []


async def collect_turn_until_call(session: AgentWebsocketSession) -> ToolCallRequested:
    async for event in session.events():
        if isinstance(event, ToolCallRequested):
            return event
    raise AssertionError("no call")


async def test_refusals_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="not a websocket URL"):
        resolve_target("websocket/http://127.0.0.1:1/agent")()
    with pytest.raises(ConfigError, match="turn_detection"):
        AgentWebsocketSession("ws://x/agent", options={"turn_detection": "server"})
    assert canonical_name("websocket/ws://h:1/a") == "websocket/ws://h:1/a"
    async with FakeAgentServer(ListScript([]), api_key="right-token-1234") as server:
        session = AgentWebsocketSession(server.url, options={"api_key": "wrong-token-5678"})
        with pytest.raises(ProviderError) as info:
            await session.start(SessionSetup(system_prompt="x"))
        assert info.value.category == "authentication"
        assert "wrong-token" not in str(info.value)
        good = AgentWebsocketSession(server.url, options={"api_key": "right-token-1234"})
        await good.start(SessionSetup(system_prompt="x"))
        await good.close()
    assert server.handshakes[-1]["auth"] == "bearer"


async def test_an_agent_error_message_is_recorded(smoke: Benchmark) -> None:
    async with FakeAgentServer(ListScript([]), faults=["rate_limit@1"]) as server:
        session = AgentWebsocketSession(server.url)
        await session.start(SessionSetup(system_prompt="x"))
        await session.send_user_text("hello")
        await session.end_user_turn()
        seen = []
        async for event in session.events():
            seen.append(event)
            if isinstance(event, TargetError) and event.fatal and event.category == "connectivity":
                break
        await session.close()
    errors = [e for e in seen if isinstance(e, TargetError)]
    assert errors[0].category == "agent" and "too many requests" in errors[0].message


async def test_conference_scores_perfectly_through_the_protocol(tmp_path: Path) -> None:
    conference = load_benchmark("conference")
    async with FakeAgentServer(GoldenScript(conference)) as server:
        config = RunConfig(benchmark="conference", target=target(server), runs_dir=tmp_path)
        path = await run_conversation(config)
    result = await asyncio.to_thread(evaluate_run, path)
    assert_perfect(RunDirectory.open_existing(path), result.card, result.judgments)
    assert len(server.starts) == 1 and len(result.records) == len(conference.turns)


async def test_an_agent_that_is_not_running_stops_the_run_after_one_turn(tmp_path: Path) -> None:
    """Connection refused on every attempt of the first turn: the later turns would only wait
    through the same retries, so the run stops, saying why, with that turn recorded."""
    import socket

    from voxbench.core.errors import RunIncompleteError

    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = RunConfig(
        benchmark="smoke",
        target=f"websocket/ws://127.0.0.1:{port}/agent",
        runs_dir=tmp_path / "runs",
        max_retries=1,
    )
    with pytest.raises(RunIncompleteError, match=r"could not be reached .*9 later turn\(s\)"):
        await run_conversation(config)
    (path,) = (tmp_path / "runs" / "smoke").iterdir()
    run = RunDirectory.open_existing(path)
    assert [(r.turn, r.status) for r in run.turns()] == [("0", "error")]
    info = run.info()
    assert info.status == "error" and "could not be reached" in (info.error or "")
