"""Text-to-speech engines behind one protocol, and the offline one.

``local/espeak`` is eSpeak NG through ctypes (22.05 kHz), offline and instant. Engines are
looked up by ``provider/model`` through the provider registry
(``voxbench.providers.speech.get_tts``), which also holds the HTTP engines (``openai/…``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError

__all__ = ["DEFAULT_VOICES", "LOCAL_TTS_MODELS", "TTSEngine", "local_tts"]

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


def local_tts(model: str, **kwargs: Any) -> TTSEngine:
    """The offline TTS engine ``local/<model>`` (eSpeak NG); kwargs go to its constructor."""
    if model not in LOCAL_TTS_MODELS:
        raise ConfigError(
            f"unknown local TTS model {model!r}", field="tts", expected="local/espeak"
        )
    from voxbench.audio.espeak import EspeakTTS

    return EspeakTTS(**kwargs)
