"""Audio room: WAV I/O that survives real files, resampling, VAD, tags, TTS, ASR and WER.

Speech engines by name (``local/espeak``, ``openai/whisper-1``): ``voxbench.providers.speech``.

Heavy dependencies (onnxruntime, faster-whisper, eSpeak, scipy) load on first use, so
importing this package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from voxbench.audio.asr import ASREngine, Transcript, Word
    from voxbench.audio.resample import resample
    from voxbench.audio.tags import find_tags, make_tag, mix_tag
    from voxbench.audio.tts import TTSEngine
    from voxbench.audio.vad import SileroVAD, SpeechSegment, detect_speech
    from voxbench.audio.wav import Audio, concatenate, read_wav, write_wav
    from voxbench.audio.wer import word_error_rate

_HOMES = {
    "ASREngine": "voxbench.audio.asr",
    "Audio": "voxbench.audio.wav",
    "SileroVAD": "voxbench.audio.vad",
    "SpeechSegment": "voxbench.audio.vad",
    "TTSEngine": "voxbench.audio.tts",
    "Transcript": "voxbench.audio.asr",
    "Word": "voxbench.audio.asr",
    "concatenate": "voxbench.audio.wav",
    "detect_speech": "voxbench.audio.vad",
    "find_tags": "voxbench.audio.tags",
    "make_tag": "voxbench.audio.tags",
    "mix_tag": "voxbench.audio.tags",
    "read_wav": "voxbench.audio.wav",
    "resample": "voxbench.audio.resample",
    "word_error_rate": "voxbench.audio.wer",
    "write_wav": "voxbench.audio.wav",
}
"""Each name this package exports → its module, imported on first use (PEP 562): a task run
that only reads WAVs does not import the ASR, VAD and TTS modules."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "ASREngine",
    "Audio",
    "SileroVAD",
    "SpeechSegment",
    "TTSEngine",
    "Transcript",
    "Word",
    "concatenate",
    "detect_speech",
    "find_tags",
    "make_tag",
    "mix_tag",
    "read_wav",
    "resample",
    "word_error_rate",
    "write_wav",
]
