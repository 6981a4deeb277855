"""Published exchanges, replayed through the adapters over their real transport.

Each fixture is the server side of an exchange a provider published (API reference
examples, docs, the official SDK's own test suite); ``source`` in the file says which.
Every message is first checked with the SDK's type model (so the fixture is one the real
service can send), then served on loopback to the adapter, and the events, transcript and
tool calls it derives are checked, with what the adapter sent back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from tests.conformance import sdk_models as sdk
from tests.conformance.replay import SSEReplay, WebsocketReplay, load_fixture, server_messages
from tests.targets.chat_fixtures import open_session
from voxbench.core.benchmark import ToolSpec
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    SessionEvent,
    ToolCallRequested,
    TurnComplete,
    Usage,
)
from voxbench.core.session import Session, SessionSetup
from voxbench.targets.realtime.gemini.session import GeminiLiveSession
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession

Check = Callable[[Mapping[str, Any]], list[str]]

CHECKS: dict[str, Check] = {
    "anthropic_tool_use": sdk.check_anthropic_response,
    "anthropic_thinking": sdk.check_anthropic_response,
    "openai_chat_tool_call": sdk.check_openai_chat_response,
    "openai_realtime_audio_and_call": sdk.check_openai_realtime_server,
    "gemini_live_call_audio_resume": sdk.check_gemini_live_server,
}
WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a place.",
    parameters={"type": "object", "properties": {"location": {"type": "string"}}},
)


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, "test-key-123456")


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_every_published_message_is_one_the_sdk_accepts(name: str) -> None:
    fixture = load_fixture(name)
    # Where the docs abbreviate a message, the fixture says so (and the SDK must disagree).
    allowed = fixture.get("sdk_deviations", {})
    deviating: set[str] = set()
    for message in server_messages(fixture):
        kind = message.get("type") or next(iter(message))
        problems = CHECKS[name](message)
        if kind in allowed and problems:
            deviating.add(kind)
            continue
        assert problems == [], (name, message)
    assert deviating == set(allowed), f"{name}: listed deviations the SDK does not find"


async def turn(session: Session, results: dict[str, Any] | None = None) -> list[SessionEvent]:
    """One user turn's events, answering each call with ``results[name]``."""
    out: list[SessionEvent] = []

    async def drain() -> None:
        async for event in session.events():
            out.append(event)
            if isinstance(event, ToolCallRequested) and results is not None:
                await session.send_tool_result(event.call_id, results[event.name])
            if isinstance(event, TurnComplete):
                return

    await asyncio.wait_for(drain(), 10)
    return out


def said(events: list[SessionEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, AssistantTextDelta))


def calls(events: list[SessionEvent]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(e.call_id, e.name, e.arguments) for e in events if isinstance(e, ToolCallRequested)]


async def test_anthropic_recorded_tool_use_stream() -> None:
    fixture = load_fixture("anthropic_tool_use")
    async with SSEReplay(fixture["responses"], "anthropic") as server:
        setup = SessionSetup(system_prompt="x", tools=[WEATHER])
        session = await open_session("anthropic/claude-sonnet-4-20250514", server.origin, setup)
        await session.send_user_text("What's the weather in Paris?")
        await session.end_user_turn()
        events = await turn(session, {"get_weather": {"temp_c": 18}})
        await session.close()
    assert calls(events) == [
        ("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"})
    ]
    assert said(events) == "I'll check the current weather in Paris for you.Hello there!"
    assert events[-1].status == "completed"
    # The second request answers the call: its tool_result first in the user message.
    answer = server.requests[1]["messages"][-1]
    assert answer["role"] == "user"
    assert answer["content"][0]["type"] == "tool_result"
    assert answer["content"][0]["tool_use_id"] == "toolu_01NRLabsLyVHZPKxbKvkfSMn"
    usage = [e for e in events if isinstance(e, Usage)]
    assert sum(u.input_tokens for u in usage) == 377 + 11


async def test_anthropic_documented_thinking_stream() -> None:
    fixture = load_fixture("anthropic_thinking")
    async with SSEReplay(fixture["responses"], "anthropic") as server:
        session = await open_session(
            "anthropic/claude-sonnet-4-5",
            server.origin,
            SessionSetup(system_prompt="x"),
            thinking={"type": "enabled", "budget_tokens": 16000},
            max_tokens=20000,  # above the budget, as the API requires
        )
        await session.send_user_text("What is 27 * 453?")
        await session.end_user_turn()
        events = await turn(session)
        await session.close()
    # The thinking is never taken for the spoken answer.
    assert said(events) == "27 * 453 = 12,231"
    assert events[-1].status == "completed"
    assert server.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 16000}


async def test_openai_chat_documented_streamed_tool_call() -> None:
    fixture = load_fixture("openai_chat_tool_call")
    async with SSEReplay(fixture["responses"], "openai") as server:
        setup = SessionSetup(system_prompt="x", tools=[WEATHER])
        session = await open_session("openai/gpt-4o-mini", server.origin + "/v1", setup)
        await session.send_user_text("What's the weather like in Paris today?")
        await session.end_user_turn()
        events = await turn(session, {"get_weather": {"temp_c": 18}})
        await session.close()
    # Pieces with "id": null and "type": null belong to the call at the same index.
    assert calls(events) == [
        ("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", {"location": "Paris, France"})
    ]
    assert said(events) == "Hello" and events[-1].status == "completed"
    follow_up = server.requests[1]["messages"]
    assert follow_up[-2]["tool_calls"][0]["id"] == "call_DdmO9pD3xa9XTPNJ32zg2hcA"
    assert follow_up[-1] == {
        "role": "tool",
        "tool_call_id": "call_DdmO9pD3xa9XTPNJ32zg2hcA",
        "content": '{"temp_c": 18}',
    }


async def test_openai_realtime_reference_examples_audio_then_function_call() -> None:
    fixture = load_fixture("openai_realtime_audio_and_call")
    async with WebsocketReplay(fixture["steps"]) as server:
        session = OpenAIRealtimeSession("gpt-realtime", base_url=server.url + "/v1")
        await session.start(SessionSetup(system_prompt="x", tools=[WEATHER]))
        await session.send_user_text("Hello?")
        await session.end_user_turn()
        first = await turn(session)
        await session.send_user_text("And the weather in San Francisco?")
        await session.end_user_turn()
        second: list[SessionEvent] = []
        async for event in session.events():
            second.append(event)
            if isinstance(event, ToolCallRequested):
                await session.send_tool_result(event.call_id, {"temp_c": 17})
                break
        await asyncio.sleep(0.05)  # let the answer to the call reach the server
        await session.close()
    assert server.done
    assert said(first) == "Hello, how can I a"
    audio = [e for e in first if isinstance(e, AssistantAudio)]
    assert [(a.pcm, a.sample_rate) for a in audio] == [(b"\x00\x01\x00\x02\x00\x03", 24000)]
    assert isinstance(first[-1], TurnComplete) and first[-1].status == "completed"
    assert calls(second) == [("call_001", "get_weather", {"location": "San Francisco"})]
    output = [m for m in server.received if m.get("type") == "conversation.item.create"][-1]
    assert output["item"]["type"] == "function_call_output"
    assert output["item"]["call_id"] == "call_001"
    assert server.received[-1]["type"] == "response.create"


async def test_gemini_live_sdk_messages_call_audio_handle_and_go_away() -> None:
    fixture = load_fixture("gemini_live_call_audio_resume")
    async with WebsocketReplay(fixture["steps"]) as server:
        session = GeminiLiveSession("gemini-3.1-flash-live-preview", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x", tools=[WEATHER]))
        await session.send_user_text("Weather in San Francisco?")
        await session.end_user_turn()
        events = await turn(session, {"get_current_weather": {"temp_c": 17}})
        for _ in range(100):  # the goAway reconnect happens after the turn, by itself
            if server.done and session.connections == 2:
                break
            await asyncio.sleep(0.02)
        await session.close()
    assert server.done and server.connections == 2
    (call,) = calls(events)
    assert call[1:] == ("get_current_weather", {"location": "San Francisco", "unit": "C"})
    audio = [e for e in events if isinstance(e, AssistantAudio)]
    # "audio/pcm" without a rate: the Live API's output rate, 24 kHz.
    assert [(a.pcm, a.sample_rate) for a in audio] == [(b"000000", 24000)]
    assert said(events) == "test_output"
    assert isinstance(events[-1], TurnComplete) and events[-1].status == "completed"
    # The call came without an id: the answer names the function and invents no id.
    (response,) = [m["toolResponse"] for m in server.received if "toolResponse" in m]
    assert response["functionResponses"] == [
        {"name": "get_current_weather", "response": {"temp_c": 17}}
    ]
    # "resumable": "true" (a string, as the SDK's test sends it) is a resumable handle,
    # and the goAway that follows moves the session to a connection that resumes it.
    setups = [m["setup"] for m in server.received if "setup" in m]
    assert setups[1]["sessionResumption"] == {"handle": "test_handle"}
    assert session.resume_handle() == "test_handle"
