"""The OpenAI Realtime adapter under injected faults, through the runner."""

from __future__ import annotations

from pathlib import Path

from tests.targets.realtime.conftest import assert_perfect, collect_turn, run_smoke
from voxbench.core.benchmark import Benchmark
from voxbench.core.events import TurnComplete, UserTranscript
from voxbench.core.session import SessionSetup
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.scripts import GoldenScript, ListScript, Reply

TARGET = "openai-realtime/gpt-realtime"


async def test_dropped_socket_reconnects_with_history(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    # Response 3 is turn 1's spoken answer (after its tool call): the socket dies mid-audio.
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), faults=["drop@3"]) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    records = run.turns()
    assert records[1].reconnected and records[1].retries == 1
    assert not any(r.reconnected for r in records[2:])
    assert len(server.handshakes) == 2
    # The second session was rehydrated with turn 0 as text items before turn 1 was retried.
    updates = [i for i, e in enumerate(server.received) if e["type"] == "session.update"]
    replay = server.received[updates[1] + 1 : updates[1] + 3]
    assert [e["item"]["role"] for e in replay] == ["user", "assistant"]
    assert replay[0]["item"]["content"][0]["text"] == smoke.turns[0].text
    assert replay[1]["item"]["content"][0] == {
        "type": "output_text",
        "text": smoke.turns[0].golden_text,
    }
    types = [e.type for e in run.events() if e.turn == "1"]
    assert "turn_retry" in types and "target_error" in types


async def test_history_replays_tool_calls_as_call_items(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    # Response 4 is turn 2's answer: turn 1 (with its call) is history by then.
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), faults=["drop@4"]) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url, only_turns="0-2")
    assert_perfect(run, card, judgments)
    updates = [i for i, e in enumerate(server.received) if e["type"] == "session.update"]
    items = [e["item"] for e in server.received[updates[1] + 1 :] if "item" in e][:6]
    assert [i["type"] for i in items] == [
        "message",
        "message",
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert items[3]["name"] == "register_for_session"
    assert items[3]["call_id"] == items[4]["call_id"]


async def test_malformed_arguments_are_recorded(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), faults=["malformed_args@2"]) as server:
        run, _, _ = await run_smoke(tmp_path, TARGET, server.url, only_turns="0,1")
    calls = run.turns()[1].tool_calls
    assert calls[0].parse_error and calls[0].raw_arguments.startswith('{"name"')
    assert calls[0].result["error"] == "MALFORMED_ARGUMENTS"
    # The scripted model retried with valid arguments, which went through.
    assert calls[1].parse_error is None and calls[1].result["status"] == "success"
    assert run.turns()[1].status == "ok"


async def test_duplicate_events_are_handled_once(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), faults=["duplicate"]) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    for record, turn in zip(run.turns(), smoke.turns, strict=True):
        assert record.assistant_text == turn.golden_text
        assert len(record.tool_calls) == len({c.call_id for c in record.tool_calls})
    assert sum(e.type == "turn_complete" for e in run.events()) == len(smoke.turns)


async def test_out_of_order_transcripts(tmp_path: Path, smoke: Benchmark, keys: None) -> None:
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), out_of_order=True) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    for record, turn in zip(run.turns(), smoke.turns, strict=True):
        assert record.assistant_text == turn.golden_text


async def test_user_transcript_after_response_done_stays_in_its_turn(keys: None) -> None:
    script = ListScript([Reply(text="One."), Reply(text="Two.")], transcripts=["first", "second"])
    async with FakeOpenAIRealtimeServer(script, out_of_order=True) as server:
        session = OpenAIRealtimeSession("gpt-realtime", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        turns = []
        for _ in range(2):
            await session.send_user_audio(b"\x00\x10" * 4800, 24000)  # a steady non-silent level
            await session.end_user_turn()
            turns.append(await collect_turn(session))
        await session.close()
    for events, heard in zip(turns, ["first", "second"], strict=True):
        assert [e.text for e in events if isinstance(e, UserTranscript)] == [heard]
        assert isinstance(events[-1], TurnComplete)


async def test_error_event_before_output_retries_the_turn(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), faults=["server_error@1"]) as server:
        run, card, judgments = await run_smoke(tmp_path, TARGET, server.url)
    assert_perfect(run, card, judgments)
    first = run.turns()[0]
    assert first.retries == 1 and not first.reconnected


async def test_error_event_after_a_tool_call_fails_the_turn_only(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    # Response 3 (turn 1's continuation after its call) is refused: that turn fails, the run
    # carries on.
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), faults=["server_error@3"]) as server:
        run, _, _ = await run_smoke(tmp_path, TARGET, server.url, only_turns="0-2")
    records = run.turns()
    assert [r.status for r in records] == ["ok", "error", "ok"]
    assert "server" in records[1].errors[0] and records[1].tool_calls
