"""The Gemini adapter against the fake Gemini server."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.benchmark import ToolSpec
from voxbench.core.errors import PrerequisiteError
from voxbench.core.session import HistoryMessage, HistoryToolCall, SessionSetup
from voxbench.targets.gemini import PLACEHOLDER_SIGNATURE
from voxbench.testing import FakeGeminiServer, GoldenScript, ListScript, Reply, ScriptCall

from .chat_fixtures import assert_all_passed, drain_turn, open_session, run_smoke

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
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-key-0000")


async def test_golden_script_through_the_adapter_scores_every_check(tmp_path: Path) -> None:
    script = GoldenScript(load_benchmark("smoke"))
    # A gemini-3 model name makes the fake insist on thought signatures, as the real API does.
    async with FakeGeminiServer(script, api_key="AIza-test-key-0000") as server:
        path = await run_smoke(tmp_path, "gemini/gemini-3-flash-preview", server.url)
        first = server.requests[0]
    await assert_all_passed(path)
    assert first.query == {"alt": "sse"}
    assert first.headers["x-goog-api-key"] == "AIza-test-key-0000"
    body = first.json()
    assert body["systemInstruction"]["parts"][0]["text"].startswith("You are the voice")
    assert body["tools"][0]["functionDeclarations"][0]["name"] == "register_for_session"


async def test_steps_keep_their_thought_signatures_and_call_ids() -> None:
    script = ListScript(
        [
            Reply(calls=(ScriptCall("lookup", {"q": "a"}), ScriptCall("lookup", {"q": "b"}))),
            Reply(text="Done."),
        ]
    )
    async with FakeGeminiServer(script) as server:
        session = await open_session("gemini/gemini-3-pro", server.url, SETUP)
        await session.send_user_text("go")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        contents = server.requests[1].json()["contents"]
    calls = [e for e in events if e.type == "tool_call"]
    assert [c.arguments for c in calls] == [{"q": "a"}, {"q": "b"}]
    model_parts = contents[1]["parts"]
    assert model_parts[0]["thoughtSignature"]  # echoed back verbatim
    responses = [p["functionResponse"] for p in contents[2]["parts"]]
    assert [r["id"] for r in responses] == [c.call_id for c in calls]
    assert responses[0]["response"] == {"status": "ok", "echo": "lookup"}
    assert events[-1].status == "completed"


async def test_rebuilt_history_carries_the_placeholder_signature() -> None:
    history = [
        HistoryMessage(role="user", text="Book."),
        HistoryMessage(
            role="assistant",
            text="Booked.",
            tool_calls=[HistoryToolCall(call_id="c1", name="lookup", arguments={}, result=["x"])],
        ),
    ]
    async with FakeGeminiServer(ListScript([Reply(text="Hi.")])) as server:
        session = await open_session(
            "gemini/gemini-3-pro", server.url, SETUP.model_copy(update={"history": history})
        )
        await session.send_user_text("Thanks")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        contents = server.requests[0].json()["contents"]
    assert events[-1].status == "completed"
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    assert contents[1]["parts"][0]["thoughtSignature"] == PLACEHOLDER_SIGNATURE
    assert contents[2]["parts"][0]["functionResponse"]["response"] == {"result": ["x"]}


async def test_a_bad_key_is_reported_as_an_authentication_error() -> None:
    async with FakeGeminiServer(ListScript([]), api_key="right") as server:
        session = await open_session("gemini/gemini-2.5-flash", server.url, SETUP)
        await session.send_user_text("hi")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
    assert events[0].category == "authentication" and not events[0].retryable
    assert "GEMINI_API_KEY" in events[0].message


async def test_google_api_key_is_accepted_and_missing_keys_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(PrerequisiteError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        await open_session("gemini/gemini-2.5-flash", "http://127.0.0.1:9", SETUP)
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-other")
    session = await open_session("gemini/gemini-2.5-flash", "http://127.0.0.1:9", SETUP)
    assert session.api_key == "AIza-other"
    await session.close()


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"temperature": 5}, "target_options.temperature"),
        ({"temperature": "hot"}, "target_options.temperature"),
        ({"top_p": 1.5}, "target_options.top_p"),
    ],
)
def test_sampling_options_outside_the_apis_range_are_refused_before_a_call(
    options: dict[str, object], field: str
) -> None:
    from voxbench.core.errors import ConfigError
    from voxbench.targets.registry import resolve_target

    with pytest.raises(ConfigError) as refused:
        resolve_target("gemini/gemini-2.5-flash", base_url="http://127.0.0.1:1", options=options)()
    assert refused.value.field == field


async def test_sampling_options_inside_the_range_reach_the_api() -> None:
    async with FakeGeminiServer(ListScript([Reply(text="ok")])) as server:
        session = await open_session(
            "gemini/gemini-2.5-flash", server.url, SETUP, temperature=2.0, top_p=0.5
        )
        await session.send_user_text("hi")
        await session.end_user_turn()
        await drain_turn(session)
        await session.close()
    assert server.requests[0].json()["generationConfig"] == {"temperature": 2.0, "topP": 0.5}
