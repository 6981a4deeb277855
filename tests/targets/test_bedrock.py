"""The Bedrock Converse adapter, through real botocore, against the fake Bedrock endpoint."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import pytest

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.errors import PrerequisiteError
from voxbench.core.session import HistoryMessage, HistoryToolCall, SessionSetup
from voxbench.targets.bedrock import render_messages
from voxbench.targets.text_history import messages_from_history
from voxbench.testing import FakeBedrockServer, GoldenScript, ListScript, Reply, ScriptCall
from voxbench.testing.bedrock_http import encode_event
from voxbench.testing.http_server import count_tokens

from .chat_fixtures import (
    assert_all_passed,
    drain_turn,
    open_session,
    run_smoke,
    runner_events,
    turns,
)

pytest.importorskip("botocore")

TARGET = "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0"
SETUP = SessionSetup(system_prompt="Be brief.")


@pytest.fixture(autouse=True)
def _aws(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "BEDROCK_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


async def test_golden_script_through_botocore_scores_every_check(tmp_path: Path) -> None:
    script = GoldenScript(load_benchmark("smoke"))
    async with FakeBedrockServer(script, cache_min_tokens=1) as server:
        path = await run_smoke(tmp_path, TARGET, server.url)
        first = server.requests[0]
    await assert_all_passed(path)
    assert first.path == "/model/anthropic.claude-3-5-haiku-20241022-v1:0/converse-stream"
    body = first.json()
    assert body["system"] == [
        {"text": load_benchmark("smoke").render_system_prompt()},
        {"cachePoint": {"type": "default"}},
    ]
    assert body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]["type"] == "object"
    records = turns(path)
    # Turn 0 (one request) writes the tools + system prefix to the cache: Bedrock reports
    # those tokens apart from inputTokens, and the turn counts all of them.
    assert records[0].usage["input_tokens"] == count_tokens(json.dumps(body))
    assert records[0].usage["cached_input_tokens"] == 0
    assert all(r.usage["cached_input_tokens"] > 0 for r in records[1:])


@pytest.mark.parametrize(("fault", "category"), [("429@2", "rate_limit"), ("500@2", "server")])
async def test_throttling_and_server_errors_are_retried(
    tmp_path: Path, fault: str, category: str
) -> None:
    async with FakeBedrockServer(GoldenScript(load_benchmark("smoke")), faults=[fault]) as server:
        path = await run_smoke(tmp_path, TARGET, server.url)
    (retry,) = runner_events(path, "turn_retry")
    assert retry.reason.startswith(category)
    assert [r.status for r in turns(path)] == ["ok"] * 10


async def test_a_dropped_stream_and_a_hang_are_retried(tmp_path: Path) -> None:
    script = GoldenScript(load_benchmark("smoke"))
    async with FakeBedrockServer(script, faults=["drop@3", "hang@5"]) as server:
        path = await run_smoke(tmp_path, TARGET, server.url, turn_timeout=2.0)
    records = turns(path)
    assert [r.turn for r in records] == [str(i) for i in range(10)]
    dropped, hung = runner_events(path, "turn_retry")
    assert dropped.reason.startswith("connectivity") and dropped.reconnect
    assert hung.reason.startswith("timeout") and hung.reconnect
    assert [e.turn for e in runner_events(path, "turn_timeout")] == [hung.turn]
    assert all(r.status == "ok" for r in records)


async def test_parallel_tool_use_and_duplicated_events() -> None:
    script = ListScript(
        [
            Reply(text="On it.", calls=(ScriptCall("a", {"x": 1}), ScriptCall("b", {}))),
            Reply("Done."),
        ]
    )
    async with FakeBedrockServer(script, faults=["duplicate"]) as server:
        session = await open_session(TARGET, server.url, SETUP)
        await session.send_user_text("go")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        follow_up = server.requests[1].json()["messages"]
    assert [(e.name, e.arguments) for e in events if e.type == "tool_call"] == [
        ("a", {"x": 1}),
        ("b", {}),
    ]
    assert [e.type for e in events].count("usage") == 2
    assert [m["role"] for m in follow_up] == ["user", "assistant", "user"]
    results = [b["toolResult"] for b in follow_up[2]["content"]]
    assert results[0]["content"] == [{"json": {"status": "ok", "echo": "a"}}]
    assert events[-1].status == "completed"


def test_history_maps_to_alternating_converse_messages() -> None:
    history = [
        HistoryMessage(role="user", text="Book."),
        HistoryMessage(
            role="assistant",
            text="Booked.",
            tool_calls=[
                HistoryToolCall(
                    call_id="call.1", name="book", arguments={"id": 1}, result={"status": "error"}
                )
            ],
        ),
        HistoryMessage(role="user", text="Thanks"),
    ]
    messages = render_messages(messages_from_history(history))
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"][0]["toolUse"] == {
        "toolUseId": "call_1",
        "name": "book",
        "input": {"id": 1},
    }
    assert messages[2]["content"][0]["toolResult"]["status"] == "error"


def test_event_stream_frames_decode_with_botocore() -> None:
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(encode_event("messageStop", {"stopReason": "end_turn"}))
    (message,) = list(buffer)
    assert message.headers[":event-type"] == "messageStop"
    assert message.payload == b'{"stopReason": "end_turn"}'


async def test_missing_credentials_and_missing_botocore_are_prerequisite_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(PrerequisiteError, match="AWS_ACCESS_KEY_ID"):
        await open_session(TARGET, "http://127.0.0.1:9", SETUP)
    real_import = builtins.__import__

    def no_botocore(name: str, *args: object, **kwargs: object):  # noqa: ANN202
        if name.startswith("botocore"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_botocore)
    with pytest.raises(PrerequisiteError, match=r"pip install 'voxbench\[bedrock\]'"):
        await open_session(TARGET, "http://127.0.0.1:9", SETUP)


@pytest.mark.parametrize(
    ("model", "with_status"),
    [
        ("anthropic.claude-3-5-haiku-20241022-v1:0", True),
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", True),
        ("amazon.nova-pro-v1:0", True),
        ("meta.llama3-1-70b-instruct-v1:0", False),
        ("mistral.mistral-large-2407-v1:0", False),
    ],
)
async def test_tool_result_status_only_where_the_family_takes_it(
    model: str, with_status: bool
) -> None:
    script = ListScript([Reply(calls=(ScriptCall("lookup", {"q": "a"}),)), Reply(text="Done.")])
    async with FakeBedrockServer(script) as server:  # strict: 400 on status where refused
        session = await open_session(f"bedrock/{model}", server.url, SETUP)
        await session.send_user_text("look it up")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        result = server.requests[1].json()["messages"][2]["content"][0]["toolResult"]
    assert events[-1].type == "turn_complete" and events[-1].status == "completed"
    assert ("status" in result) is with_status


def test_a_claude_model_s_refused_sampling_option_fails_before_the_first_turn() -> None:
    from voxbench.core.errors import ConfigError
    from voxbench.targets.registry import resolve_target

    refused = resolve_target("bedrock/us.anthropic.claude-opus-4-7-v1:0", options={"top_p": 0.9})
    with pytest.raises(ConfigError, match="deprecated") as info:
        refused()
    assert info.value.field == "target_options.top_p" and info.value.exit_code == 2
    # Another family's sampling options are its own business.
    resolve_target("bedrock/amazon.nova-pro-v1:0", options={"temperature": 0.2})()
