"""Judge clients from the provider registry: names, keys, request shapes, each provider's fake."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from voxbench.core.errors import ConfigError, PrerequisiteError, ProviderError
from voxbench.judging.llm_judge import make_judge_client
from voxbench.judging.prompt import reply_schema
from voxbench.judging.run import JudgeOptions, judge_run
from voxbench.providers.completion import CompletionRequest
from voxbench.providers.gemini import gemini_schema
from voxbench.testing import FakeAnthropicServer, FakeGeminiServer, FakeOpenAIServer

from .scripted import JudgeScript, scripted_run

REQUEST = CompletionRequest(
    system="rules", user="data", schema=reply_schema(), schema_name="turn_judgment"
)
VERDICT = {"verdicts": [], "missing_call_cause": None, "missing_call_reasoning": ""}


def test_judges_are_named_like_every_other_component() -> None:
    with pytest.raises(ConfigError, match="unknown judge provider 'claude-opus'"):
        make_judge_client("claude-opus:latest")
    with pytest.raises(ConfigError, match="provider/model"):
        make_judge_client("claude-opus")


@pytest.mark.parametrize(
    ("name", "var"),
    [
        ("anthropic/claude-x", "ANTHROPIC_API_KEY"),
        ("openai/gpt-x", "OPENAI_API_KEY"),
        ("gemini/gemini-x", "GEMINI_API_KEY or GOOGLE_API_KEY"),
    ],
)
def test_a_missing_key_names_its_variable(name: str, var: str) -> None:
    with pytest.raises(PrerequisiteError, match=var):
        make_judge_client(name)


def test_openai_compatible_needs_a_base_url() -> None:
    with pytest.raises(ConfigError, match="--judge-base-url"):
        make_judge_client("openai-compatible/local-model")


async def test_openai_request_shape_and_json_object_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef0123")
    bodies: list[dict] = []

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        assert request.headers["authorization"] == "Bearer sk-test-0123456789abcdef0123"
        if body["response_format"]["type"] == "json_schema":
            return httpx.Response(
                400, json={"error": {"message": "Invalid parameter: 'response_format' json_schema"}}
            )
        message = {"role": "assistant", "content": json.dumps(VERDICT)}
        return httpx.Response(
            200, json={"choices": [{"message": message}], "usage": {"prompt_tokens": 7}}
        )

    client = make_judge_client("openai/gpt-x", transport=httpx.MockTransport(handle))
    reply = await client.complete(REQUEST)
    await client.complete(REQUEST)
    await client.aclose()
    assert json.loads(reply.text) == VERDICT and reply.usage["input_tokens"] == 7
    first = bodies[0]
    assert first["temperature"] == 0 and first["model"] == "gpt-x"
    assert first["messages"] == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "data"},
    ]
    schema = first["response_format"]["json_schema"]
    assert schema["strict"] is True and schema["schema"] == reply_schema()
    # One rejected request, then json_object for the rest of the run.
    assert [b["response_format"]["type"] for b in bodies] == [
        "json_schema",
        "json_object",
        "json_object",
    ]


@pytest.mark.parametrize(
    ("status", "category", "retryable"),
    [(401, "authentication", False), (429, "rate_limit", True), (503, "server", True)],
)
async def test_http_errors_are_classified(status: int, category: str, retryable: bool) -> None:
    transport = httpx.MockTransport(
        lambda r: httpx.Response(
            status, json={"error": {"message": "nope"}}, headers={"retry-after": "2"}
        )
    )
    client = make_judge_client(
        "openai-compatible/m", base_url="http://127.0.0.1:9/v1", transport=transport
    )
    with pytest.raises(ProviderError) as info:
        await client.complete(REQUEST)
    await client.aclose()
    assert (info.value.category, info.value.retryable) == (category, retryable)


def test_gemini_schema_dialect() -> None:
    schema = gemini_schema(reply_schema())
    text = json.dumps(schema)
    assert "additionalProperties" not in text and '"null"' not in text
    cause = schema["properties"]["verdicts"]["items"]["properties"]["cause"]
    assert cause["type"] == "string" and cause["nullable"] is True and None not in cause["enum"]


async def test_anthropic_judge_through_the_fake_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    benchmark, records, _ = await scripted_run(tmp_path)
    script = JudgeScript(tool="turn_judgment")
    async with FakeAnthropicServer(script, api_key="sk-ant-test-0123456789abcdef") as server:
        judged = await judge_run(
            benchmark,
            records,
            options=JudgeOptions(judge="anthropic:claude-x", base_url=server.url, only_turns=[1]),
        )
        body = server.requests[0].json()
    assert body["temperature"] == 0
    assert body["tool_choice"] == {"type": "tool", "name": "turn_judgment"}
    assert body["tools"][0]["input_schema"] == reply_schema()
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    llm = [j for j in judged.judgments if j.judge == "anthropic/claude-x"]
    assert {j.dimension for j in llm} == {"instruction_following", "kb_grounding"}
    assert all(j.passed for j in llm)


async def test_gemini_judge_through_the_fake_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-0123456789abcdef0123456789ab")
    benchmark, records, _ = await scripted_run(tmp_path)
    script = JudgeScript()
    async with FakeGeminiServer(script) as server:
        judged = await judge_run(
            benchmark,
            records,
            options=JudgeOptions(judge="gemini/gemini-x", base_url=server.url, only_turns=[3]),
        )
        request = server.requests[0]
    body = request.json()
    assert request.path == "/v1beta/models/gemini-x:generateContent"
    assert request.headers["x-goog-api-key"].startswith("AIza-test")
    config = body["generationConfig"]
    assert config["temperature"] == 0 and config["responseMimeType"] == "application/json"
    assert config["responseSchema"] == gemini_schema(reply_schema())
    assert body["systemInstruction"]["parts"][0]["text"].startswith("You grade one turn")
    llm = [j for j in judged.judgments if j.judge == "gemini/gemini-x"]
    assert {j.dimension for j in llm} == {
        "instruction_following",
        "kb_grounding",
        "ambiguity_handling",
    }


async def test_a_wrong_key_stops_judging_with_the_provider_error(tmp_path: Path) -> None:
    benchmark, records, _ = await scripted_run(tmp_path)
    async with FakeOpenAIServer(JudgeScript(), api_key="right-key-123456") as server:
        with pytest.raises(ProviderError, match="401"):
            await judge_run(
                benchmark,
                records,
                options=JudgeOptions(judge="openai-compatible/m", base_url=server.url),
            )
