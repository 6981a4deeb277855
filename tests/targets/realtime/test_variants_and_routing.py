"""Azure and xAI as OpenAI-Realtime configurations; pipeline detection and routing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.targets.realtime.conftest import assert_perfect, run_smoke
from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ConfigError, PrerequisiteError, ProviderError
from voxbench.core.session import SessionSetup
from voxbench.targets.pipelines import detect_pipeline, route_target
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession, realtime_url
from voxbench.targets.realtime.openai.variants import AzureOpenAIRealtimeSession
from voxbench.targets.registry import resolve_target
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.scripts import GoldenScript, ListScript


async def test_azure_smoke_uses_deployment_url_and_api_key(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(
            tmp_path, "azure-openai-realtime/my-realtime", server.origin
        )
    assert_perfect(run, card, judgments)
    assert server.handshakes[0] == {
        "path": "/openai/v1/realtime",
        "query": {"model": "my-realtime"},
        "auth": "api-key",
    }


async def test_xai_smoke(tmp_path: Path, smoke: Benchmark, keys: None) -> None:
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke)) as server:
        run, card, judgments = await run_smoke(
            tmp_path, "xai-realtime/grok-voice-think-fast-1.0", server.url
        )
    assert_perfect(run, card, judgments)
    assert server.handshakes[0]["query"] == {"model": "grok-voice-think-fast-1.0"}
    assert server.handshakes[0]["auth"] == "bearer"


def test_urls() -> None:
    assert realtime_url("https://api.openai.com/v1", "gpt-realtime") == (
        "wss://api.openai.com/v1/realtime?model=gpt-realtime"
    )
    assert realtime_url("ws://127.0.0.1:9/", "m") == "ws://127.0.0.1:9/v1/realtime?model=m"
    preview = AzureOpenAIRealtimeSession(
        "dep", base_url="https://r.openai.azure.com", options={"api_version": "2025-04-01-preview"}
    )
    assert preview.url() == (
        "wss://r.openai.azure.com/openai/realtime?api-version=2025-04-01-preview&deployment=dep"
    )


async def test_missing_key_and_endpoint_name_the_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(PrerequisiteError, match="OPENAI_API_KEY"):
        await OpenAIRealtimeSession("gpt-realtime").start(SessionSetup(system_prompt="x"))
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    with pytest.raises(PrerequisiteError, match="AZURE_OPENAI_ENDPOINT"):
        AzureOpenAIRealtimeSession("dep").url()


async def test_wrong_key_is_an_authentication_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-1234567890")
    async with FakeOpenAIRealtimeServer(ListScript([]), api_key="right") as server:
        session = OpenAIRealtimeSession("gpt-realtime", base_url=server.url)
        with pytest.raises(ProviderError) as info:
            await session.start(SessionSetup(system_prompt="x"))
    assert info.value.category == "authentication" and not info.value.retryable
    assert "sk-wrong" not in str(info.value)


@pytest.mark.parametrize(
    ("model", "pipeline"),
    [
        ("gpt-realtime", "realtime"),
        ("gpt-4o-mini-realtime-preview", "realtime"),
        ("gemini-2.5-flash-native-audio-preview-12-2025", "realtime"),
        ("gemini-3.1-flash-live-preview", "realtime"),
        ("gemini-live-2.5-flash", "realtime"),
        ("ultravox-v0.7", "realtime"),
        ("amazon.nova-sonic-v1:0", "realtime"),
        ("amazon.nova-2-sonic-v1:0", "realtime"),
        ("gpt-4o-mini", "text"),
        ("gemini-2.5-flash", "text"),
        ("claude-sonnet-4-5", "text"),
        ("olive-7b", "text"),
    ],
)
def test_detect_pipeline(model: str, pipeline: str) -> None:
    assert detect_pipeline(model) == pipeline


def test_route_target() -> None:
    assert route_target("openai/gpt-realtime") == "openai-realtime/gpt-realtime"
    assert route_target("openai:gpt-realtime") == "openai-realtime/gpt-realtime"
    assert route_target("gemini/gemini-3.1-flash-live-preview") == (
        "gemini-live/gemini-3.1-flash-live-preview"
    )
    assert route_target("xai/grok-voice-think-fast-1.0") == "xai-realtime/grok-voice-think-fast-1.0"
    assert route_target("openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert route_target("openai/gpt-realtime", {"pipeline": "text"}) == "openai/gpt-realtime"
    assert route_target("openai/my-voice-model", {"pipeline": "realtime"}) == (
        "openai-realtime/my-voice-model"
    )
    assert route_target("openai-realtime/gpt-realtime") == "openai-realtime/gpt-realtime"
    assert route_target("mypkg.adapters:MySession") == "mypkg.adapters:MySession"
    with pytest.raises(ConfigError, match="no realtime adapter"):
        route_target("anthropic/claude-sonnet-4-5", {"pipeline": "realtime"})
    with pytest.raises(ConfigError, match="pipeline"):
        route_target("openai/gpt-realtime", {"pipeline": "speech"})


def test_nova_sonic_is_refused_with_an_explanation() -> None:
    with pytest.raises(PrerequisiteError, match="Nova Sonic is not supported yet"):
        resolve_target("bedrock/amazon.nova-sonic-v1:0")


def test_resolve_target_builds_the_realtime_session(keys: None) -> None:
    session = resolve_target("openai/gpt-realtime", base_url="ws://127.0.0.1:1")()
    assert isinstance(session, OpenAIRealtimeSession)
    assert session.info.name == "openai-realtime/gpt-realtime"


@pytest.mark.parametrize(
    "target",
    ["openai-realtime/gpt-realtime", "xai-realtime/x", "gemini-live/m", "ultravox/ultravox-v0.7"],
)
def test_realtime_targets_listen_natively(target: str, keys: None) -> None:
    # Audio mode wraps text targets in a cascade; realtime targets must hear the audio.
    session = resolve_target(target, base_url="ws://127.0.0.1:1")()
    assert session.info.input_modality == "audio" and session.info.input_sample_rate
