"""The model's words with timestamps: read from an ASR file, or transcribed and written.

The corpus convention: ``output.json`` beside ``output.wav`` holds the words of the whole
output on its timeline, except for user interruption, where the public ASR step
transcribes only the audio after the interrupt ends (and shifts the times back onto the
original timeline). voxbench mode needs the whole interruption output too (to see the model
talk over the interrupt), which it keeps in ``output_full.json``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from voxbench.audio.asr import ASREngine, get_asr
from voxbench.audio.wav import read_wav
from voxbench.fullduplex.annotations import AsrTranscript, TimedWord, load_asr, save_asr

log = logging.getLogger(__name__)

FULL_OUTPUT_JSON = "output_full.json"
DEFAULT_ASR = "local/whisper-tiny.en"


class TranscriptStore:
    """Gives the words of an output wav, transcribing it (once) when its ASR file is missing."""

    def __init__(self, asr: str | ASREngine = DEFAULT_ASR, *, write: bool = True) -> None:
        self._asr_spec = asr
        self._asr: ASREngine | None = asr if not isinstance(asr, str) else None
        self.write = write
        self.transcribed: list[Path] = []

    @property
    def asr_name(self) -> str:
        return self._asr_spec if isinstance(self._asr_spec, str) else self._asr_spec.name

    def _engine(self) -> ASREngine:
        if self._asr is None:
            self._asr = get_asr(str(self._asr_spec))
        return self._asr

    def transcribe(self, wav: Path, *, crop_from: float = 0.0) -> AsrTranscript:
        """Words of ``wav`` from ``crop_from`` seconds on, timed on the wav's own timeline."""
        audio = read_wav(wav).mono()
        if crop_from > 0:
            audio = audio.slice(crop_from)
        result = self._engine().transcribe(audio) if audio.frames else None
        if result is None:
            return AsrTranscript(text="", chunks=[])
        chunks = [
            TimedWord(
                text=w.text,
                timestamp=(round(w.start + crop_from, 3), round(w.end + crop_from, 3)),
            )
            for w in result.words
        ]
        return AsrTranscript(text=result.text, chunks=chunks)

    def words(
        self, json_path: Path, wav_path: Path, *, crop_from: float = 0.0
    ) -> list[TimedWord] | None:
        """Words from ``json_path``; when it is missing, transcribe ``wav_path`` and write it.

        None when neither file exists.
        """
        if json_path.is_file():
            return list(load_asr(json_path).chunks)
        if not wav_path.is_file():
            return None
        transcript = self.transcribe(wav_path, crop_from=crop_from)
        if self.write:
            save_asr(json_path, transcript)
            self.transcribed.append(json_path)
            log.info("transcribed %s → %s", wav_path, json_path.name)
        return list(transcript.chunks)


def transcript_text(words: list[TimedWord]) -> str:
    """The words joined as one text (ASR chunks keep their own spacing and punctuation)."""
    return " ".join(w.text.strip() for w in words if w.text.strip())
