"""A recording wrapper around the fake servers' send and receive that checks every message.

``WireConformance.install`` wraps, for the duration of one test, the points where the fakes
receive a client message and send a server message: the websocket of each realtime fake,
and the request body and the response (whole JSON, SSE events, AWS event-stream frames)
of each HTTP fake. Each message is checked with the official SDK's type model for its
protocol (``sdk_models``); what fails is kept in ``violations``, naming the direction,
the protocol and the message. A test whose fakes are told to break the protocol on
purpose (fault injection) opts out with ``@pytest.mark.wire_nonconforming``.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.conformance import sdk_models as sdk
from voxbench.testing import (
    FakeAnthropicServer,
    FakeBedrockServer,
    FakeGeminiServer,
    FakeOpenAIServer,
)
from voxbench.testing.gemini_live import FakeGeminiLiveServer
from voxbench.testing.http_server import Request, Responder
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.realtime_common import WebsocketFake

Check = Callable[[Mapping[str, Any]], list[str]]


@dataclass(frozen=True)
class Protocol:
    """How one fake's messages are checked: client → server and server → client."""

    name: str
    client: Check
    server: Check


def _openai_http_request(path: str) -> Check | None:
    if path.endswith("/audio/speech"):
        return sdk.check_openai_speech_request
    if not path.endswith("/chat/completions"):
        return None  # /audio/transcriptions is multipart, not JSON
    deployment = "/deployments/" in path
    return lambda body: sdk.check_openai_chat_request(body, deployment=deployment)


def _openai_http_response(path: str) -> Check | None:
    if path.endswith("/audio/transcriptions"):
        return sdk.check_openai_transcription
    return sdk.check_openai_chat_response if path.endswith("/chat/completions") else None


def _bedrock_request(path: str) -> Check | None:
    from tests.conformance import bedrock_model

    operation = "ConverseStream" if path.endswith("/converse-stream") else "Converse"
    parts = path.strip("/").split("/")
    model = parts[1] if len(parts) == 3 and parts[0] == "model" else ""
    return lambda body: (
        bedrock_model.check_input(operation, body) + bedrock_model.check_model_fields(model, body)
    )


def _bedrock_response(path: str) -> Check:
    from tests.conformance import bedrock_model

    return lambda body: bedrock_model.check_output("Converse", body)


WEBSOCKET_PROTOCOLS: dict[type[WebsocketFake], Protocol] = {
    FakeOpenAIRealtimeServer: Protocol(
        "openai-realtime", sdk.check_openai_realtime_client, sdk.check_openai_realtime_server
    ),
    FakeGeminiLiveServer: Protocol(
        "gemini-live", sdk.check_gemini_live_client, sdk.check_gemini_live_server
    ),
}


XAI_REALTIME = Protocol(
    "xai-realtime", sdk.check_xai_realtime_client, sdk.check_xai_realtime_server
)


@dataclass(frozen=True)
class HttpProtocol:
    """Per route: the request check (None: not checked) and the response check."""

    name: str
    request: Callable[[str], Check | None]
    response: Callable[[str], Check | None]


HTTP_PROTOCOLS: dict[type, HttpProtocol] = {
    FakeOpenAIServer: HttpProtocol(
        "openai-chat",
        _openai_http_request,
        _openai_http_response,
    ),
    FakeAnthropicServer: HttpProtocol(
        "anthropic",
        lambda path: sdk.check_anthropic_request,
        lambda path: sdk.check_anthropic_response,
    ),
    FakeGeminiServer: HttpProtocol(
        "gemini",
        lambda path: sdk.check_gemini_generate_request,
        lambda path: sdk.check_gemini_generate_response,
    ),
    FakeBedrockServer: HttpProtocol("bedrock", _bedrock_request, _bedrock_response),
}


@dataclass
class WireConformance:
    """Every message the fakes exchanged in one test, checked; the failures kept."""

    checked: dict[str, int] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)

    def check(self, protocol: str, direction: str, check: Check, raw: str | bytes) -> None:
        """Check one JSON text message."""
        try:
            message = json.loads(raw)
        except ValueError:
            self.violations.append(f"{protocol} {direction}: not JSON: {raw[:120]!r}")
            return
        self.check_object(protocol, direction, check, message)

    def check_object(self, protocol: str, direction: str, check: Check, message: Any) -> None:
        """Check one decoded JSON message."""
        key = f"{protocol} {direction}"
        self.checked[key] = self.checked.get(key, 0) + 1
        if not isinstance(message, dict):
            self.violations.append(f"{key}: a JSON {type(message).__name__}, not an object")
            return
        problems = check(message)
        if problems:
            shown = json.dumps(message)[:300]
            self.violations.append(f"{key}: {'; '.join(problems)} in {shown}")

    # -- installing ----------------------------------------------------------------------

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Wrap the fakes' send and receive points (undone with the monkeypatch)."""
        self._install_websockets(monkeypatch)
        self._install_http(monkeypatch)

    def _install_websockets(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = WebsocketFake._handle
        conformance = self

        async def handle(fake: WebsocketFake, ws: Any) -> None:
            protocol = next(
                (p for cls, p in WEBSOCKET_PROTOCOLS.items() if isinstance(fake, cls)), None
            )
            if getattr(fake, "dialect", None) == "xai":
                protocol = XAI_REALTIME
            if protocol is None:
                await original(fake, ws)
                return
            await original(fake, _CheckedSocket(ws, protocol, conformance))

        monkeypatch.setattr(WebsocketFake, "_handle", handle)

    def _install_http(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for cls, protocol in HTTP_PROTOCOLS.items():
            monkeypatch.setattr(cls, "handle", _checked_handle(cls.handle, protocol, self))

        original_send, original_write = Responder.send, Responder.write

        async def send(responder: Responder, status: int, body: Any, **kwargs: Any) -> None:
            seen = getattr(responder, "conformance", None)
            if seen is not None and 200 <= status < 300 and isinstance(body, dict | list):
                seen.whole(body)
            await original_send(responder, status, body, **kwargs)

        async def write(responder: Responder, data: bytes | str) -> None:
            seen = getattr(responder, "conformance", None)
            if seen is not None:
                seen.stream(data)
            await original_write(responder, data)

        monkeypatch.setattr(Responder, "send", send)
        monkeypatch.setattr(Responder, "write", write)


def _checked_handle(
    original: Callable[..., Any], protocol: HttpProtocol, conformance: WireConformance
) -> Callable[..., Any]:
    async def handle(server: Any, request: Request, responder: Responder) -> None:
        request_check = protocol.request(request.path)
        if request_check is not None and request.body:
            conformance.check(protocol.name, "request", request_check, request.body)
        response_check = protocol.response(request.path)
        if response_check is not None:
            responder.conformance = _ResponseReader(  # type: ignore[attr-defined]
                protocol.name, response_check, conformance
            )
        await original(server, request, responder)

    return handle


@dataclass
class _ResponseReader:
    """Splits a response body into messages: whole JSON, SSE ``data:`` lines, AWS frames."""

    protocol: str
    check: Check
    conformance: WireConformance
    text: str = ""
    binary: bytes = b""

    def whole(self, body: Any) -> None:
        self.conformance.check_object(self.protocol, "response", self.check, body)

    def stream(self, data: bytes | str) -> None:
        if isinstance(data, bytes):
            self.binary += data
            self._frames()
            return
        self.text += data.replace("\r\n", "\n")
        while "\n\n" in self.text:
            event, self.text = self.text.split("\n\n", 1)
            for line in event.split("\n"):
                if line.startswith("data:") and line[5:].strip() != "[DONE]":
                    payload = line[5:].strip()
                    self.conformance.check(self.protocol, "response", self.check, payload)

    def _frames(self) -> None:
        from tests.conformance import bedrock_model

        while len(self.binary) >= 12:
            total, headers_length = struct.unpack(">II", self.binary[:8])
            if len(self.binary) < total:
                return
            frame, self.binary = self.binary[:total], self.binary[total:]
            headers = _frame_headers(frame[12 : 12 + headers_length])
            payload = json.loads(frame[12 + headers_length : total - 4] or b"{}")
            if headers.get(":message-type") != "event":
                continue
            event = headers.get(":event-type", "")
            self.conformance.check_object(
                self.protocol,
                "stream event",
                lambda body, event=event: bedrock_model.check_stream_event(event, body),
                payload,
            )


def _frame_headers(raw: bytes) -> dict[str, str]:
    headers: dict[str, str] = {}
    at = 0
    while at < len(raw):
        name_length = raw[at]
        name = raw[at + 1 : at + 1 + name_length].decode()
        at += 1 + name_length + 1  # the value type: our fakes send strings (7) only
        (length,) = struct.unpack(">H", raw[at : at + 2])
        headers[name] = raw[at + 2 : at + 2 + length].decode()
        at += 2 + length
    return headers


class _CheckedSocket:
    """A server-side websocket whose every message in and out is checked."""

    def __init__(self, ws: Any, protocol: Protocol, conformance: WireConformance) -> None:
        self._ws = ws
        self._protocol = protocol
        self._conformance = conformance

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ws, name)

    async def send(self, message: str | bytes) -> None:
        self._conformance.check(self._protocol.name, "server", self._protocol.server, message)
        await self._ws.send(message)

    def __aiter__(self) -> _CheckedSocket:
        self._iterator = self._ws.__aiter__()
        return self

    async def __anext__(self) -> str | bytes:
        message = await self._iterator.__anext__()
        self._conformance.check(self._protocol.name, "client", self._protocol.client, message)
        return message
