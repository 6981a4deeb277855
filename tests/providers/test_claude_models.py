"""The Claude capability table, and the judges that send only what each model takes."""

from __future__ import annotations

import pytest

from voxbench.core.errors import ConfigError
from voxbench.providers.claude_models import check_options, claude_model, refusals
from voxbench.providers.completion import CompletionRequest
from voxbench.providers.registry import Role, make
from voxbench.testing import FakeAnthropicServer, ListScript, Reply, ScriptCall
from voxbench.testing.anthropic_http import check_model_fields

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
REQUEST = CompletionRequest(system="rules " * 1200, user="data", schema=SCHEMA, schema_name="v")
VERDICT = Reply(calls=(ScriptCall("v", {"ok": True}),))


@pytest.mark.parametrize(
    ("model_id", "sampling", "thinking"),
    [
        ("claude-3-haiku-20240307", True, {"disabled"}),
        ("claude-3-7-sonnet-20250219", True, {"enabled", "disabled"}),
        ("claude-sonnet-4-20250514", True, {"enabled", "disabled"}),
        ("claude-haiku-4-5-20251001", True, {"enabled", "disabled"}),
        ("claude-sonnet-4-6", True, {"enabled", "adaptive", "disabled"}),
        ("claude-opus-4-7", False, {"adaptive", "disabled"}),
        ("claude-opus-4-8", False, {"adaptive", "disabled"}),
        ("claude-sonnet-5-5", False, {"adaptive", "disabled"}),
        ("claude-fable-5", False, {"adaptive", "disabled"}),
        ("claude-mythos-preview", False, {"adaptive"}),
        ("us.anthropic.claude-opus-4-7-v1:0", False, {"adaptive", "disabled"}),
        ("anthropic.claude-3-5-haiku-20241022-v1:0", True, {"disabled"}),
        (
            "arn:aws:bedrock:us-east-1:1:inference-profile/global.anthropic.claude-sonnet-4-5-"
            "20250929-v1:0",
            True,
            {"enabled", "disabled"},
        ),
    ],
)
def test_model_ids_read_by_family_and_version(
    model_id: str, sampling: bool, thinking: set[str]
) -> None:
    model = claude_model(model_id)
    assert model is not None
    assert (model.sampling, set(model.thinking)) == (sampling, thinking)


def test_an_id_that_names_no_claude_model_is_not_checked() -> None:
    assert claude_model("gpt-4o") is None and claude_model("amazon.nova-pro-v1:0") is None
    assert refusals("my-proxy-alias", {"temperature": 0, "thinking": {"type": "enabled"}}) == []


# The seven combinations the API refuses (issue 29 item 2), each named by its field; the
# strict fake refuses every one of them too.
REFUSED = [
    ("claude-opus-4-7", {"temperature": 0.0}, "temperature"),
    ("claude-sonnet-4-5", {"temperature": 0.2, "top_p": 0.9}, "top_p"),
    (
        "claude-sonnet-4-5",
        {"thinking": {"type": "enabled", "budget_tokens": 2048}, "temperature": 0.2},
        "temperature",
    ),
    (
        "claude-sonnet-4-5",
        {"thinking": {"type": "enabled", "budget_tokens": 2048}, "tool_choice": {"type": "any"}},
        "tool_choice",
    ),
    (
        "claude-sonnet-4-6",
        {"thinking": {"type": "adaptive"}, "tool_choice": {"type": "tool", "name": "x"}},
        "tool_choice",
    ),
    ("claude-sonnet-4-5", {"thinking": {"type": "enabled", "budget_tokens": 512}}, "budget"),
    ("claude-opus-4-7", {"thinking": {"type": "enabled", "budget_tokens": 2048}}, "type"),
]


@pytest.mark.parametrize(("model_id", "fields", "field"), REFUSED)
def test_refused_combinations_are_a_config_error_naming_the_field(
    model_id: str, fields: dict, field: str
) -> None:
    request = {"max_tokens": 4096, **fields}
    with pytest.raises(ConfigError, match=field) as info:
        check_options(f"anthropic/{model_id}", model_id, request)
    assert info.value.exit_code == 2
    assert info.value.field is not None and info.value.field.startswith("target_options.")
    with pytest.raises(ValueError):
        check_model_fields(model_id, request)


@pytest.mark.parametrize(
    ("model_id", "fields"),
    [
        ("claude-sonnet-4-5", {"temperature": 0.2}),
        ("claude-sonnet-4-5", {"thinking": {"type": "enabled", "budget_tokens": 1024}}),
        ("claude-sonnet-4-6", {"thinking": {"type": "adaptive"}, "top_p": 0.95}),
        ("claude-opus-4-7", {"thinking": {"type": "adaptive"}, "tool_choice": {"type": "auto"}}),
        ("claude-3-7-sonnet-20250219", {"temperature": 0.2, "top_p": 0.9}),
    ],
)
def test_accepted_combinations_pass_both_checks(model_id: str, fields: dict) -> None:
    request = {"max_tokens": 4096, **fields}
    check_options(f"anthropic/{model_id}", model_id, request)
    check_model_fields(model_id, request)


@pytest.fixture
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")


@pytest.mark.usefixtures("_key")
@pytest.mark.parametrize(
    ("model", "temperature", "tool_choice"),
    [
        ("claude-sonnet-4-5", 0, {"type": "tool", "name": "v"}),
        ("claude-opus-4-7", None, {"type": "tool", "name": "v"}),
        ("claude-fable-5", None, {"type": "tool", "name": "v"}),
        ("claude-mythos-preview", None, {"type": "auto"}),
    ],
)
async def test_the_anthropic_judge_sends_only_what_the_model_takes(
    model: str, temperature: float | None, tool_choice: dict
) -> None:
    async with FakeAnthropicServer(ListScript([VERDICT])) as server:
        client = make(Role.TEXT_COMPLETION, f"anthropic/{model}", base_url=server.url)
        completion = await client.complete(REQUEST)
        await client.aclose()
        body = server.requests[0].json()
    assert completion.text == '{"ok": true}'
    assert body.get("temperature") == temperature
    assert body["tool_choice"] == tool_choice


@pytest.fixture
def _aws(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("botocore")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "BEDROCK_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.usefixtures("_aws")
async def test_the_bedrock_judge_drops_temperature_and_counts_cache_writes_and_reads() -> None:
    from voxbench.testing import FakeBedrockServer

    model = "us.anthropic.claude-opus-4-7-v1:0"
    async with FakeBedrockServer(ListScript([VERDICT, VERDICT])) as server:
        client = make(Role.TEXT_COMPLETION, f"bedrock/{model}", base_url=server.url)
        first = await client.complete(REQUEST)
        second = await client.complete(REQUEST)
        await client.aclose()
        body = server.requests[0].json()
    assert "temperature" not in body["inferenceConfig"]
    assert body["system"][-1] == {"cachePoint": {"type": "default"}}
    written = first.usage["cache_creation_input_tokens"]
    assert written > 1024 and first.usage["cache_read_input_tokens"] == 0
    assert second.usage["cache_read_input_tokens"] == written
    assert second.usage["cache_creation_input_tokens"] == 0
    assert first.usage["input_tokens"] == second.usage["input_tokens"] > 0


@pytest.mark.wire_nonconforming  # sends what the model refuses, on purpose
@pytest.mark.usefixtures("_aws")
async def test_the_bedrock_fake_refuses_temperature_as_bedrock_relays_it() -> None:
    import botocore.session

    from voxbench.testing import FakeBedrockServer

    async with FakeBedrockServer(ListScript([VERDICT])) as server:
        client = botocore.session.get_session().create_client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=server.url
        )
        with pytest.raises(client.exceptions.ValidationException, match="deprecated"):
            await _converse(client, "global.anthropic.claude-opus-4-8-v1:0")
        client.close()


async def _converse(client: object, model: str) -> None:
    import asyncio

    await asyncio.to_thread(
        client.converse,  # type: ignore[attr-defined]
        modelId=model,
        messages=[{"role": "user", "content": [{"text": "hi"}]}],
        inferenceConfig={"temperature": 0.0},
    )


@pytest.mark.parametrize(
    ("model_id", "sampling"),
    [
        ("anthropic/claude-opus-4.7", False),  # OpenRouter's spelling, a dot in the version
        ("anthropic/claude-3.5-sonnet", True),
        ("anthropic/claude-sonnet-4.5", True),
    ],
)
def test_gateway_ids_with_dotted_versions_are_read(model_id: str, sampling: bool) -> None:
    model = claude_model(model_id)
    assert model is not None and model.sampling is sampling


def test_an_openai_compatible_judge_leaves_temperature_out_for_a_claude_model_that_refuses_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through an OpenAI-style gateway the first request already leaves it out (before, it
    cost a 400 and a retry per judge client)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    request = CompletionRequest(system="s", user="u", temperature=0.0)
    refusing = make(Role.TEXT_COMPLETION, "openai-compatible/anthropic/claude-opus-4.7",
                    base_url="http://127.0.0.1:9/v1")  # fmt: skip
    taking = make(Role.TEXT_COMPLETION, "openai-compatible/anthropic/claude-sonnet-4.5",
                  base_url="http://127.0.0.1:9/v1")  # fmt: skip
    assert "temperature" not in refusing._body(request)
    assert taking._body(request)["temperature"] == 0.0
