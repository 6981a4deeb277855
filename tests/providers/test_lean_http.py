"""The lean HTTP/1.1 client (``providers.lean_http``): same answers and same errors as httpx."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import socket
import wave
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from voxbench.core.errors import ProviderError
from voxbench.providers.completion import AudioCompletionRequest
from voxbench.providers.lean_http import WRITE_APART, LeanHTTP, lean_http_applies
from voxbench.providers.openai_compat import OpenAIAudioCompletion
from voxbench.providers.ratelimit import RateLimit, install_pacer
from voxbench.providers.registry import Role, make
from voxbench.testing import FakeOpenAIServer
from voxbench.testing.scripts import ListScript, Reply


def _wav() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as clip:
        clip.setnchannels(1)
        clip.setsampwidth(2)
        clip.setframerate(16000)
        clip.writeframes(b"\x00\x01" * 1600)
    return buffer.getvalue()


REQUEST = AudioCompletionRequest(audio_wav=_wav(), prompt="Transcribe.")


def _client(url: str, *, lean: bool, timeout: float = 5.0) -> OpenAIAudioCompletion:
    client = make(
        Role.AUDIO_COMPLETION,
        "openai-compatible/m",
        base_url=url,
        api_key="sk-test-0123456789",
        max_connections=2,
        timeout=timeout,
    )
    assert isinstance(client, OpenAIAudioCompletion)
    assert client._lean is not None  # a caller with max_connections, a loopback URL
    if not lean:
        client._lean = None  # the httpx path, as for a proxied endpoint
    return client


async def _error(url: str, *, lean: bool, limit_s: float = 5.0) -> ProviderError:
    client = _client(url, lean=lean, timeout=limit_s)
    try:
        with pytest.raises(ProviderError) as caught:
            await client.complete_audio(REQUEST)
    finally:
        await client.aclose()
    return caught.value


def test_the_lean_path_applies_to_direct_http_only(monkeypatch: pytest.MonkeyPatch) -> None:
    assert lean_http_applies("https://api.openai.com/v1/chat/completions")
    assert not lean_http_applies("ftp://host/x")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert not lean_http_applies("https://api.openai.com/v1/chat/completions")
    assert lean_http_applies("http://127.0.0.1:8000/v1/chat/completions")  # never proxied
    assert lean_http_applies("http://[::1]:8000/v1/chat/completions")


def test_only_callers_keeping_requests_in_flight_get_it() -> None:
    client = make(Role.AUDIO_COMPLETION, "openai-compatible/m", base_url="http://127.0.0.1:9/v1")
    assert client._lean is None  # a judge's occasional call: httpx


async def test_the_same_answer_through_either_path() -> None:
    async with FakeOpenAIServer(ListScript([Reply(text="hello there")] * 2)) as server:
        answers = []
        for lean in (True, False):
            client = _client(server.url, lean=lean)
            answers.append(await client.complete_audio(REQUEST))
            await client.aclose()
        sent = [r.body for r in server.requests]
        paths = {r.path for r in server.requests}
        keys = {r.headers.get("authorization") for r in server.requests}
    assert answers[0] == answers[1] and answers[0].text == "hello there"
    assert sent[0] == sent[1] and paths == {"/v1/chat/completions"}
    assert keys == {"Bearer sk-test-0123456789"}


@pytest.mark.parametrize(
    "fault", ["429:retry_after=3", "500", "401", "drop", "hang"], ids=lambda f: f.split(":")[0]
)
async def test_every_fault_is_classified_as_httpx_classifies_it(fault: str) -> None:
    async with FakeOpenAIServer(ListScript([Reply(text="x")] * 4), faults=[fault]) as server:
        errors = [await _error(server.url, lean=lean, limit_s=0.5) for lean in (True, False)]
    lean, reference = ((e.category, e.retryable, e.retry_after, e.status) for e in errors)
    assert lean == reference
    if fault.startswith("429"):
        assert lean == ("rate_limit", True, 3.0, 429)
    if fault == "401":
        assert "OPENAI_COMPATIBLE_API_KEY" in str(errors[0])


async def test_a_refused_connection_is_a_retryable_connectivity_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    url = f"http://127.0.0.1:{port}/v1"
    errors = [await _error(url, lean=lean) for lean in (True, False)]
    assert {(e.category, e.retryable) for e in errors} == {("connectivity", True)}


async def test_the_pacer_paces_and_hears_each_429() -> None:
    class Recording:
        def __init__(self) -> None:
            self.waits: list[str] = []
            self.deferred: list[tuple[str, float]] = []

        def limit_for(self, origin: str) -> RateLimit | None:
            return RateLimit(100.0)

        async def wait_async(self, bucket: str) -> None:
            self.waits.append(bucket)

        def wait_blocking(self, bucket: str) -> None:
            raise AssertionError("an async client")

        def retry_after(self, bucket: str, seconds: float) -> None:
            self.deferred.append((bucket, seconds))

    pacer = Recording()
    previous = install_pacer(pacer)
    try:
        async with FakeOpenAIServer(
            ListScript([Reply(text="x")] * 2), faults=["429@1:retry_after=2"]
        ) as server:
            await _error(server.url, lean=True)
            client = _client(server.url, lean=True)
            await client.complete_audio(REQUEST)
            await client.aclose()
    finally:
        install_pacer(previous)
    assert len(pacer.waits) == 2 and len(set(pacer.waits)) == 1
    assert pacer.deferred == [(pacer.waits[0], 2.0)]
    assert pacer.waits[0].startswith("http://127.0.0.1:") and not pacer.waits[0].endswith("|-")


# -- a raw server, for framings and connection counts the fake providers never use -----------


@asynccontextmanager
async def _raw_server(
    answer: Callable[[int], bytes], *, latency: float = 0.0, one_each: bool = False
) -> AsyncIterator[tuple[str, list[int]]]:
    """Answers each request with ``answer(n)`` (n: the request's number); yields its URL and
    the number of connections it accepted (a one-item list, updated). ``one_each``: closes
    each connection after one answer without saying so (an idle keep-alive timing out)."""
    accepted = [0]
    served = [0]

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted[0] += 1
        try:
            while True:
                await _read_body(reader)
                served[0] += 1
                await asyncio.sleep(latency)
                writer.write(answer(served[0]))
                await writer.drain()
                if one_each or b"connection: close" in answer(served[0]).lower():
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1/chat/completions", accepted
    finally:
        server.close()


async def _read_body(reader: asyncio.StreamReader) -> bytes:
    """One request's body, by its content-length (the request head read and dropped)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return await reader.readexactly(length)


def _ok(body: bytes, *headers: str) -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{head}\r\n".encode() + body


def _lean(url: str, connections: int = 2) -> LeanHTTP:
    return LeanHTTP(url, {"content-type": "application/json"}, connections=connections,
                    timeout=5.0, provider="fake/m")  # fmt: skip


async def test_chunked_gzip_and_closing_responses_all_parse() -> None:
    data = json.dumps({"choices": [{"message": {"content": "hé"}}]}).encode()
    packed = gzip.compress(data)
    chunked = (
        b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in (data[:7], data[7:]))
        + b"0\r\n\r\n"
    )
    answers = [
        _ok(data, f"content-length: {len(data)}"),
        _ok(chunked, "transfer-encoding: chunked"),
        _ok(packed, f"content-length: {len(packed)}", "content-encoding: gzip"),
        _ok(data, f"content-length: {len(data)}", "connection: close"),
        _ok(data, f"content-length: {len(data)}"),
    ]
    async with _raw_server(lambda n: answers[n - 1]) as (url, accepted):
        client = _lean(url, connections=1)
        replies = [await client.post(b"{}") for _ in answers]
        await client.aclose()
    assert replies == [json.loads(data)] * len(answers)
    assert accepted[0] == 2  # one kept alive until the server said close, then a new one


async def test_exactly_the_connections_asked_for_carry_many_concurrent_requests() -> None:
    data = b'{"ok": true}'
    async with _raw_server(lambda n: _ok(data, f"content-length: {len(data)}"), latency=0.01) as (
        url,
        accepted,
    ):
        client = _lean(url, connections=3)
        replies = await asyncio.gather(*(client.post(b"{}") for _ in range(30)))
        await client.aclose()
    assert replies == [{"ok": True}] * 30
    assert accepted[0] == 3


async def test_a_request_cancelled_mid_flight_frees_its_connection() -> None:
    data = b'{"ok": true}'
    async with _raw_server(lambda n: _ok(data, f"content-length: {len(data)}")) as (url, _):
        client = _lean(url, connections=1)
        first = asyncio.ensure_future(client.post(b"{}"))
        second = asyncio.ensure_future(client.post(b"{}"))  # waits for the one connection
        await asyncio.sleep(0)
        first.cancel()
        assert await second == {"ok": True}
        await client.aclose()
    assert first.cancelled()


async def test_a_body_that_is_not_json_is_a_retryable_protocol_error() -> None:
    async with _raw_server(lambda n: _ok(b"<html>", "content-length: 6")) as (url, _):
        client = _lean(url)
        with pytest.raises(ProviderError) as caught:
            await client.post(b"{}")
        await client.aclose()
    assert caught.value.category == "protocol" and caught.value.retryable
    assert "<html>" in str(caught.value)


async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    data = b'{"ok": true}'
    ok = _ok(data, f"content-length: {len(data)}")
    async with _raw_server(lambda n: ok, one_each=True) as (url, accepted):
        client = _lean(url, connections=1)
        replies = []
        for _ in range(3):
            replies.append(await client.post(b"{}"))
            for _ in range(20):  # until the loop has read the server's FIN
                await asyncio.sleep(0.005)
        await client.aclose()
    assert replies == [{"ok": True}] * 3 and accepted[0] == 3


async def test_a_body_given_in_parts_is_sent_as_the_parts_joined() -> None:
    """Parts (a JSON head, a clip's base64, a tail) reach the server as one body, whether
    joined (small) or written apart (a part of ``WRITE_APART`` bytes or more)."""
    received: list[bytes] = []
    data = b'{"ok": true}'

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                received.append(await _read_body(reader))
                writer.write(_ok(data, f"content-length: {len(data)}"))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
    bodies = [
        (b'{"a":"', bytes(range(65, 91)) * 10, b'"}'),
        (b'{"a":"', b"QUJD" * (3 * WRITE_APART // 4), b'"}'),  # 3x WRITE_APART bytes
        b'{"whole": 1}',
    ]
    try:
        client = _lean(url, connections=2)
        replies = await asyncio.gather(*(client.post(b) for b in bodies * 2))
        await client.aclose()
    finally:
        server.close()
    assert replies == [{"ok": True}] * 6
    joined = [b if isinstance(b, bytes) else b"".join(b) for b in bodies]
    assert sorted(received) == sorted(joined * 2)
