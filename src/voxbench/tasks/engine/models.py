"""The models a task run asks: audio-in chat, transcription (ASR), and ``local/oracle``.

Each endpoint of a model pool gets one ``EndpointClient`` (one HTTP client, kept alive for
the run). ``local/oracle`` lives here rather than in the provider registry because it answers
with the record's reference, which no provider request carries: it exists to prove the
pipeline (extraction, metrics, outputs) scores a perfect model at 100%.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError
from voxbench.core.names import parse_component_name
from voxbench.providers.completion import (
    AudioCompletionRequest,
    AudioConversationRequest,
    Body,
    ConversationTurn,
)
from voxbench.providers.registry import (
    Role,
    canonical_provider,
    find_provider,
    make,
    resolve_name,
)
from voxbench.tasks.config import EndpointConfig, ModelConfig
from voxbench.tasks.engine.prepare import decode_encoded
from voxbench.tasks.spec import Generation

ORACLE = "local/oracle"
Api = Literal["chat", "transcription", "oracle"]


@dataclass(frozen=True)
class Prompted:
    """What one request says besides the audio."""

    prompt: str
    system: str
    generation: Generation
    reference: str
    language: str
    voice: str | None = None
    """Ask for a spoken answer in this voice (the model's ``output_audio``)."""


@dataclass(frozen=True)
class Spoken:
    """A spoken answer: its text (the transcript) and its audio, a WAV file (None: the model
    returned no audio although asked)."""

    text: str
    wav: bytes | None


class Asker(Protocol):
    """What ``Engine._call`` asks (with its retry policy): an endpoint, or a conversation."""

    async def answer(self, audio: Audio | None, wav: bytes, request: Prompted) -> str | Spoken:
        """The model's reply (``Spoken`` when ``request.voice`` asks for speech); raises
        ``ProviderError`` on failure. ``audio`` is the clip the WAV holds, or None for a
        client whose ``wav_only`` is true (and for a conversation's turn)."""
        ...


class EndpointClient(Asker, Protocol):
    """One endpoint of a pool: answers a clip and a prompt with text (or speech)."""

    async def aclose(self) -> None:
        """Release connections."""
        ...


class BodyEndpointClient(EndpointClient, Protocol):
    """An endpoint with a ``body_builder``: it is also handed the request body."""

    async def answer(
        self, audio: Audio | None, wav: bytes, request: Prompted, body: Body | None = None
    ) -> str | Spoken:
        """``EndpointClient.answer``; ``body``: the request body its ``body_builder`` made of
        ``request_of(wav, request)``."""
        ...


def model_api(model: ModelConfig, *, field: str) -> Api:
    """How ``model`` is asked: its ``api`` key, else what its provider can do."""
    if model.model == ORACLE:
        return "oracle"
    provider, parsed = resolve_name(model.model, Role.AUDIO_COMPLETION, Role.ASR, field=field)
    if model.api is not None:
        role = Role.AUDIO_COMPLETION if model.api == "chat" else Role.ASR
        if role not in provider.roles:
            raise ConfigError(
                f"{model.model} cannot be used with api: {model.api}",
                field=field.replace(".model", ".api"),
                expected="chat" if Role.AUDIO_COMPLETION in provider.roles else "transcription",
            )
        return model.api
    if Role.ASR not in provider.roles:
        return "chat"
    if Role.AUDIO_COMPLETION not in provider.roles:
        return "transcription"
    known = provider.roles[Role.ASR].models
    asr_like = parsed.model in known or "whisper" in parsed.model or "transcribe" in parsed.model
    return "transcription" if asr_like else "chat"


def served_by(model: ModelConfig) -> list[str]:
    """The servers that answer ``model`` (the response cache keys on them): each endpoint's
    ``base_url`` (no trailing ``/``), else the URL its provider would use (the env var that
    overrides the default, or the default). ``local/...`` models are served here: none."""
    if model.model == ORACLE or model.model.startswith("local/"):
        return []
    urls = set()
    provider = find_provider(canonical_provider(parse_component_name(model.model).provider))
    for endpoint in model.pool():
        url = endpoint.base_url
        if not url and provider is not None:
            found = (os.environ.get(v) for v in provider.base_url_vars)
            url = next((v for v in found if v), None) or provider.default_base_url or ""
        urls.add(url.rstrip("/"))
    return sorted(urls)


class ChatEndpoint:
    """An audio-in completion provider (OpenAI-compatible ``input_audio``, Gemini inline audio)."""

    wav_only = True
    """It sends the WAV payload only: the engine need not hand it the samples too."""

    def __init__(self, model: ModelConfig, endpoint: EndpointConfig, **extra: Any) -> None:
        kwargs: dict[str, Any] = {
            "timeout": model.timeout_s,
            "max_connections": endpoint.max_concurrency,
            **extra,
        }
        if endpoint.base_url:
            kwargs["base_url"] = endpoint.base_url
        if endpoint.api_key:
            kwargs["api_key"] = endpoint.api_key
        self.client = make(Role.AUDIO_COMPLETION, model.model, **kwargs)
        self.body_builder = getattr(self.client, "body_builder", None)
        """Encodes a request's body (``request_of``'s), picklable for the worker processes;
        None when the provider takes no prepared body."""

    def request_of(
        self, wav: bytes, request: Prompted, body: Body | None = None
    ) -> AudioCompletionRequest:
        """The provider request asking ``request`` about the clip ``wav`` holds (``body``:
        its encoding, made ahead by ``body_builder``)."""
        return AudioCompletionRequest(
            audio_wav=wav,
            prompt=request.prompt,
            system=request.system,
            temperature=request.generation.temperature,
            max_tokens=request.generation.max_tokens,
            output_voice=request.voice,
            prepared_body=body,
        )

    async def answer(
        self, audio: Audio | None, wav: bytes, request: Prompted, body: Body | None = None
    ) -> str | Spoken:
        completion = await self.client.complete_audio(self.request_of(wav, request, body))
        if request.voice is not None:
            return Spoken(completion.text, completion.audio_wav)
        return completion.text

    async def converse(self, turns: tuple[ConversationTurn, ...], request: Prompted) -> str:
        """The reply to the last user turn of a multi-turn conversation."""
        completion = await self.client.complete_conversation(
            AudioConversationRequest(
                turns=turns,
                system=request.system,
                temperature=request.generation.temperature,
                max_tokens=request.generation.max_tokens,
            )
        )
        return completion.text

    async def aclose(self) -> None:
        await self.client.aclose()


class TranscriptionEndpoint:
    """An ASR engine (``local/whisper-tiny.en``, OpenAI ``/audio/transcriptions``); no prompt.

    An engine with ``atranscribe`` (OpenAI's) is awaited on the event loop, like the chat
    clients, with ``max_concurrency`` kept-alive connections; a blocking one (a CPU model, a
    vendor's sync client) runs in this endpoint's own ``max_concurrency`` threads: never the
    loop's default pool, whose few threads (cores + 4) would cap the requests in flight.
    """

    def __init__(self, model: ModelConfig, endpoint: EndpointConfig) -> None:
        kwargs: dict[str, Any] = {}
        if not model.model.startswith("local/"):
            kwargs["timeout"] = model.timeout_s
            if endpoint.base_url:
                kwargs["base_url"] = endpoint.base_url
            if endpoint.api_key:
                kwargs["api_key"] = endpoint.api_key
        self.engine = make(Role.ASR, model.model, **kwargs)
        self._async = getattr(self.engine, "atranscribe", None)
        connections = getattr(self.engine, "keep_connections", None)
        if callable(connections):
            connections(endpoint.max_concurrency)
        self._threads = (
            ThreadPoolExecutor(endpoint.max_concurrency, thread_name_prefix="voxbench-asr")
            if self._async is None
            else None
        )

    async def _transcribe(self, audio: Audio) -> str:
        if self._async is not None:
            return str((await self._async(audio)).text)
        loop = asyncio.get_running_loop()
        transcript = await loop.run_in_executor(self._threads, self.engine.transcribe, audio)
        return str(transcript.text)

    async def answer(self, audio: Audio | None, wav: bytes, request: Prompted) -> str:
        assert audio is not None  # it is not ``wav_only``: the engine hands it the samples
        return await self._transcribe(audio)

    async def converse(self, turns: tuple[ConversationTurn, ...], request: Prompted) -> str:
        """A transcription model hears no conversation: it transcribes the last turn's audio
        (nothing, for a text-only turn), as it transcribes the clip of any other task."""
        wav = turns[-1].audio_wav
        if wav is None:
            return ""
        return await self._transcribe(decode_encoded(wav, None, "turn audio"))

    async def aclose(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
        aclose = getattr(self.engine, "aclose", None)
        if callable(aclose):
            await aclose()
            return
        close = getattr(self.engine, "close", None)
        if callable(close):
            await asyncio.to_thread(close)


class OracleEndpoint:
    """``local/oracle``: replies with the record's reference, whatever it hears."""

    async def answer(self, audio: Audio | None, wav: bytes, request: Prompted) -> str:
        return request.reference

    async def converse(self, turns: tuple[ConversationTurn, ...], request: Prompted) -> str:
        """The reference reply of the turn asked (the engine puts it in ``reference``)."""
        return request.reference

    async def aclose(self) -> None:
        return None


def make_endpoint(model: ModelConfig, endpoint: EndpointConfig, api: Api) -> EndpointClient:
    """The client of one endpoint of ``model``."""
    if api == "oracle":
        return OracleEndpoint()
    if api == "transcription":
        return TranscriptionEndpoint(model, endpoint)
    return ChatEndpoint(model, endpoint)
