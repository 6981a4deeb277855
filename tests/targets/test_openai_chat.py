"""The OpenAI Chat Completions adapter against the fake OpenAI server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.benchmark import ToolSpec
from voxbench.core.errors import PrerequisiteError
from voxbench.core.session import HistoryMessage, HistoryToolCall, SessionSetup
from voxbench.testing import FakeOpenAIServer, GoldenScript, ListScript, Reply, ScriptCall

from .chat_fixtures import assert_all_passed, drain_turn, open_session, run_smoke, turns

TOOLS = [
    ToolSpec(
        name="lookup",
        description="Look a thing up.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    ),
    ToolSpec(name="ping", description="Ping."),
]
SETUP = SessionSetup(system_prompt="You are terse.", tools=TOOLS)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-for-the-fake-server")


async def test_golden_script_through_the_adapter_scores_every_check(tmp_path: Path) -> None:
    async with FakeOpenAIServer(
        GoldenScript(load_benchmark("smoke")), api_key="sk-test-key-for-the-fake-server"
    ) as server:
        path = await run_smoke(tmp_path, "openai/gpt-4o-mini", server.url)
    await assert_all_passed(path)
    records = turns(path)
    assert [c.name for c in records[4].tool_calls] == ["register_for_session"] * 2
    assert all(r.usage.get("input_tokens", 0) > 0 for r in records)
    assert all(r.timings.first_text is not None for r in records)


async def test_streamed_parallel_calls_are_assembled_by_index_and_followed_up() -> None:
    script = ListScript(
        [
            Reply(
                text="Checking both.",
                calls=(ScriptCall("lookup", {"q": "doors"}), ScriptCall("ping", {})),
            ),
            Reply(text="Doors open at nine."),
        ]
    )
    async with FakeOpenAIServer(script) as server:
        session = await open_session("openai/gpt-4o-mini", server.url, SETUP)
        await session.send_user_text("When do doors open?")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        follow_up = server.requests[1].json()
    calls = [e for e in events if e.type == "tool_call"]
    assert [(c.name, c.arguments) for c in calls] == [("lookup", {"q": "doors"}), ("ping", {})]
    text = "".join(e.text for e in events if e.type == "assistant_text")
    assert text == "Checking both.Doors open at nine."
    assert [e.type for e in events].count("turn_complete") == 1
    assert events[-1].status == "completed"
    usage = [e for e in events if e.type == "usage"]
    assert len(usage) == 2 and usage[0].input_tokens > 0
    # The follow-up carries the assistant step and one tool message per call, in order.
    roles = [m["role"] for m in follow_up["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in follow_up["messages"][3:]] == [c.call_id for c in calls]
    assert json.loads(follow_up["messages"][3]["content"]) == {"status": "ok", "echo": "lookup"}
    assert follow_up["stream_options"] == {"include_usage": True}
    assert follow_up["tools"][0]["function"]["name"] == "lookup"


async def test_non_streaming_mode_gives_the_same_calls() -> None:
    script = ListScript([Reply(calls=(ScriptCall("lookup", {"q": "x"}),)), Reply(text="Done.")])
    async with FakeOpenAIServer(script) as server:
        session = await open_session("openai/gpt-4o-mini", server.url, SETUP, stream=False)
        await session.send_user_text("go")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
    assert [e.type for e in events] == [
        "usage",
        "tool_call",
        "assistant_text",
        "usage",
        "turn_complete",
    ]
    assert "stream" not in server.requests[0].json()


async def test_malformed_arguments_are_reported_and_sent_back_verbatim() -> None:
    script = ListScript([Reply(calls=(ScriptCall("lookup", {"q": "x"}),)), Reply(text="Sorry.")])
    async with FakeOpenAIServer(script, faults=["malformed_args@1"]) as server:
        session = await open_session("openai/gpt-4o-mini", server.url, SETUP)
        await session.send_user_text("go")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        follow_up = server.requests[1].json()
    (call,) = [e for e in events if e.type == "tool_call"]
    assert call.parse_error and call.arguments == {}
    assert call.raw_arguments == '{"q": "x", "'
    sent = follow_up["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert sent == call.raw_arguments


async def test_duplicated_chunks_do_not_duplicate_calls_or_usage() -> None:
    script = ListScript([Reply(text="Hi.", calls=(ScriptCall("lookup", {"q": "a"}),)), Reply("Ok")])
    async with FakeOpenAIServer(script, faults=["duplicate"]) as server:
        session = await open_session("openai/gpt-4o-mini", server.url, SETUP)
        await session.send_user_text("go")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
    calls = [e for e in events if e.type == "tool_call"]
    assert [(c.name, c.arguments) for c in calls] == [("lookup", {"q": "a"})]
    assert [e.type for e in events].count("usage") == 2
    assert "".join(e.text for e in events if e.type == "assistant_text") == "Hi.Ok"


async def test_history_with_tool_calls_is_rebuilt_as_valid_messages() -> None:
    history = [
        HistoryMessage(role="user", text="Book me in."),
        HistoryMessage(
            role="assistant",
            text="You're booked.",
            tool_calls=[
                HistoryToolCall(
                    call_id="call_7", name="lookup", arguments={"q": "b"}, result={"ok": True}
                )
            ],
        ),
    ]
    setup = SETUP.model_copy(update={"history": history})
    async with FakeOpenAIServer(ListScript([Reply(text="Sure.")])) as server:
        session = await open_session("openai/gpt-4o-mini", server.url, setup)
        await session.send_user_text("Thanks")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        messages = server.requests[0].json()["messages"]
    assert events[-1].status == "completed"  # the fake accepted the rebuilt sequence
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert messages[2]["tool_calls"][0]["id"] == messages[3]["tool_call_id"] == "call_7"
    assert messages[4]["content"] == "You're booked."


async def test_missing_key_is_a_prerequisite_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    async with FakeOpenAIServer(ListScript([])) as server:
        with pytest.raises(PrerequisiteError, match="OPENAI_API_KEY"):
            await open_session("openai/gpt-4o-mini", server.url, SETUP)
