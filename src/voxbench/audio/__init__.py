"""Audio room: WAV I/O that survives real files, resampling, VAD, tags, TTS, ASR and WER.

Speech engines by name (``local/espeak``, ``openai/whisper-1``): ``voxbench.providers.speech``.

Heavy dependencies (onnxruntime, faster-whisper, eSpeak, scipy) load on first use, so
importing this package stays cheap.
"""

from voxbench.audio.asr import ASREngine, Transcript, Word
from voxbench.audio.resample import resample
from voxbench.audio.tags import find_tags, make_tag, mix_tag
from voxbench.audio.tts import TTSEngine
from voxbench.audio.vad import SileroVAD, SpeechSegment, detect_speech
from voxbench.audio.wav import Audio, concatenate, read_wav, write_wav
from voxbench.audio.wer import word_error_rate

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
