"""Every documented stop / finish value decides the turn's status; an unknown one never passes."""

from __future__ import annotations

import pytest

from voxbench.core.events import TargetError, TurnComplete
from voxbench.core.session import SessionSetup
from voxbench.targets import stop_reasons
from voxbench.testing import (
    FakeAnthropicServer,
    FakeBedrockServer,
    FakeGeminiServer,
    FakeOpenAIServer,
    ListScript,
    Reply,
)

from .chat_fixtures import drain_turn, open_session

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
