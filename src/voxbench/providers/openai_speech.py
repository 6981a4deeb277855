"""OpenAI speech endpoints over HTTP: ``/audio/speech`` (TTS) and ``/audio/transcriptions`` (ASR).

``base_url`` follows the OpenAI SDK convention (it includes ``/v1``); it falls back to
``OPENAI_BASE_URL`` and then to the public API. The key is the ``api_key`` argument or
``OPENAI_API_KEY``; without one, construction raises ``PrerequisiteError`` naming it.
"""

from __future__ import annotations

import io
import os
from typing import Any

import httpx
import soundfile as sf

from voxbench.audio.transcript import Transcript, Word
from voxbench.audio.wav import Audio
from voxbench.core.errors import ProtocolError
from voxbench.core.secrets import get_secret, remember_secret
from voxbench.providers.http import classify_exception, make_http_client, raise_for_status

DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_PCM_RATE = 24_000
UPLOAD_RATE = 16_000  # what the transcription models work at; keeps uploads small
WORD_TIMESTAMP_MODELS = ("whisper-1",)  # the gpt-4o transcribe models only answer plain json


class _OpenAIAudioClient:
    """Key, base URL and one blocking HTTP client, shared by both engines (and an async one,
    made on first use, for callers on an event loop: ``apost``)."""

    def __init__(
        self,
        purpose: str,
        api_key: str | None,
        base_url: str | None,
        timeout: float,
        http_client: httpx.Client | None,
        max_connections: int | None = None,
    ) -> None:
        if api_key:
            remember_secret(api_key)
        key = api_key or get_secret("OPENAI_API_KEY", purpose=purpose)
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        self._client = http_client or make_http_client(timeout, sync=True)
        self._headers = {"Authorization": f"Bearer {key}"}
        self._timeout = timeout
        self.max_connections = max_connections
        """Kept-alive connections of the async client (None: httpx's default)."""
        self._async: httpx.AsyncClient | None = None

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        """POST once; a failure raises a ``ProviderError`` classified by ``providers.http``.

        No retries here: the caller decides (a retryable error says so, with its
        ``retry_after``), as the callers of every other provider client do.
        """
        url = f"{self.base_url}{path}"
        try:
            response = self._client.post(url, headers=self._headers, **kwargs)
        except httpx.HTTPError as exc:
            raise classify_exception(exc, provider=f"POST {url}") from exc
        raise_for_status(response, provider=f"POST {url}", key_vars=("OPENAI_API_KEY",))
        return response

    async def apost(self, path: str, **kwargs: Any) -> httpx.Response:
        """``post`` on the async client: as many requests in flight as the caller awaits
        (``max_connections`` of them on kept-alive connections), no thread each."""
        if self._async is None:
            self._async = make_http_client(self._timeout, max_connections=self.max_connections)
        url = f"{self.base_url}{path}"
        try:
            response = await self._async.post(url, headers=self._headers, **kwargs)
        except httpx.HTTPError as exc:
            raise classify_exception(exc, provider=f"POST {url}") from exc
        raise_for_status(response, provider=f"POST {url}", key_vars=("OPENAI_API_KEY",))
        return response

    def close(self) -> None:
        self._client.close()

    async def aclose(self) -> None:
        """Close both clients."""
        self._client.close()
        if self._async is not None:
            await self._async.aclose()


class OpenAISpeech:
    """``openai/<model>`` text-to-speech as 24 kHz mono PCM."""

    sample_rate = OPENAI_PCM_RATE

    def __init__(
        self,
        model: str = "tts-1",
        voice: str = "alloy",
        speed: float | None = None,
        instructions: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.name = f"openai/{model}"
        self.model = model
        self.voice = voice
        self.speed = speed
        self.instructions = instructions
        self._api = _OpenAIAudioClient(
            f"TTS with {self.name}", api_key, base_url, timeout, http_client
        )

    @property
    def base_url(self) -> str:
        """The server synthesis is asked of (``…/v1``)."""
        return self._api.base_url

    def synthesize(self, text: str, voice: str | None = None) -> Audio:
        """Speak ``text``; raises ``ProviderError`` on an HTTP failure."""
        body: dict[str, Any] = {
            "model": self.model,
            "input": text,
            "voice": voice or self.voice,
            "response_format": "pcm",
        }
        if self.speed is not None:
            body["speed"] = self.speed
        if self.instructions:
            body["instructions"] = self.instructions
        response = self._api.post("/audio/speech", json=body)
        data = response.content
        if len(data) % 2:
            raise ProtocolError(
                f"{self.name}: /audio/speech returned {len(data)} bytes, not whole 16-bit samples"
            )
        return Audio.from_pcm16(data, OPENAI_PCM_RATE)


class OpenAITranscription:
    """``openai/<model>`` speech recognition; word timings where the model gives them."""

    def __init__(
        self,
        model: str = "whisper-1",
        language: str | None = "en",
        prompt: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 120.0,
        http_client: httpx.Client | None = None,
        max_connections: int | None = None,
    ) -> None:
        self.name = f"openai/{model}"
        self.model = model
        self.language = language
        self.prompt = prompt
        self._api = _OpenAIAudioClient(
            f"transcription with {self.name}",
            api_key,
            base_url,
            timeout,
            http_client,
            max_connections,
        )

    @property
    def base_url(self) -> str:
        """The server transcription is asked of (``…/v1``)."""
        return self._api.base_url

    def transcribe(self, audio: Audio) -> Transcript:
        """Text (and word timings with whisper-1) of ``audio``."""
        response = self._api.post("/audio/transcriptions", **self._request(audio))
        return _parse_transcription(self.name, response)

    async def atranscribe(self, audio: Audio) -> Transcript:
        """``transcribe`` on the event loop (the async HTTP client)."""
        response = await self._api.apost("/audio/transcriptions", **self._request(audio))
        return _parse_transcription(self.name, response)

    def keep_connections(self, count: int) -> None:
        """Keep ``count`` connections alive in the async client (its requests in flight)."""
        self._api.max_connections = count

    def close(self) -> None:
        """Close the blocking HTTP client."""
        self._api.close()

    async def aclose(self) -> None:
        """Close both HTTP clients."""
        await self._api.aclose()

    def _request(self, audio: Audio) -> dict[str, Any]:
        """The multipart form of a transcription request."""
        buffer = io.BytesIO()
        sf.write(
            buffer, audio.mono().resampled(UPLOAD_RATE).samples, UPLOAD_RATE, "PCM_16", format="WAV"
        )
        timed = self.model in WORD_TIMESTAMP_MODELS
        fields: dict[str, str | list[str]] = {
            "model": self.model,
            "response_format": "verbose_json" if timed else "json",
        }
        if timed:
            fields["timestamp_granularities[]"] = ["word"]
        if self.language:
            fields["language"] = self.language
        if self.prompt:
            fields["prompt"] = self.prompt
        return {"data": fields, "files": {"file": ("audio.wav", buffer.getvalue(), "audio/wav")}}


def _parse_transcription(name: str, response: httpx.Response) -> Transcript:
    try:
        body = response.json()
    except ValueError as exc:
        raise ProtocolError(f"{name}: transcription response is not JSON") from exc
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        raise ProtocolError(f"{name}: transcription response has no 'text' string")
    words = []
    for i, raw in enumerate(body.get("words") or ()):
        try:
            words.append(Word(str(raw["word"]).strip(), float(raw["start"]), float(raw["end"])))
        except (KeyError, TypeError, ValueError) as exc:
            raise ProtocolError(
                f"{name}: transcription words[{i}] lacks word/start/end: {raw!r}"
            ) from exc
    return Transcript(text=body["text"].strip(), words=tuple(words), language=body.get("language"))
