"""The speech vendors voice teams put in cascades: Deepgram (streaming STT), Cartesia and
ElevenLabs (streaming TTS), each spoken over its own public wire protocol.

- ``deepgram/<model>`` (``DEEPGRAM_API_KEY``): the live-streaming websocket
  ``/v1/listen?model=…&encoding=linear16&sample_rate=16000&channels=1&punctuate=true``
  (``Authorization: Token KEY``). The audio goes out in 100 ms binary frames, then
  ``{"type": "CloseStream"}``; every ``Results`` message with ``is_final`` adds its words
  (``punctuated_word``, ``start``, ``end``) until the server's ``Metadata`` and close.
- ``cartesia/<model>`` (``CARTESIA_API_KEY``): ``POST /tts/bytes`` (``Cartesia-Version``,
  ``Authorization: Bearer KEY``) with ``transcript``, ``model_id``, ``voice {mode: "id",
  id}``, ``output_format {container: "raw", encoding: "pcm_s16le", sample_rate}``; the raw
  PCM is read as it streams.
- ``elevenlabs/<model>`` (``ELEVENLABS_API_KEY``): ``POST /v1/text-to-speech/{voice_id}/stream
  ?output_format=pcm_24000`` (``xi-api-key``) with ``text`` and ``model_id``; raw PCM streamed.

Endpoints: ``base_url`` (kwarg), else ``DEEPGRAM_BASE_URL`` / ``CARTESIA_BASE_URL`` /
``ELEVENLABS_BASE_URL``, else the public API. Engines are blocking (the cascade runs them in
a thread); failures are ``ProviderError``s classified like every other client's.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from voxbench.audio.transcript import Transcript, Word
from voxbench.audio.wav import Audio
from voxbench.core.errors import ProtocolError
from voxbench.core.secrets import get_secret, remember_secret
from voxbench.providers.http import (
    classify_exception,
    classify_handshake,
    make_http_client,
    raise_for_status,
)
from voxbench.providers.registry import Capability, EnvVars, Provider, Role, register

DEEPGRAM_RATE = 16_000
DEEPGRAM_FRAME = DEEPGRAM_RATE // 10 * 2  # 100 ms of PCM16
CARTESIA_VERSION = "2025-04-16"
TTS_RATE = 24_000
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
CARTESIA_VOICE = "694f9389-aac1-45b6-b726-9d9369183238"
"""The voice id of Cartesia's own quick-start examples."""
ELEVENLABS_VOICE = "JBFqnCBsd6RMkjVDRZzb"
"""The voice id of ElevenLabs' own API-reference examples."""


def _voice(voice: str | None, default: str) -> str:
    """A voice id; None or ``default`` (what a run asks when it names none) is the engine's."""
    return voice if voice and voice != "default" else default


def _key(api_key: str | None, env: str, purpose: str) -> str:
    if api_key:
        remember_secret(api_key)
        return api_key
    key = get_secret(env, purpose=purpose)
    assert key is not None
    return key


def _base(base_url: str | None, env: str, default: str) -> str:
    return (base_url or os.environ.get(env) or default).rstrip("/")


class DeepgramStreamingASR:
    """``deepgram/<model>``: Deepgram's live-streaming speech recognition."""

    def __init__(
        self,
        model: str = "nova-3",
        language: str | None = "en",
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.name = f"deepgram/{model}"
        self.model = model
        self.language = language
        self.timeout = timeout
        self._key = _key(api_key, "DEEPGRAM_API_KEY", f"speech recognition with {self.name}")
        base = _base(base_url, "DEEPGRAM_BASE_URL", "wss://api.deepgram.com")
        self.base_url = base.replace("https://", "wss://", 1).replace("http://", "ws://", 1)

    def url(self) -> str:
        query = {
            "model": self.model,
            "encoding": "linear16",
            "sample_rate": str(DEEPGRAM_RATE),
            "channels": "1",
            "punctuate": "true",
            "interim_results": "false",
        }
        if self.language:
            query["language"] = self.language
        return f"{self.base_url}/v1/listen?{urlencode(query)}"

    def transcribe(self, audio: Audio) -> Transcript:
        """Stream ``audio`` and collect the final results; raises ``ProviderError``."""
        from websockets.exceptions import ConnectionClosed, InvalidHandshake
        from websockets.sync.client import connect

        pcm = audio.mono().resampled(DEEPGRAM_RATE).to_pcm16()
        url = self.url()
        host = urlsplit(url).hostname or ""
        words: list[Word] = []
        texts: list[str] = []
        try:
            with connect(
                url,
                additional_headers={"Authorization": f"Token {self._key}"},
                open_timeout=self.timeout,
                proxy=None if host in _LOOPBACK else True,
            ) as ws:
                for i in range(0, len(pcm), DEEPGRAM_FRAME):
                    ws.send(pcm[i : i + DEEPGRAM_FRAME])
                ws.send(json.dumps({"type": "CloseStream"}))
                while True:
                    try:
                        raw = ws.recv(timeout=self.timeout)
                    except ConnectionClosed:
                        break
                    message = _json(raw, self.name)
                    if message.get("type") == "Results" and message.get("is_final"):
                        _add_results(message, texts, words, self.name)
                    elif message.get("type") == "Metadata":
                        break
        except InvalidHandshake as exc:  # refused (a classified HTTP status) or never done
            raise classify_handshake(
                exc, provider=self.name, key_vars=("DEEPGRAM_API_KEY",), url=url
            ) from exc
        except (OSError, TimeoutError) as exc:
            raise classify_exception(exc, provider=self.name) from exc
        return Transcript(text=" ".join(t for t in texts if t), words=tuple(words))


def _json(raw: str | bytes, name: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{name}: a message is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ProtocolError(f"{name}: a message is not a JSON object")
    return data


def _add_results(message: dict[str, Any], texts: list[str], words: list[Word], name: str) -> None:
    try:
        best = message["channel"]["alternatives"][0]
        texts.append(str(best.get("transcript", "")).strip())
        for w in best.get("words") or ():
            text = str(w.get("punctuated_word") or w["word"])
            words.append(Word(text, float(w["start"]), float(w["end"])))
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ProtocolError(f"{name}: a Results message lacks channel.alternatives: {exc}") from exc


class _StreamingTTS:
    """What both HTTP TTS vendors share: one blocking client, raw PCM read as it streams."""

    name: str
    sample_rate = TTS_RATE

    def __init__(self, timeout: float, http_client: httpx.Client | None) -> None:
        self._client = http_client or make_http_client(timeout, sync=True)

    def _stream_pcm(
        self, url: str, headers: dict[str, str], body: dict[str, Any], key_var: str
    ) -> Audio:
        chunks: list[bytes] = []
        try:
            with self._client.stream("POST", url, headers=headers, json=body) as response:
                if response.status_code >= 400:
                    response.read()
                raise_for_status(response, provider=f"POST {url}", key_vars=(key_var,))
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
        except httpx.HTTPError as exc:
            raise classify_exception(exc, provider=f"POST {url}") from exc
        data = b"".join(chunks)
        if len(data) % 2:
            raise ProtocolError(f"{self.name}: {len(data)} bytes are not whole 16-bit samples")
        return Audio.from_pcm16(data, self.sample_rate)


class CartesiaTTS(_StreamingTTS):
    """``cartesia/<model>``: Cartesia's text-to-speech as raw 24 kHz PCM."""

    def __init__(
        self,
        model: str = "sonic-2",
        voice: str | None = None,
        language: str = "en",
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        super().__init__(timeout, http_client)
        self.name = f"cartesia/{model}"
        self.model = model
        self.voice = _voice(voice, CARTESIA_VOICE)
        self.language = language
        self._key = _key(api_key, "CARTESIA_API_KEY", f"TTS with {self.name}")
        self.base_url = _base(base_url, "CARTESIA_BASE_URL", "https://api.cartesia.ai")

    def synthesize(self, text: str, voice: str | None = None) -> Audio:
        body = {
            "model_id": self.model,
            "transcript": text,
            "voice": {"mode": "id", "id": _voice(voice, self.voice)},
            "output_format": {
                "container": "raw",
                "encoding": "pcm_s16le",
                "sample_rate": self.sample_rate,
            },
            "language": self.language,
        }
        headers = {"Authorization": f"Bearer {self._key}", "Cartesia-Version": CARTESIA_VERSION}
        return self._stream_pcm(f"{self.base_url}/tts/bytes", headers, body, "CARTESIA_API_KEY")


class ElevenLabsTTS(_StreamingTTS):
    """``elevenlabs/<model>``: ElevenLabs' streaming text-to-speech as raw 24 kHz PCM."""

    def __init__(
        self,
        model: str = "eleven_flash_v2_5",
        voice: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        super().__init__(timeout, http_client)
        self.name = f"elevenlabs/{model}"
        self.model = model
        self.voice = _voice(voice, ELEVENLABS_VOICE)
        self._key = _key(api_key, "ELEVENLABS_API_KEY", f"TTS with {self.name}")
        self.base_url = _base(base_url, "ELEVENLABS_BASE_URL", "https://api.elevenlabs.io")

    def synthesize(self, text: str, voice: str | None = None) -> Audio:
        url = (
            f"{self.base_url}/v1/text-to-speech/{_voice(voice, self.voice)}/stream"
            f"?output_format=pcm_{self.sample_rate}"
        )
        body = {"text": text, "model_id": self.model}
        return self._stream_pcm(url, {"xi-api-key": self._key}, body, "ELEVENLABS_API_KEY")


register(
    Provider(
        name="deepgram",
        description="Deepgram",
        env=EnvVars(all_of=("DEEPGRAM_API_KEY",)),
        roles={
            Role.ASR: Capability(
                DeepgramStreamingASR,
                description="live-streaming /v1/listen websocket (final results, word timings)",
                default_model="nova-3",
                models=("nova-3", "nova-2"),
            )
        },
    )
)
register(
    Provider(
        name="cartesia",
        description="Cartesia",
        env=EnvVars(all_of=("CARTESIA_API_KEY",)),
        roles={
            Role.TTS: Capability(
                CartesiaTTS,
                description="/tts/bytes streamed as raw 24 kHz PCM",
                default_model="sonic-2",
                models=("sonic-2", "sonic-3"),
            )
        },
    )
)
register(
    Provider(
        name="elevenlabs",
        description="ElevenLabs",
        env=EnvVars(all_of=("ELEVENLABS_API_KEY",)),
        roles={
            Role.TTS: Capability(
                ElevenLabsTTS,
                description="/v1/text-to-speech/{voice}/stream as raw 24 kHz PCM",
                default_model="eleven_flash_v2_5",
                models=("eleven_flash_v2_5", "eleven_multilingual_v2"),
            )
        },
    )
)
