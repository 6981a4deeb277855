"""The fake servers themselves: HTTP plumbing, protocol checks, audio endpoints, the CLI."""

from __future__ import annotations

import io
import subprocess
import sys
import wave

import httpx
import pytest

from voxbench.cli.fake_server import FAKE_SERVER_KINDS, build_fake_server
from voxbench.core.errors import ConfigError
from voxbench.testing import (
    FakeAnthropicServer,
    FakeGeminiServer,
    FakeOpenAIServer,
    ListScript,
    Reply,
)
from voxbench.testing.openai_http import SPEECH_RATE


async def test_keep_alive_chunked_bodies_and_recorded_requests() -> None:
    async with (
        FakeOpenAIServer(ListScript([Reply(text="one"), Reply(text="two")])) as server,
        httpx.AsyncClient(base_url=server.url) as client,
    ):
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        first = await client.post("/chat/completions", json=body)

        async def chunks():
            yield b'{"model": "m", "messages": '
            yield b'[{"role": "user", "content": "again"}]}'

        second = await client.post("/chat/completions", content=chunks())
        missing = await client.get("/nowhere")
        assert first.json()["choices"][0]["message"]["content"] == "one"
        assert second.json()["choices"][0]["message"]["content"] == "two"
        assert missing.status_code == 404
        assert [r.json()["messages"][0]["content"] for r in server.requests] == ["hi", "again"]


async def test_openai_fake_rejects_what_the_real_api_rejects() -> None:
    async with (
        FakeOpenAIServer(ListScript([Reply(text="x")]), api_key="right") as server,
        httpx.AsyncClient(base_url=server.url) as client,
    ):
        orphan = [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "c", "content": "1"},
        ]
        bad = await client.post(
            "/chat/completions",
            json={"model": "m", "messages": orphan},
            headers={"authorization": "Bearer right"},
        )
        unanswered = [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    }
                ],
            },
            {"role": "user", "content": "next"},
        ]
        open_call = await client.post(
            "/chat/completions",
            json={"model": "m", "messages": unanswered},
            headers={"authorization": "Bearer right"},
        )
        wrong_key = await client.post(
            "/chat/completions",
            json={"model": "m", "messages": []},
            headers={"authorization": "Bearer wrong"},
        )
    assert (
        bad.status_code == 400
        and "preceding message with 'tool_calls'" in bad.json()["error"]["message"]
    )
    assert open_call.status_code == 400 and "Missing: ['c']" in open_call.json()["error"]["message"]
    assert wrong_key.status_code == 401 and wrong_key.json()["error"]["code"] == "invalid_api_key"


async def test_rate_limit_fault_sends_retry_after_and_counts_requests() -> None:
    async with (
        FakeOpenAIServer(ListScript([Reply(text="ok")]), faults=["429@1:retry_after=2"]) as server,
        httpx.AsyncClient(base_url=server.url) as client,
    ):
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        limited = await client.post("/chat/completions", json=body)
        fine = await client.post("/chat/completions", json=body)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    assert fine.status_code == 200


async def test_transcription_and_speech_endpoints() -> None:
    script = ListScript([], transcripts=["hello there"])
    async with (
        FakeOpenAIServer(script) as server,
        httpx.AsyncClient(base_url=server.url) as client,
    ):
        heard = await client.post(
            "/audio/transcriptions",
            data={"model": "whisper-1"},
            files={"file": ("a.wav", b"RIFF....", "audio/wav")},
        )
        as_text = await client.post(
            "/audio/transcriptions",
            data={"model": "whisper-1", "response_format": "text"},
            files={"file": ("a.wav", b"RIFF", "audio/wav")},
        )
        pcm = await client.post(
            "/audio/speech",
            json={
                "model": "tts-1",
                "input": "Hi there",
                "voice": "alloy",
                "response_format": "pcm",
            },
        )
        wav = await client.post(
            "/audio/speech",
            json={
                "model": "tts-1",
                "input": "Hi there",
                "voice": "alloy",
                "response_format": "wav",
            },
        )
        mp3 = await client.post(
            "/audio/speech", json={"model": "tts-1", "input": "Hi", "voice": "alloy"}
        )
    assert heard.json() == {"text": "hello there"}
    assert as_text.text.strip() == "hello there"
    assert len(pcm.content) % 2 == 0 and len(pcm.content) > SPEECH_RATE // 5
    with wave.open(io.BytesIO(wav.content)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getnframes()) == (
            SPEECH_RATE,
            1,
            len(pcm.content) // 2,
        )
    assert mp3.status_code == 400


async def test_anthropic_fake_requires_version_and_tool_results() -> None:
    async with (
        FakeAnthropicServer(ListScript([Reply(text="x")] * 2)) as server,
        httpx.AsyncClient(base_url=server.url) as client,
    ):
        messages = [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {"role": "user", "content": "and?"},
        ]
        no_version = await client.post(
            "/v1/messages", json={"model": "m", "max_tokens": 5, "messages": messages[:1]}
        )
        headers = {"anthropic-version": "2023-06-01"}
        unanswered = await client.post(
            "/v1/messages",
            json={"model": "m", "max_tokens": 5, "messages": messages},
            headers=headers,
        )
        ok = await client.post(
            "/v1/messages",
            json={"model": "m", "max_tokens": 5, "messages": messages[:1]},
            headers=headers,
        )
    assert (
        no_version.status_code == 400
        and "anthropic-version" in no_version.json()["error"]["message"]
    )
    assert unanswered.status_code == 400 and "tool_result" in unanswered.json()["error"]["message"]
    assert (
        ok.json()["content"] == [{"type": "text", "text": "x"}]
        and ok.json()["stop_reason"] == "end_turn"
    )


async def test_gemini_fake_checks_response_counts_and_serves_non_streaming() -> None:
    async with (
        FakeGeminiServer(ListScript([Reply(text="a b")])) as server,
        httpx.AsyncClient(base_url=server.url) as client,
    ):
        contents = [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"text": "no answer"}]},
        ]
        mismatch = await client.post(
            "/models/gemini-2.5-flash:generateContent", json={"contents": contents}
        )
        whole = await client.post(
            "/models/gemini-2.5-flash:generateContent", json={"contents": contents[:1]}
        )
    assert mismatch.status_code == 400 and mismatch.json()["error"]["status"] == "INVALID_ARGUMENT"
    candidate = whole.json()["candidates"][0]
    assert candidate["content"]["parts"] == [{"text": "a "}, {"text": "b"}]
    assert candidate["finishReason"] == "STOP"


# Each body is what the Gemini API answers 400 to, sent on purpose.
@pytest.mark.wire_nonconforming
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"generationConfig": {"temperature": 5}}, "temperature: 5 is out of range [0.0, 2.0]"),
        ({"generationConfig": {"top_p": 1.5}}, "top_p: 1.5 is out of range [0.0, 1.0]"),
        ({"temprature": 0.2}, 'Unknown name "temprature"'),
        (
            {"generationConfig": {"reasoning": {}}},
            "Unknown name \"reasoning\" at 'generationConfig'",
        ),
        ({"tools": [{"functions": []}]}, "Unknown name \"functions\" at 'tools'"),
    ],
)
async def test_gemini_fake_refuses_unknown_fields_and_out_of_range_sampling(
    extra: dict[str, object], message: str
) -> None:
    async with (
        FakeGeminiServer(ListScript([Reply(text="ok")] * 2)) as server,
        httpx.AsyncClient(base_url=server.url) as client,
    ):
        contents = [{"role": "user", "parts": [{"text": "hi"}]}]
        refused = await client.post(
            "/models/gemini-2.5-flash:generateContent", json={"contents": contents} | extra
        )
        # Documented fields and ranges, snake_case names included, are taken.
        config = {"temperature": 2.0, "top_p": 1.0, "maxOutputTokens": 10}
        taken = await client.post(
            "/models/gemini-2.5-flash:generateContent",
            json={"contents": contents, "generation_config": config},
        )
    error = refused.json()["error"]
    assert refused.status_code == 400 and error["status"] == "INVALID_ARGUMENT"
    assert message in error["message"]
    assert taken.status_code == 200


def test_fake_server_kinds_registry_and_errors(tmp_path) -> None:
    assert {"openai", "anthropic", "gemini"} <= set(FAKE_SERVER_KINDS)
    server = build_fake_server("anthropic", "golden:smoke", faults=["500@1"], ttfb_ms=5)
    assert isinstance(server, FakeAnthropicServer) and server.ttfb == 0.005
    with pytest.raises(ConfigError, match="unknown fake server kind"):
        build_fake_server("nope")
    with pytest.raises(ConfigError, match="no script file"):
        build_fake_server("openai", str(tmp_path / "missing.yaml"))
    script = tmp_path / "s.yaml"
    script.write_text("replies: [hi]\nfaults: ['drop@1']\n")
    built = build_fake_server("openai", str(script), faults=["429@2"])
    assert [f.kind for f in built.faults.faults] == ["drop", "rate_limit"]


def test_fake_server_command_serves_until_stopped() -> None:
    code = (
        "import typer; from voxbench.cli.fake_server import fake_server_command as c; typer.run(c)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "openai", "--script", "golden:smoke"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split(" at ")[1].split()[0]
        body = {
            "model": "m",
            "messages": [
                {
                    "role": "user",
                    "content": "Hi! What time do the doors open tomorrow, and where do I check in?",
                }
            ],
        }
        answer = httpx.post(url + "/chat/completions", json=body, timeout=10)
        assert answer.json()["choices"][0]["message"]["content"].startswith("Doors open at 8:30")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_fake_server_strictness_and_dialect_from_the_command_line() -> None:
    xai = build_fake_server("openai-realtime", dialect="xai", strict=False)
    assert xai.dialect == "xai" and xai.strict is False
    assert build_fake_server("gemini-live").strict is True  # strict unless told otherwise
    assert build_fake_server("bedrock", strict=False).strict is False
    with pytest.raises(ConfigError, match="--lenient"):
        build_fake_server("openai", strict=False)  # the HTTP chat fakes are always strict
    with pytest.raises(ConfigError, match="--dialect"):
        build_fake_server("gemini-live", dialect="xai")
