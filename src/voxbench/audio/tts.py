"""Text-to-speech engines behind one protocol, named ``provider/model``.

- ``local/espeak``: eSpeak NG through ctypes (22.05 kHz), offline and instant.
- ``openai/<model>`` (``tts-1``, ``tts-1-hd``, ``gpt-4o-mini-tts``): ``/v1/audio/speech``
  as raw 24 kHz PCM; needs ``OPENAI_API_KEY``; ``base_url`` points it at any compatible server.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from voxbench.audio.asr import split_engine_name
from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError

__all__ = ["TTSEngine", "default_voice", "get_tts"]

LOCAL_TTS_MODELS = ("espeak", "espeak-ng")
DEFAULT_VOICES = {"local": "en-us", "openai": "alloy"}


@runtime_checkable
class TTSEngine(Protocol):
    """Anything that speaks text."""

    name: str
    sample_rate: int

    def synthesize(self, text: str, voice: str | None = None) -> Audio:
        """``text`` spoken by ``voice`` (the engine's default when None)."""
        ...


def default_voice(name: str) -> str:
    """The voice engine ``name`` speaks with when none is given (without building the engine)."""
    provider, _ = split_engine_name(name)
    return DEFAULT_VOICES.get(provider, "default")


def get_tts(name: str = "local/espeak", **kwargs: Any) -> TTSEngine:
    """The TTS engine called ``name``; kwargs go to its constructor (``voice``, ``base_url``...)."""
    provider, model = split_engine_name(name)
    if provider == "local":
        if model not in LOCAL_TTS_MODELS:
            raise ConfigError(
                f"unknown local TTS model {model!r}", field="tts", expected="local/espeak"
            )
        from voxbench.audio.espeak import EspeakTTS

        return EspeakTTS(**kwargs)
    if provider == "openai":
        from voxbench.audio.openai_speech import OpenAISpeech

        return OpenAISpeech(model=model, **kwargs)
    raise ConfigError(
        f"unknown TTS provider {provider!r}",
        field="tts",
        expected="local/espeak or openai/<model> (tts-1, tts-1-hd, gpt-4o-mini-tts)",
    )
