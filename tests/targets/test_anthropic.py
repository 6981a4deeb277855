"""The Anthropic Messages adapter against the fake Anthropic server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.conformance.sdk_models import check_anthropic_response
from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.benchmark import ToolSpec
from voxbench.core.session import HistoryMessage, HistoryToolCall, SessionSetup
from voxbench.targets.anthropic import AnthropicSession
from voxbench.testing import FakeAnthropicServer, GoldenScript, ListScript, Reply, ScriptCall
from voxbench.testing.anthropic_http import signature_of

from .chat_fixtures import assert_all_passed, drain_turn, open_session, run_smoke, turns

SETUP = SessionSetup(
    system_prompt="Be brief.",
    tools=[
        ToolSpec(
            name="lookup",
            description="Look up.",
            parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        )
    ],
)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-000000000000")


async def test_golden_script_through_the_adapter_scores_every_check(tmp_path: Path) -> None:
    script = GoldenScript(load_benchmark("smoke"))
    async with FakeAnthropicServer(script, api_key="sk-ant-test-key-000000000000") as server:
        path = await run_smoke(tmp_path, "anthropic/claude-sonnet-4-5", server.url)
        first = server.requests[0]
    await assert_all_passed(path)
    assert first.headers["anthropic-version"] == "2023-06-01"
    body = first.json()
    assert body["system"].startswith("You are the voice assistant")
    assert body["tools"][0]["input_schema"]["type"] == "object"
    assert body["max_tokens"] == 1024
    assert all(r.usage["output_tokens"] > 0 for r in turns(path))


async def test_text_then_parallel_tool_use_blocks_and_results_in_one_user_message() -> None:
    script = ListScript(
        [
            Reply(
                text="Let me check.",
                calls=(ScriptCall("lookup", {"q": "a"}), ScriptCall("lookup", {"q": "b"})),
            ),
            Reply(text="Both done."),
        ]
    )
    async with FakeAnthropicServer(script) as server:
        session = await open_session("anthropic/claude-sonnet-4-5", server.url, SETUP)
        await session.send_user_text("check a and b")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        follow_up = server.requests[1].json()["messages"]
    calls = [e for e in events if e.type == "tool_call"]
    assert [c.arguments for c in calls] == [{"q": "a"}, {"q": "b"}]
    assert [m["role"] for m in follow_up] == ["user", "assistant", "user"]
    assert [b["type"] for b in follow_up[1]["content"]] == ["text", "tool_use", "tool_use"]
    results = follow_up[2]["content"]
    assert [b["tool_use_id"] for b in results] == [c.call_id for c in calls]
    assert events[-1].type == "turn_complete" and events[-1].status == "completed"


async def test_history_results_and_next_words_share_a_user_message() -> None:
    history = [
        HistoryMessage(role="user", text="Book it."),
        HistoryMessage(
            role="assistant",
            text="Booked.",
            tool_calls=[
                HistoryToolCall(call_id="call:1", name="lookup", arguments={"q": "x"}, result="ok")
            ],
        ),
    ]
    async with FakeAnthropicServer(ListScript([Reply(text="Sure.")])) as server:
        session = await open_session(
            "anthropic/claude-sonnet-4-5", server.url, SETUP.model_copy(update={"history": history})
        )
        await session.send_user_text("Thanks")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        messages = server.requests[0].json()["messages"]
    assert events[-1].status == "completed"
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"][0]["id"] == "call_1"  # made safe for Anthropic's id rules
    assert messages[2]["content"][0]["type"] == "tool_result"


async def test_an_error_event_mid_stream_is_a_retryable_server_error() -> None:
    body = (
        'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3}}}\n\n'
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text=body))
    session = AnthropicSession("m", base_url="http://127.0.0.1:9")
    await session.start(SETUP)
    session._client = httpx.AsyncClient(transport=transport)
    await session.send_user_text("hi")
    await session.end_user_turn()
    events = await drain_turn(session)
    await session.close()
    error = events[0]
    assert error.type == "target_error" and error.retryable and error.category == "server"
    assert "overloaded_error" in error.message


async def test_cumulative_usage_is_replaced_not_added() -> None:
    async with FakeAnthropicServer(
        ListScript([Reply(text="one two three")]), faults=["duplicate"]
    ) as server:
        session = await open_session("anthropic/claude-sonnet-4-5", server.url, SETUP)
        await session.send_user_text("count")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
    (usage,) = [e for e in events if e.type == "usage"]
    assert usage.output_tokens == 3


async def test_thinking_blocks_go_back_unchanged_with_the_tool_results() -> None:
    script = ListScript(
        [Reply(text="Checking.", calls=(ScriptCall("lookup", {"q": "a"}),)), Reply(text="Found.")]
    )
    thinking = {"type": "enabled", "budget_tokens": 1024}
    async with FakeAnthropicServer(script) as server:
        session = await open_session(
            "anthropic/claude-sonnet-4-5", server.url, SETUP, thinking=thinking, max_tokens=2048
        )
        await session.send_user_text("look up a")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        follow_up = server.requests[1].json()["messages"]
    # The fake answers 400 as the API does when the thinking block is missing or altered.
    assert events[-1].type == "turn_complete" and events[-1].status == "completed"
    assert "".join(e.text for e in events if e.type == "assistant_text") == "Checking.Found."
    assistant = follow_up[1]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use"]
    assert assistant[0]["signature"] == signature_of(assistant[0]["thinking"])
    assert assistant[0]["thinking"].startswith("The user needs")


async def test_redacted_thinking_goes_back_as_it_came() -> None:
    session = AnthropicSession("m", base_url="http://127.0.0.1:9")
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message",
         "role": "assistant", "model": "m", "content": [], "stop_reason": None,
         "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": '{"q": "a"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]  # fmt: skip
    for event in events:
        assert check_anthropic_response(event) == [], event
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text=body))
    await session.start(SETUP)
    session._client = httpx.AsyncClient(transport=transport)
    step = await session._parse_stream(
        await session.client.send(session.client.build_request("POST", "http://x"), stream=True),
        lambda event: None,
    )
    await session.close()
    assert step.native == [{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"temperature": 0.2}, "target_options.temperature"),
        ({"thinking": {"type": "enabled", "budget_tokens": 2048}}, "target_options.thinking.type"),
    ],
)
def test_options_the_model_refuses_fail_before_the_first_turn(options: dict, field: str) -> None:
    from voxbench.core.errors import ConfigError
    from voxbench.targets.registry import resolve_target

    factory = resolve_target("anthropic/claude-opus-4-7", options=options)
    with pytest.raises(ConfigError) as info:
        factory()
    assert info.value.field == field and info.value.exit_code == 2


def test_the_cli_refuses_thinking_with_a_forced_tool_choice_with_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli_invoke import invoke

    code, _, err = invoke(
        monkeypatch,
        capsys,
        "run",
        "smoke",
        "-t",
        "anthropic/claude-sonnet-4-5",
        "--base-url",
        "http://127.0.0.1:9",  # never reached: refused before the first turn
        "--runs-dir",
        str(tmp_path),
        "-o",
        'thinking={"type": "enabled", "budget_tokens": 2048}',
        "-o",
        'tool_choice={"type": "any"}',
        "-o",
        "max_tokens=4096",
    )
    assert code == 2
    assert "target_options.tool_choice" in err and "forces tool use" in err


@pytest.mark.wire_nonconforming  # sends what the model refuses, on purpose
async def test_the_strict_fake_refuses_what_the_api_refuses() -> None:
    async with FakeAnthropicServer(ListScript([Reply(text="hi")])) as server:
        session = AnthropicSession(
            "claude-opus-4-7", base_url=server.url, options={"temperature": 0.0}
        )
        await session.start(SETUP)
        await session.send_user_text("hi")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
    error = events[0]
    assert error.type == "target_error" and error.category == "bad_request"
    assert "`temperature` is deprecated for this model" in error.message
