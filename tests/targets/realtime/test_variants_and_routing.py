"""Azure and xAI as OpenAI-Realtime configurations; pipeline detection and routing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.targets.realtime.conftest import assert_perfect, collect_turn, run_smoke
from voxbench.core.benchmark import Benchmark, ToolSpec
from voxbench.core.errors import ConfigError, PrerequisiteError, ProviderError
from voxbench.core.events import AssistantAudio, AssistantTextDelta, UserTranscript
from voxbench.core.session import SessionSetup
from voxbench.targets.pipelines import detect_pipeline, route_target
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession, realtime_url
from voxbench.targets.realtime.openai.variants import (
    AzureOpenAIRealtimeSession,
    XaiRealtimeSession,
)
from voxbench.targets.registry import resolve_target
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.scripts import GoldenScript, ListScript, Reply


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
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), dialect="xai") as server:
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
    ga = AzureOpenAIRealtimeSession("dep", base_url="https://r.openai.azure.com/openai")
    assert ga.url() == "wss://r.openai.azure.com/openai/v1/realtime?model=dep"


def test_azure_preview_api_version_is_refused_with_the_ga_form() -> None:
    # The preview protocol (deprecated) has other event names; the adapter speaks GA only.
    with pytest.raises(ConfigError, match=r"/openai/v1/realtime\?model=<deployment>"):
        AzureOpenAIRealtimeSession(
            "dep",
            base_url="https://r.openai.azure.com",
            options={"api_version": "2025-04-01-preview"},
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


async def test_xai_voice_and_turn_detection_are_top_level_session_fields(keys: None) -> None:
    async with FakeOpenAIRealtimeServer(ListScript([]), dialect="xai") as server:
        session = XaiRealtimeSession("grok-voice", base_url=server.url, options={"voice": "Ara"})
        await session.start(SessionSetup(system_prompt="x"))
        await session.close()
    update = server.received[0]["session"]
    assert update["voice"] == "Ara" and update["turn_detection"] == {"type": None}  # manual
    assert "voice" not in update["audio"]["output"]
    assert "turn_detection" not in update["audio"]["input"]


PCM24 = {"format": {"type": "audio/pcm", "rate": 24000}}


@pytest.mark.parametrize("modality", ["text", "audio"])
async def test_xai_sessions_carry_only_the_parameters_xai_documents(
    modality: str, keys: None
) -> None:
    # docs.x.ai voice agent guide, "Session Parameters": no session.type, output_modalities,
    # tool_choice or transcription model (OpenAI's gpt-4o-mini-transcribe).
    tool = ToolSpec(name="lookup", description="Look it up.", parameters={"type": "object"})
    setup = SessionSetup(system_prompt="be brief", tools=[tool], modality=modality)  # type: ignore[arg-type]
    async with FakeOpenAIRealtimeServer(ListScript([]), dialect="xai") as server:
        session = XaiRealtimeSession("grok-voice", base_url=server.url)
        await session.start(setup)
        await session.close()
    (update,) = [m for m in server.received if m["type"] == "session.update"]
    assert update["session"] == {
        "instructions": "be brief",
        "audio": {"input": PCM24, "output": PCM24},
        "tools": [
            {"type": "function", "name": "lookup", "description": "Look it up."}
            | {"parameters": {"type": "object"}}
        ],
        "turn_detection": {"type": None},
    }
    assert session.tracker.transcribes is (modality == "audio")  # xAI transcribes unasked


@pytest.mark.parametrize(
    "options",
    [{"input_transcription": "gpt-4o-mini-transcribe"}, {"turn_detection": "semantic_vad"}],
)
def test_xai_options_for_undocumented_parameters_are_refused(options: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="xAI"):
        XaiRealtimeSession("grok-voice", options=options)


async def test_xai_text_answers_are_asked_for_per_response(keys: None) -> None:
    async with FakeOpenAIRealtimeServer(
        ListScript([Reply(text="Hi there.")]), dialect="xai"
    ) as server:
        session = XaiRealtimeSession("grok-voice", base_url=server.url, options={"output": "text"})
        await session.start(SessionSetup(system_prompt="x"))
        await session.send_user_text("hello")
        await session.end_user_turn()
        events = await collect_turn(session)
        await session.close()
    create = next(m for m in server.received if m["type"] == "response.create")
    assert create["response"] == {"modalities": ["text"]}
    assert "output_modalities" not in server.received[0]["session"]
    assert "".join(e.text for e in events if isinstance(e, AssistantTextDelta)) == "Hi there."
    assert not any(isinstance(e, AssistantAudio) for e in events)


async def test_openai_keeps_voice_and_turn_detection_under_audio(keys: None) -> None:
    async with FakeOpenAIRealtimeServer(ListScript([])) as server:
        options = {"voice": "marin", "turn_detection": "semantic_vad"}
        session = OpenAIRealtimeSession("gpt-realtime", base_url=server.url, options=options)
        await session.start(SessionSetup(system_prompt="x"))
        await session.close()
    update = server.received[0]["session"]
    assert "voice" not in update and "turn_detection" not in update
    assert update["audio"]["output"]["voice"] == "marin"
    assert update["audio"]["input"]["turn_detection"]["type"] == "semantic_vad"


async def test_xai_partial_user_transcripts_are_not_final(keys: None) -> None:
    script = ListScript([Reply(text="Sure.")], transcripts=["what time do the doors open"])
    async with FakeOpenAIRealtimeServer(script, dialect="xai") as server:
        session = XaiRealtimeSession("grok-voice", base_url=server.url)
        await session.start(SessionSetup(system_prompt="x", modality="audio"))
        t = np.arange(24000) / 24000
        tone = (0.3 * np.sin(2 * np.pi * 220 * t) * 32767).astype("<i2").tobytes()
        await session.send_user_audio(tone, 24000)
        await session.end_user_turn()
        events = await collect_turn(session)
        await session.close()
    # The fake sent "what time do" (in_progress) first: one transcript, the final one.
    heard = [e.text for e in events if isinstance(e, UserTranscript)]
    assert heard == ["what time do the doors open"]


async def test_xai_audio_mode_run_records_transcripts_without_a_transcription_model(
    tmp_path: Path, smoke: Benchmark, keys: None
) -> None:
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), dialect="xai") as server:
        run, card, judgments = await run_smoke(
            tmp_path,
            "xai-realtime/grok-voice-think-fast-1.0",
            server.url,
            mode="audio",
            clock="virtual",
            heard_asr="none",
            only_turns="0,1",
        )
    assert_perfect(run, card, judgments)
    assert run.turns()[1].user_transcript == smoke.turns[1].text  # xAI's own transcript
    assert "transcription" not in server.received[0]["session"]["audio"]["input"]
