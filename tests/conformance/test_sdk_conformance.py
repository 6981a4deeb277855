"""The SDK conformance check: it catches what our own reading would miss, and it runs.

``tests/conftest.py`` installs ``WireConformance`` around every test; these tests show that
the checks find an unknown field, a wrong nesting and a wrong enum value for each protocol,
and that a tool-call conversation through each adapter and its fake is checked both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from tests.conformance import bedrock_model
from tests.conformance import sdk_models as sdk
from tests.conformance.wire import WireConformance
from tests.targets.chat_fixtures import drain_turn, open_session
from voxbench.core.benchmark import ToolSpec
from voxbench.core.session import SessionSetup
from voxbench.testing import (
    FakeAnthropicServer,
    FakeBedrockServer,
    FakeGeminiServer,
    FakeOpenAIServer,
    ListScript,
    Reply,
    ScriptCall,
)
from voxbench.testing.gemini_live import FakeGeminiLiveServer
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer

Check = Callable[[Mapping[str, Any]], list[str]]

# (check, a conforming message, the same with an unknown field, wrong nesting, wrong enum)
CASES: dict[str, tuple[Check, dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "openai-realtime client": (
        sdk.check_openai_realtime_client,
        {"type": "session.update", "session": {"type": "realtime", "instructions": "x"}},
        {"type": "session.update", "session": {"type": "realtime", "voice": "alloy"}},
        {"type": "session.update", "session": {"type": "realtime", "audio": {"voice": "alloy"}}},
        {"type": "session.update", "session": {"type": "realtime", "output_modalities": ["x"]}},
    ),
    "openai-realtime server": (
        sdk.check_openai_realtime_server,
        {
            "type": "response.output_audio.delta",
            "event_id": "e",
            "response_id": "r",
            "item_id": "i",
            "output_index": 0,
            "content_index": 0,
            "delta": "",
        },
        {"type": "input_audio_buffer.cleared", "event_id": "e", "status": "in_progress"},
        {"type": "response.done", "event_id": "e", "response": {"output": {"type": "message"}}},
        {"type": "response.done", "event_id": "e", "response": {"status": "interrupted"}},
    ),  # fmt: skip
    "openai-chat request": (
        sdk.check_openai_chat_request,
        {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        {"model": "m", "messages": [{"role": "user", "content": "hi", "thinking": "x"}]},
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "f"}]},
        {"model": "m", "messages": [{"role": "narrator", "content": "hi"}]},
    ),
    "openai speech request": (
        sdk.check_openai_speech_request,
        {"model": "tts-1", "input": "hi", "voice": "alloy", "response_format": "pcm"},
        {"model": "tts-1", "input": "hi", "voice": "alloy", "sample_rate": 24000},
        {"model": "tts-1", "input": {"text": "hi"}, "voice": "alloy"},
        {"model": "tts-1", "input": "hi", "voice": "alloy", "response_format": "ogg"},
    ),
    "anthropic request": (
        sdk.check_anthropic_request,
        {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
        {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "n": 1},
        {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": {"text": "x"}}]},
        {"model": "m", "max_tokens": 5, "messages": [{"role": "narrator", "content": "hi"}]},
    ),
    "anthropic response": (
        sdk.check_anthropic_response,
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1},
        },
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "why": 1},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_delta", "stop_reason": "end_turn", "usage": {"output_tokens": 1}},
        {"type": "message_delta", "delta": {"stop_reason": "done"}, "usage": {"output_tokens": 1}},
    ),  # fmt: skip
    "gemini-live client": (
        sdk.check_gemini_live_client,
        {"realtimeInput": {"text": "hi"}},
        {"realtimeInput": {"text": "hi", "turnComplete": True}},
        {"setup": {"model": "m", "responseModalities": ["AUDIO"]}},
        {"setup": {"model": "m", "generationConfig": {"responseModalities": ["SMELL"]}}},
    ),
    "gemini-live server": (
        sdk.check_gemini_live_server,
        {"serverContent": {"turnComplete": True}},
        {"serverContent": {"turnComplete": True, "final": True}},
        {"turnComplete": True},
        {"serverContent": {"turnCompleteReason": "BORED"}},
    ),
    "gemini request": (
        sdk.check_gemini_generate_request,
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "stream": True},
        {"contents": [{"role": "user", "text": "hi"}]},
        {"contents": [], "generationConfig": {"responseModalities": ["SMELL"]}},
    ),
    "gemini response": (
        sdk.check_gemini_generate_response,
        {"candidates": [{"finishReason": "STOP"}]},
        {"candidates": [{"finishReason": "STOP", "done": True}]},
        {"candidates": {"finishReason": "STOP"}},
        {"candidates": [{"finishReason": "FINISHED"}]},
    ),
    "bedrock stream event": (
        lambda body: bedrock_model.check_stream_event("messageStop", body),
        {"stopReason": "end_turn"},
        {"stopReason": "end_turn", "status": "ok"},
        {"messageStop": {"stopReason": "end_turn"}},
        {"stopReason": "finished"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_check_finds_unknown_fields_wrong_nesting_and_wrong_enums(name: str) -> None:
    check, good, unknown, nested, enum = CASES[name]
    assert check(good) == []
    for bad in (unknown, nested, enum):
        assert check(bad), f"{name} accepted {bad}"


def test_anthropic_requests_are_checked_whole_sampling_fields_included() -> None:
    base = {"max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    assert (
        sdk.check_anthropic_request({"model": "claude-sonnet-4-5", **base, "temperature": 0}) == []
    )
    for model in ("claude-opus-4-7", "claude-fable-5", "claude-sonnet-5"):
        problems = sdk.check_anthropic_request({"model": model, **base, "temperature": 0.0})
        assert problems and "deprecated" in problems[0], model
    assert sdk.check_anthropic_request({"model": "claude-sonnet-4-5", **base, "top_k": "5"})
    thinking = {"type": "enabled", "budget_tokens": 512}
    assert sdk.check_anthropic_request({"model": "claude-sonnet-4-5", **base, "thinking": thinking})


def test_realtime_server_events_are_checked_whole_known_gaps_excused_by_shape() -> None:
    session = {"type": "realtime", "object": "realtime.session", "id": "sess_1"}
    updated = {"type": "session.updated", "event_id": "e1", "session": session}
    assert sdk.check_openai_realtime_server(updated) == []
    # A documented gap excuses the field only in the reference's shape; the rest is checked.
    wrong = {**updated, "session": {**session, "object": "realtime.conversation"}}
    assert sdk.check_openai_realtime_server(wrong) == ["unknown field session.object"]
    mode = {**updated, "session": {**session, "output_modalities": ["video"]}}
    assert sdk.check_openai_realtime_server(mode)
    partial = {
        "type": "conversation.item.input_audio_transcription.completed",
        "event_id": "e2",
        "item_id": "i",
        "content_index": 0,
        "transcript": "hi",
        "status": "in_progress",
    }
    assert sdk.check_xai_realtime_server(partial) == []
    assert sdk.check_xai_realtime_server({**partial, "content_index": "zero"})
    assert sdk.check_xai_realtime_server({**partial, "status": "done"})


def test_xai_client_sessions_are_checked_against_xais_documented_parameters() -> None:
    documented = {"voice": "Ara", "instructions": "x", "turn_detection": {"type": None}}
    update = {"type": "session.update", "session": documented}
    assert sdk.check_xai_realtime_client(update) == []
    transcription = {"audio": {"input": {"transcription": {"model": "gpt-4o-mini-transcribe"}}}}
    assert sdk.check_xai_realtime_client({**update, "session": documented | transcription}) == [
        "undocumented field session.audio.input.transcription"
    ]
    assert sdk.check_xai_realtime_client({**update, "session": {"type": "realtime"}})


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
PROVIDERS = {
    "openai": ("openai/gpt-4o-mini", FakeOpenAIServer, "openai-chat"),
    "anthropic": ("anthropic/claude-sonnet-4-5", FakeAnthropicServer, "anthropic"),
    "gemini": ("gemini/gemini-2.5-flash", FakeGeminiServer, "gemini"),
    "bedrock": ("bedrock/anthropic.claude-3-haiku", FakeBedrockServer, "bedrock"),
    "openai-realtime": (
        "openai-realtime/gpt-realtime",
        FakeOpenAIRealtimeServer,
        "openai-realtime",
    ),
    "gemini-live": ("gemini-live/gemini-2.5-flash-live", FakeGeminiLiveServer, "gemini-live"),
}


@pytest.fixture
def provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, "test-key-123456")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_a_tool_call_conversation_is_checked_both_ways(
    provider: str, provider_keys: None, sdk_conformance: WireConformance
) -> None:
    target, fake, protocol = PROVIDERS[provider]
    script = ListScript(
        [Reply(text="Let me check.", calls=(ScriptCall("lookup", {"q": "a"}),)), Reply("Done.")]
    )
    async with fake(script) as server:
        session = await open_session(target, server.url, SETUP)
        await session.send_user_text("look it up")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
    assert [e.type for e in events if e.type in ("tool_call", "turn_complete")] == [
        "tool_call",
        "turn_complete",
    ]
    directions = {key for key, count in sdk_conformance.checked.items() if count}
    assert {d for d in directions if d.startswith(protocol + " ")} >= {
        f"{protocol} {d}"
        for d in (("client", "server") if "realtime" in target or "live" in target else
                  ("request",))
    }  # fmt: skip
    assert any(
        d.startswith(protocol) and d.split(" ", 1)[1] in ("server", "response", "stream event")
        for d in directions
    )
    assert sdk_conformance.violations == []


@pytest.mark.parametrize("benchmark", ["smoke", "conference"])
def test_built_in_tool_schemas_are_what_every_provider_accepts(benchmark: str) -> None:
    """Unquoted YAML flow mappings once split a description at its comma into a bogus key."""
    from google.genai import types

    from voxbench.benchmarks.loader import load_benchmark

    for tool in load_benchmark(benchmark).tools:
        assert sdk.validate(sdk._adapter(types.Schema), tool.parameters, json=True) == [], tool.name


def test_gemini_live_setup_gap_realtime_input_config_is_validated_not_dropped() -> None:
    # LiveClientSetup lacks realtimeInputConfig (a documented SDK gap): it is checked
    # against the SDK's own RealtimeInputConfig instead of being left out.
    manual = {"automaticActivityDetection": {"disabled": True}}
    setup = {"model": "models/gemini-3.1-flash-live-preview", "realtimeInputConfig": manual}
    assert sdk.check_gemini_live_client({"setup": setup}) == []
    wrong = {**setup, "realtimeInputConfig": {"automaticActivityDetection": {"off": True}}}
    assert sdk.check_gemini_live_client({"setup": wrong}) == [
        "setup.realtimeInputConfig.automaticActivityDetection.off: Extra inputs are not permitted"
    ]
