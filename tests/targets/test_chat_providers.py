"""Provider names, keys, base URLs and user adapters for the text chat targets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from voxbench.core.errors import ConfigError, PrerequisiteError
from voxbench.core.events import AssistantTextDelta, SessionEvent, TurnComplete
from voxbench.core.session import Session, SessionSetup
from voxbench.targets.openai_chat import COMPATIBLE_PROVIDERS
from voxbench.targets.registry import TargetContext, providers, resolve_target
from voxbench.testing import FakeOpenAIServer, ListScript, Reply

from .chat_fixtures import drain_turn, open_session

SETUP = SessionSetup(system_prompt="Be brief.")


def test_every_text_provider_is_registered_with_its_key_variable() -> None:
    registered = {p.name: p for p in providers()}
    for name in (
        "openai", "azure-openai", "openrouter", "groq", "cerebras", "xai", "together",
        "vllm", "ollama", "openai-compatible", "anthropic", "gemini",
    ):  # fmt: skip
        assert registered[name].kind == "text"
    assert registered["groq"].env_vars == ("GROQ_API_KEY",)
    assert registered["azure-openai"].env_vars == ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT")
    assert registered["ollama"].env_vars == ()


@pytest.mark.parametrize("spec", [s for s in COMPATIBLE_PROVIDERS if s.key_required], ids=str)
async def test_a_missing_key_names_its_variable_at_session_start(
    spec: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in spec.key_vars:
        monkeypatch.delenv(var, raising=False)
    factory = resolve_target(f"{spec.name}/some-model", base_url="http://127.0.0.1:9/v1")
    session = factory()  # building the session needs no key
    with pytest.raises(PrerequisiteError, match=spec.key_vars[0]):
        await session.start(SETUP)


@pytest.mark.parametrize("name", ["groq", "xai", "together", "cerebras", "openrouter"])
async def test_compatible_providers_send_a_bearer_key_to_base_url(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    var = f"{name.upper()}_API_KEY"
    monkeypatch.setenv(var, f"{name}-test-key-123")
    async with FakeOpenAIServer(
        ListScript([Reply(text="hi")]), api_key=f"{name}-test-key-123"
    ) as server:
        session = await open_session(f"{name}/vendor/model-x", server.url, SETUP)
        await session.send_user_text("hello")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        assert server.requests[0].json()["model"] == "vendor/model-x"
    assert events[-1].status == "completed"


async def test_ollama_needs_no_key_and_the_default_url_can_come_from_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with FakeOpenAIServer(ListScript([Reply(text="local")])) as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", server.url)
        session = resolve_target("ollama/llama3.2")()
        await session.start(SETUP)
        await session.send_user_text("hi")
        await session.end_user_turn()
        events = await drain_turn(session)
        await session.close()
        assert "authorization" not in server.requests[0].headers
    assert "".join(e.text for e in events if e.type == "assistant_text") == "local"


async def test_openai_compatible_needs_a_base_url() -> None:
    with pytest.raises(PrerequisiteError, match="--base-url"):
        resolve_target("openai-compatible/my-model")()


async def test_azure_uses_deployment_url_api_version_and_api_key_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-test-key-1234")
    async with FakeOpenAIServer(
        ListScript([Reply(text="hi")]), api_key="azure-test-key-1234"
    ) as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.origin)
        session = resolve_target("azure-openai/my-gpt4o", options={"api_version": "2025-01-01"})()
        await session.start(SETUP)
        await session.send_user_text("hi")
        await session.end_user_turn()
        await drain_turn(session)
        await session.close()
        request = server.requests[0]
    assert request.path == "/openai/deployments/my-gpt4o/chat/completions"
    assert request.query == {"api-version": "2025-01-01"}
    assert request.headers["api-key"] == "azure-test-key-1234"
    assert "model" not in request.json()


def test_azure_without_endpoint_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    with pytest.raises(PrerequisiteError, match="AZURE_OPENAI_ENDPOINT"):
        resolve_target("azure-openai/dep")()


class EchoSession(Session):
    """A user's own adapter, loaded by class path."""

    def __init__(self, context: TargetContext) -> None:
        self.context = context
        self.said: list[str] = []

    async def start(self, setup: SessionSetup) -> None:
        self.setup = setup

    async def send_user_text(self, text: str) -> None:
        self.said.append(text)

    async def end_user_turn(self) -> None:
        pass

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        pass

    async def events(self) -> AsyncIterator[SessionEvent]:
        yield AssistantTextDelta(text=" ".join(self.said))
        yield TurnComplete()

    async def close(self) -> None:
        pass


async def test_target_can_be_a_class_path_to_a_users_adapter() -> None:
    factory = resolve_target(
        f"{__name__}:EchoSession", base_url="http://example.invalid", options={"x": 1}
    )
    session = factory()
    assert isinstance(session, EchoSession)
    assert session.context.base_url == "http://example.invalid"
    assert session.context.options == {"x": 1}
    assert factory() is not session  # a fresh session per call (reconnects, retries)
    await session.send_user_text("echo me")
    events = [e async for e in session.events()]
    assert events[0].text == "echo me"


def test_a_class_path_that_is_not_a_session_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a voxbench Session"):
        resolve_target(f"{__name__}:SETUP")


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("ollama/llama3.2:3b", "llama3.2:3b"),
        (
            "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0",
            "anthropic.claude-3-5-haiku-20241022-v1:0",
        ),
        ("openrouter/meta-llama/llama-3.1-8b-instruct", "meta-llama/llama-3.1-8b-instruct"),
    ],
)
def test_model_names_with_dots_and_colons_are_not_class_paths(name: str, model: str) -> None:
    session = resolve_target(name, base_url="http://127.0.0.1:9/v1")()
    assert session.model == model
