"""The one provider registry: roles, env requirements, clients built from it, listings."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
import sys
import wave
from collections.abc import Sequence
from http import HTTPStatus

import httpx
import pytest
from websockets.asyncio.server import serve

from voxbench.core.errors import ConfigError, ProviderError
from voxbench.core.session import SessionSetup
from voxbench.providers.completion import AudioCompletionRequest, CompletionRequest
from voxbench.providers.http import classify_status
from voxbench.providers.registry import EnvVars, Role, make, providers_for, resolve_name
from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession
from voxbench.targets.registry import providers
from voxbench.testing import FakeGeminiServer, FakeOpenAIServer
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.scripts import ListScript, Reply, Script, ScriptMessage


class EchoScript(Script):
    """Answers with what the model was given (audio parts appear as ``[audio: N s]``)."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        return Reply(text=conversation[-1].text)


def _wav(seconds: float = 0.5, rate: int = 16_000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as clip:
        clip.setnchannels(1)
        clip.setsampwidth(2)
        clip.setframerate(rate)
        clip.writeframes(b"\0\0" * int(seconds * rate))
    return buffer.getvalue()


def test_env_requirements_say_all_of_and_any_of() -> None:
    assert EnvVars(all_of=("A", "B")).describe() == "A and B"
    assert EnvVars(any_of=("A", "B")).describe() == "A or B"
    assert EnvVars(all_of=("A",), any_of=("B", "C")).describe() == "A and (B or C)"
    by_name = {p.name: p for p in providers()}
    assert by_name["azure-openai"].requirement.describe() == (
        "AZURE_OPENAI_API_KEY and AZURE_OPENAI_ENDPOINT"
    )
    assert by_name["gemini"].requirement.describe() == "GEMINI_API_KEY or GOOGLE_API_KEY"
    assert by_name["gemini-live"].requirement.describe() == "GEMINI_API_KEY or GOOGLE_API_KEY"


def test_one_provider_plays_several_roles() -> None:
    openai, name = resolve_name("openai/whisper-1", Role.ASR)
    assert name.model == "whisper-1"
    assert {Role.TEXT_COMPLETION, Role.AUDIO_COMPLETION, Role.ASR, Role.TTS} <= set(openai.roles)
    judges = {p.name for p in providers_for(Role.TEXT_COMPLETION)}
    assert {"openai", "azure-openai", "anthropic", "gemini", "bedrock", "ollama"} <= judges
    with pytest.raises(ConfigError, match="unknown TTS provider 'anthropic'"):
        make(Role.TTS, "anthropic/claude-x")


@pytest.mark.parametrize("status", [401, 403])
def test_401_and_403_are_authentication_errors(status: int) -> None:
    error = classify_status(status, {}, b"{}", provider="p", key_vars=("P_KEY",))
    assert error.category == "authentication" and not error.retryable and "P_KEY" in str(error)


@pytest.mark.parametrize("status", [HTTPStatus.UNAUTHORIZED, HTTPStatus.FORBIDDEN])
async def test_a_refused_realtime_handshake_is_classified_like_http(
    status: HTTPStatus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")

    def refuse(connection, request):  # noqa: ANN001, ANN202 - websockets' hook
        return connection.respond(status, '{"error": {"message": "no access"}}\n')

    async with serve(lambda ws: None, "127.0.0.1", 0, process_request=refuse) as server:
        port = server.sockets[0].getsockname()[1]
        session = OpenAIRealtimeSession("gpt-realtime", base_url=f"ws://127.0.0.1:{port}/v1")
        with pytest.raises(ProviderError) as info:
            await session.start(SessionSetup(system_prompt="x"))
    error = info.value
    assert error.category == "authentication" and not error.retryable
    assert error.status == status and "OPENAI_API_KEY" in str(error)


async def test_openai_realtime_honours_openai_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://gateway.example.com/v1")
    assert OpenAIRealtimeSession("gpt-realtime").url() == (
        "wss://gateway.example.com/v1/realtime?model=gpt-realtime"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    async with FakeOpenAIRealtimeServer(ListScript([])) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url.replace("ws://", "http://"))
        session = OpenAIRealtimeSession("gpt-realtime")
        await session.start(SessionSetup(system_prompt="x"))
        await session.close()
        assert server.handshakes[0]["path"] == "/v1/realtime"


async def test_text_completion_clients_come_from_the_registry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-0123456789abcdef0123456789ab")
    request = CompletionRequest(system="Be brief.", user="say hi", seed=3)
    async with FakeGeminiServer(EchoScript()) as server:
        client = make(Role.TEXT_COMPLETION, "gemini/gemini-x", base_url=server.url)
        reply = await client.complete(request)
        await client.aclose()
        body = server.requests[0].json()
    assert reply.text == "say hi" and client.name == "gemini/gemini-x"
    assert body["generationConfig"] == {"temperature": 0.0, "seed": 3}
    async with FakeOpenAIServer(EchoScript()) as server:
        client = make(Role.TEXT_COMPLETION, "vllm/qwen3:8b", base_url=server.url)
        reply = await client.complete(request)
        await client.aclose()
        body = server.requests[0].json()
    assert reply.text == "say hi" and body["model"] == "qwen3:8b" and body["seed"] == 3
    assert "response_format" not in body


async def test_gemini_base_url_env_gets_its_api_version(monkeypatch: pytest.MonkeyPatch) -> None:
    from voxbench.providers.gemini import gemini_base_url

    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "https://proxy.example.com")
    assert gemini_base_url() == "https://proxy.example.com/v1beta"
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL")
    monkeypatch.setenv("GEMINI_BASE_URL", "https://old.example.com/v1alpha")
    assert gemini_base_url() == "https://old.example.com/v1alpha"


@pytest.mark.parametrize("name", ["openai/gpt-4o-audio-preview", "gemini/gemini-2.5-flash"])
async def test_audio_completion_against_the_fakes(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-0123456789abcdef0123456789ab")
    fake = FakeGeminiServer if name.startswith("gemini") else FakeOpenAIServer
    request = AudioCompletionRequest(audio_wav=_wav(0.5), prompt="Transcribe: ", system="Be exact.")
    async with fake(EchoScript()) as server:
        client = make(Role.AUDIO_COMPLETION, name, base_url=server.url)
        reply = await client.complete_audio(request)
        await client.aclose()
        body = server.requests[0].json()
    assert reply.text == "Transcribe: [audio: 0.50 s]"
    text = json.dumps(body)
    assert ("input_audio" in text) != ("inline_data" in text)


async def test_a_prepared_body_is_what_the_client_would_send_and_goes_as_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``body_builder`` is the client's own encoder (it pickles, for worker processes); a
    request carrying its ``prepared_body`` sends those bytes without encoding again."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    request = AudioCompletionRequest(audio_wav=_wav(0.5), prompt="Say: ", system="Be exact.")
    async with FakeOpenAIServer(EchoScript()) as server:
        client = make(Role.AUDIO_COMPLETION, "openai/gpt-4o-audio-preview", base_url=server.url)
        builder = pickle.loads(pickle.dumps(client.body_builder))
        await client.complete_audio(request)
        other = dataclasses.replace(request, prompt="Other: ")
        reply = await client.complete_audio(
            dataclasses.replace(request, prepared_body=builder(other))
        )
        await client.aclose()
        sent = [r.body for r in server.requests]
    assert sent[0] == builder(request)  # the same bytes, built by the same function
    assert sent[1] == builder(other) and reply.text == "Other: [audio: 0.50 s]"


async def test_the_fakes_refuse_audio_that_is_not_a_wav(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    request = AudioCompletionRequest(audio_wav=b"not a wav", prompt="?")
    async with FakeOpenAIServer(EchoScript()) as server:
        client = make(Role.AUDIO_COMPLETION, "openai/gpt-4o-audio-preview", base_url=server.url)
        with pytest.raises(ProviderError) as info:
            await client.complete_audio(request)
        await client.aclose()
    assert info.value.category == "bad_request"


def test_http_clients_share_one_proxy_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    from voxbench.providers.http import make_http_client

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    client = make_http_client(sync=True)
    try:
        remote = client._transport_for_url(httpx.URL("https://api.openai.com/v1"))
        local = client._transport_for_url(httpx.URL("http://127.0.0.1:8000/v1"))
        assert remote is not client._transport and local is client._transport
    finally:
        client.close()


@pytest.mark.parametrize(
    ("what", "expected"),
    [
        ("judges", ["anthropic", "gemini", "GEMINI_API_KEY or GOOGLE_API_KEY", "OPENAI_BASE_URL"]),
        ("asr", ["local", "whisper-tiny.en", "whisper-1", "OPENAI_API_KEY"]),
        ("tts", ["local", "espeak", "tts-1"]),
        ("targets", ["AZURE_OPENAI_API_KEY and AZURE_OPENAI_ENDPOINT", "GEMINI_API_KEY or"]),
    ],
)
def test_list_reads_the_registry(
    what: str, expected: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from voxbench.cli.main import main

    monkeypatch.setattr(sys, "argv", ["voxbench", "list", what])
    monkeypatch.setenv("COLUMNS", "400")
    try:
        main()
    except SystemExit as exc:
        assert not exc.code
    out = capsys.readouterr().out
    for text in expected:
        assert text in out, text
