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

from voxbench.audio.asr import ASREngine
from voxbench.audio.vad import detect_speech
from voxbench.audio.wav import Audio, read_wav
from voxbench.fullduplex.annotations import AsrTranscript, TimedWord, load_asr, save_asr
from voxbench.providers.speech import get_asr

log = logging.getLogger(__name__)

FULL_OUTPUT_JSON = "output_full.json"
DEFAULT_ASR = "local/whisper-tiny.en"
REGION_GAP_MS = 700
REGION_MARGIN_S = 0.2


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
        """Words of ``wav`` from ``crop_from`` seconds on, timed on the wav's own timeline.

        Each speech region (found by Silero VAD) is transcribed on its own: over long
        silences Whisper glues words of separate answers together (one "word" spanning
        seconds) or invents words, which would corrupt every timing measured from them.
        """
        audio = read_wav(wav).mono()
        if crop_from > 0:
            audio = audio.slice(crop_from)
        chunks: list[TimedWord] = []
        texts: list[str] = []
        for start, end in speech_regions(audio):
            result = self._engine().transcribe(audio.slice(start, end))
            offset = crop_from + start
            texts.append(result.text.strip())
            chunks.extend(
                TimedWord(
                    text=w.text,
                    timestamp=(round(w.start + offset, 3), round(w.end + offset, 3)),
                )
                for w in result.words
            )
        return AsrTranscript(text=" ".join(t for t in texts if t), chunks=chunks)

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


def speech_regions(audio: Audio) -> list[tuple[float, float]]:
    """Stretches of ``audio`` to transcribe: speech separated by at least ``REGION_GAP_MS``
    of silence, each with ``REGION_MARGIN_S`` of context on both sides."""
    segments = detect_speech(audio, min_silence_ms=REGION_GAP_MS)
    regions: list[tuple[float, float]] = []
    for seg in segments:
        start = max(0.0, seg.start - REGION_MARGIN_S)
        end = min(audio.duration, seg.end + REGION_MARGIN_S)
        if regions and start <= regions[-1][1]:
            regions[-1] = (regions[-1][0], end)
        else:
            regions.append((start, end))
    return regions


def transcript_text(words: list[TimedWord]) -> str:
    """The words joined as one text (ASR chunks keep their own spacing and punctuation)."""
    return " ".join(w.text.strip() for w in words if w.text.strip())
