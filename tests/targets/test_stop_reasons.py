"""Every documented stop / finish value decides the turn's status; an unknown one never passes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from voxbench.core.benchmark import ToolSpec
from voxbench.core.events import TargetError, ToolCallRequested, TurnComplete
from voxbench.core.session import SessionSetup
from voxbench.targets import stop_reasons
from voxbench.testing import (
    FakeAnthropicServer,
    FakeBedrockServer,
    FakeGeminiServer,
    FakeOpenAIServer,
    ListScript,
    Reply,
    ScriptCall,
)
from voxbench.testing.scripts import Script, ScriptMessage

from .chat_fixtures import drain_turn, open_session, run_smoke, runner_events, turns

PROVIDERS = {
    "bedrock": ("bedrock/anthropic.claude-3-haiku", FakeBedrockServer, stop_reasons.BEDROCK),
    "gemini": ("gemini/gemini-2.5-flash", FakeGeminiServer, stop_reasons.GEMINI),
    "anthropic": ("anthropic/claude-sonnet-4-5", FakeAnthropicServer, stop_reasons.ANTHROPIC),
    "openai": ("openai/gpt-4o-mini", FakeOpenAIServer, stop_reasons.OPENAI),
}
# Gemini's MALFORMED_FUNCTION_CALL fails the step before the table (retried, tested apart).
CASES = [
    (provider, value)
    for provider, (_, _, table) in PROVIDERS.items()
    for value in table
    if value != "MALFORMED_FUNCTION_CALL"
]


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, "test-key-123456")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


async def _ending(provider: str, stop_reason: str) -> tuple[TurnComplete, list[TargetError]]:
    target, fake, _ = PROVIDERS[provider]
    async with fake(ListScript([Reply(text="Partial answer", stop_reason=stop_reason)])) as server:
        session = await open_session(target, server.url, SessionSetup(system_prompt="x"))
        await session.send_user_text("hi")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
    assert isinstance(events[-1], TurnComplete)
    return events[-1], [e for e in events if isinstance(e, TargetError)]


@pytest.mark.parametrize(("provider", "value"), CASES)
async def test_each_documented_value_has_its_status(provider: str, value: str) -> None:
    ending, errors = await _ending(provider, value)
    expected = PROVIDERS[provider][2][value]
    assert (ending.status, ending.stop_reason) == (expected.status, value)
    assert [e.category for e in errors] == ([expected.category] if expected.category else [])


@pytest.mark.parametrize(
    ("provider", "value"),
    [
        ("bedrock", "content_filtered"),
        ("bedrock", "malformed_tool_use"),
        ("bedrock", "malformed_model_output"),
        ("bedrock", "model_context_window_exceeded"),
        ("gemini", "RECITATION"),
        ("gemini", "PROHIBITED_CONTENT"),
        ("gemini", "BLOCKLIST"),
        ("gemini", "SPII"),
    ],
)
async def test_filtered_or_broken_responses_are_not_completed(provider: str, value: str) -> None:
    ending, errors = await _ending(provider, value)
    assert ending.status != "completed" and errors and value in errors[0].message


@pytest.mark.wire_nonconforming  # the fake reports a value no provider documents, on purpose
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_an_unknown_value_is_recorded_as_it_came_and_never_succeeds(provider: str) -> None:
    ending, errors = await _ending(provider, "NEW_REASON_2027")
    assert (ending.status, ending.stop_reason) == ("incomplete", "NEW_REASON_2027")
    assert [e.category for e in errors] == ["protocol"]
    assert "undocumented stop reason 'NEW_REASON_2027'" in errors[0].message


TOOL_SETUP = SessionSetup(
    system_prompt="x",
    tools=[
        ToolSpec(
            name="cancel_order",
            description="Cancel an order.",
            parameters={"type": "object", "properties": {"id": {"type": "string"}}},
        )
    ],
)


@pytest.mark.parametrize(
    ("provider", "value", "status"),
    [
        ("anthropic", "max_tokens", "incomplete"),
        ("anthropic", "refusal", "failed"),
        ("openai", "length", "incomplete"),
        ("openai", "content_filter", "failed"),
        ("bedrock", "max_tokens", "incomplete"),
        ("gemini", "MAX_TOKENS", "incomplete"),
    ],
)
async def test_tool_calls_of_a_step_that_stopped_badly_are_never_executed(
    provider: str, value: str, status: str
) -> None:
    target, fake, _ = PROVIDERS[provider]
    script = ListScript(
        [
            Reply(text="Cancelling", calls=(ScriptCall("cancel_order", {"id": "A1"}),),
                  stop_reason=value),
            Reply(text="Which order?"),
        ]
    )  # fmt: skip
    async with fake(script) as server:
        session = await open_session(target, server.url, TOOL_SETUP)
        await session.send_user_text("cancel my order")
        await session.end_user_turn()
        events = await drain_turn(session)
        # The next turn's request is valid: no call is left without its result.
        await session.send_user_text("the last one")
        await session.end_user_turn()
        after = await drain_turn(session)
        await session.close()
    assert not [e for e in events if isinstance(e, ToolCallRequested)]
    ending = events[-1]
    assert isinstance(ending, TurnComplete)
    assert (ending.status, ending.stop_reason) == (status, value)
    errors = [e for e in events if isinstance(e, TargetError)]
    assert len(errors) == 1 and not errors[0].retryable
    assert value in errors[0].message and "cancel_order was not executed" in errors[0].message
    assert isinstance(after[-1], TurnComplete) and after[-1].status == "completed"


class _TruncatedRegistration(Script):
    """Turn 1 asks for a registration in a step cut short; everything else is a short answer."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        if "register me" in conversation[-1].text:
            call = ScriptCall("register_for_session", {"name": "Priya Raman"})
            return Reply(text="Registering", calls=(call,), stop_reason="max_tokens")
        return Reply(text="Noted.")


async def test_a_truncated_step_is_recorded_as_an_error_turn_without_its_call(
    tmp_path: Path,
) -> None:
    async with FakeAnthropicServer(_TruncatedRegistration()) as server:
        path = await run_smoke(tmp_path, "anthropic/claude-sonnet-4-5", server.url)
    record = turns(path)[1]
    assert record.status == "error" and record.tool_calls == []
    assert any("'max_tokens'" in e and "register_for_session" in e for e in record.errors)
    assert record.state_after == turns(path)[0].state_after  # nothing was registered
    ended = [e for e in runner_events(path, "turn_complete") if e.turn == "1"]
    assert [e.stop_reason for e in ended] == ["max_tokens"]


def test_the_tables_list_every_value_the_official_sdks_know() -> None:
    import typing

    import botocore.session
    from anthropic.types import StopReason
    from google.genai import types
    from openai.types.chat.chat_completion import Choice

    bedrock = botocore.session.get_session().get_service_model("bedrock-runtime")
    assert set(stop_reasons.BEDROCK) == set(bedrock.shape_for("StopReason").enum)
    assert set(stop_reasons.GEMINI) == {v.value for v in types.FinishReason}
    assert set(stop_reasons.ANTHROPIC) == set(typing.get_args(StopReason))
    openai_values = typing.get_args(Choice.model_fields["finish_reason"].annotation)
    assert set(stop_reasons.OPENAI) == set(openai_values)
