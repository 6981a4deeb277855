"""Fake cascade speech vendors on 127.0.0.1: Deepgram's live-streaming STT websocket, and
Cartesia's and ElevenLabs' streaming TTS endpoints.

- ``FakeDeepgramServer``: ``/v1/listen`` refuses a handshake without ``Authorization: Token
  KEY`` (401) or without ``encoding=linear16`` and a ``sample_rate`` (400); it takes binary
  audio until ``{"type": "CloseStream"}``, then sends one final ``Results`` (the script's
  transcript for that request, words spread evenly over the audio received) and a
  ``Metadata`` message, and closes. ``KeepAlive`` is accepted and answered with nothing.
- ``FakeCartesiaServer``: ``POST /tts/bytes`` needs ``Cartesia-Version`` and a bearer key,
  and a body with ``model_id``, ``transcript``, ``voice {mode: "id", id}`` and a raw
  ``pcm_s16le`` ``output_format``; it streams PCM (tone bursts whose length follows the
  text) in chunks.
- ``FakeElevenLabsServer``: ``POST /v1/text-to-speech/{voice_id}/stream?output_format=
  pcm_<rate>`` with ``xi-api-key`` and ``{text, model_id}``; streams PCM likewise.

Each keeps what it received (``requests``) for the tests.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request as WsRequest
from websockets.http11 import Response as WsResponse

from voxbench.testing.http_server import HTTPServer, Request, Responder
from voxbench.testing.realtime_common import WebsocketFake, split_chunks, synth_speech


class FakeDeepgramServer(WebsocketFake):
    """Deepgram's ``/v1/listen`` streaming websocket."""

    provider = "deepgram"

    @property
    def url(self) -> str:
        """The engine's ``base_url``."""
        return f"ws://{self.host}:{self.port}"

    def check(self, connection: ServerConnection, request: WsRequest) -> WsResponse | None:
        url = urlsplit(request.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        auth = request.headers.get("Authorization", "")
        self.handshakes.append({"path": url.path, "query": query, "auth": auth.split(" ")[0]})
        key = auth.removeprefix("Token ").strip() if auth.startswith("Token ") else ""
        if not key or (self.api_key is not None and key != self.api_key):
            return connection.respond(HTTPStatus.UNAUTHORIZED, "invalid credentials\n")
        if url.path != "/v1/listen":
            return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
        if query.get("encoding") != "linear16" or not query.get("sample_rate", "").isdigit():
            return connection.respond(HTTPStatus.BAD_REQUEST, "raw audio needs encoding, rate\n")
        return None

    def new_session(self, ws: ServerConnection) -> _Listen:
        return _Listen(self, ws)


class _Listen:
    def __init__(self, server: FakeDeepgramServer, ws: ServerConnection) -> None:
        self.server = server
        self.ws = ws
        query = parse_qs(urlsplit(ws.request.path).query) if ws.request else {}
        self.rate = int(query.get("sample_rate", ["16000"])[0])
        self.model = query.get("model", ["nova-3"])[0]
        self.audio_bytes = 0

    async def run(self) -> None:
        async for raw in self.ws:
            if isinstance(raw, bytes):
                self.audio_bytes += len(raw)
                continue
            message = json.loads(raw)
            self.server.received.append(message)
            if message.get("type") == "CloseStream":
                await self.finish()
                return

    async def finish(self) -> None:
        self.server.responses += 1
        text = self.server.script.transcribe(self.server.responses)
        duration = self.audio_bytes / 2 / self.rate
        tokens = text.split()
        step = duration / max(1, len(tokens))
        words = [
            {
                "word": re.sub(r"[^\w'-]", "", token).lower() or token,
                "start": round(i * step, 3),
                "end": round((i + 1) * step, 3),
                "confidence": 0.99,
                "punctuated_word": token,
            }
            for i, token in enumerate(tokens)
        ]
        request_id = str(uuid.uuid4())
        results = {
            "type": "Results",
            "channel_index": [0, 1],
            "duration": round(duration, 3),
            "start": 0.0,
            "is_final": True,
            "speech_final": True,
            "channel": {"alternatives": [{"transcript": text, "confidence": 0.99, "words": words}]},
            "metadata": {
                "request_id": request_id,
                "model_info": {"name": self.model, "version": "fake", "arch": "fake"},
                "model_uuid": str(uuid.uuid4()),
            },
        }
        await self.ws.send(json.dumps(results))
        metadata = {
            "type": "Metadata",
            "transaction_key": "deprecated",
            "request_id": request_id,
            "sha256": "0" * 64,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "duration": round(duration, 3),
            "channels": 1,
        }
        await self.ws.send(json.dumps(metadata))
        await self.ws.close(1000)

    async def stop(self) -> None:
        return None


class _FakeTTS(HTTPServer):
    """What both fake TTS vendors share: key check, request log, PCM streamed in chunks."""

    def __init__(
        self, *, api_key: str | None = None, host: str = "127.0.0.1", port: int = 0, **_: Any
    ) -> None:
        super().__init__(host, port)
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return self.origin

    def key_ok(self, key: str | None) -> bool:
        return bool(key) and (self.api_key is None or key == self.api_key)

    async def stream_speech(self, responder: Responder, text: str, rate: int) -> None:
        await responder.start(200, "application/octet-stream")
        for chunk in split_chunks(synth_speech(text, rate), rate, 100):
            await responder.write(chunk)
        await responder.end()


class FakeCartesiaServer(_FakeTTS):
    """Cartesia's ``POST /tts/bytes``."""

    async def handle(self, request: Request, responder: Responder) -> None:
        if request.method != "POST" or request.path != "/tts/bytes":
            await responder.send(404, {"error": "not found"})
            return
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not self.key_ok(bearer or request.headers.get("x-api-key")):
            await responder.send(401, {"error": "invalid API key"})
            return
        if not request.headers.get("cartesia-version"):
            await responder.send(400, {"error": "Cartesia-Version header is required"})
            return
        body = request.json()
        problem = _cartesia_problem(body)
        if problem:
            await responder.send(400, {"error": problem})
            return
        self.requests.append(body)
        fmt = body["output_format"]
        await self.stream_speech(responder, body["transcript"], int(fmt["sample_rate"]))


def _cartesia_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    for field in ("model_id", "transcript", "voice", "output_format"):
        if field not in body:
            return f"{field} is required"
    voice = body["voice"]
    if not isinstance(voice, dict) or voice.get("mode") != "id" or not voice.get("id"):
        return "voice must be {mode: id, id}"
    fmt = body["output_format"]
    if not isinstance(fmt, dict) or fmt.get("container") != "raw":
        return "this fake streams raw audio only"
    if fmt.get("encoding") != "pcm_s16le" or not isinstance(fmt.get("sample_rate"), int):
        return "output_format needs encoding pcm_s16le and an integer sample_rate"
    return None


class FakeElevenLabsServer(_FakeTTS):
    """ElevenLabs' ``POST /v1/text-to-speech/{voice_id}/stream``."""

    _PATH = re.compile(r"/v1/text-to-speech/([^/]+)/stream")

    async def handle(self, request: Request, responder: Responder) -> None:
        match = self._PATH.fullmatch(request.path)
        if request.method != "POST" or match is None:
            await responder.send(404, {"detail": "Not Found"})
            return
        if not self.key_ok(request.headers.get("xi-api-key")):
            await responder.send(401, {"detail": {"status": "invalid_api_key"}})
            return
        fmt = request.query.get("output_format", "mp3_44100_128")
        if not re.fullmatch(r"pcm_\d+", fmt):
            await responder.send(400, {"detail": "this fake streams pcm_<rate> only"})
            return
        body = request.json()
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            await responder.send(422, {"detail": "text is required"})
            return
        self.requests.append({"voice_id": match.group(1), "output_format": fmt, **body})
        await self.stream_speech(responder, body["text"], int(fmt.removeprefix("pcm_")))
