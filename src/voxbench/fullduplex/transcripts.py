"""The model's words with timestamps: read from an ASR file, or transcribed (and kept apart).

The corpus convention: ``output.json`` beside ``output.wav`` holds the words of the whole
output on its timeline, except for user interruption, where the public ASR step
transcribes only the audio after the interrupt ends (and shifts the times back onto the
original timeline). voxbench mode needs the whole interruption output too (to see the model
talk over the interrupt), which it calls ``output_full.json``.

An ASR file found beside the wav is read as it is. What voxbench transcribes itself is never
written into the corpus: it goes to a derived file (under the scoring's results directory)
that records the engine and the SHA-256 of the audio it heard, and is reused only for that
same audio. With no engine (``asr=None``, the metadata mode) nothing is transcribed.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from pathlib import Path

from voxbench.audio.asr import ASREngine
from voxbench.audio.vad import detect_speech
from voxbench.audio.wav import Audio, read_wav
from voxbench.core.errors import ConfigError
from voxbench.fullduplex.annotations import AsrTranscript, TimedWord, load_asr, save_asr
from voxbench.providers.speech import get_asr

log = logging.getLogger(__name__)

FULL_OUTPUT_JSON = "output_full.json"
DEFAULT_ASR = "local/whisper-tiny.en"
REGION_GAP_MS = 700
REGION_MARGIN_S = 0.2


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class TranscriptStore:
    """Gives the words of an output wav, transcribing it (once) when no ASR file has them.

    ``asr=None`` is the metadata mode: words come only from existing ASR files."""

    def __init__(self, asr: str | ASREngine | None = DEFAULT_ASR, *, write: bool = True) -> None:
        self._asr_spec = asr
        self._asr: ASREngine | None = asr if not isinstance(asr, str) else None
        self.write = write
        self.transcribed: list[Path] = []
        """Derived files written by this store (one per transcription it ran)."""
        self.engines: Counter[str] = Counter()
        """Engine name → transcripts by that engine that scoring used (made now or reused)."""

    @property
    def asr_name(self) -> str | None:
        """The engine this store transcribes with; None in the metadata mode."""
        if self._asr_spec is None or isinstance(self._asr_spec, str):
            return self._asr_spec
        return self._asr_spec.name

    @property
    def can_transcribe(self) -> bool:
        return self._asr_spec is not None

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
        self,
        json_path: Path,
        wav_path: Path,
        *,
        crop_from: float = 0.0,
        derived: Path | None = None,
    ) -> list[TimedWord] | None:
        """Words from ``json_path`` (the corpus's ASR file); else from ``derived`` when it was
        made from this very wav; else transcribe ``wav_path`` and keep it in ``derived``.

        None when there is no ASR file and nothing to transcribe (no wav, or no engine)."""
        if json_path.is_file():
            return list(load_asr(json_path).chunks)
        if not wav_path.is_file():
            return None
        source = {"file": wav_path.name, "sha256": _sha256(wav_path), "crop_from": crop_from}
        if derived is not None:
            reused = _read_derived(derived, source)
            if reused is not None:
                engine, transcript = reused
                self.engines[engine] += 1
                return list(transcript.chunks)
        if not self.can_transcribe:
            return None
        transcript = self.transcribe(wav_path, crop_from=crop_from)
        name = str(self.asr_name)
        self.engines[name] += 1
        if self.write and derived is not None:
            save_asr(derived, transcript, {"asr": name, "source": source})
            self.transcribed.append(derived)
            log.info("transcribed %s with %s → %s", wav_path, name, derived)
        return list(transcript.chunks)


def _read_derived(path: Path, source: dict[str, object]) -> tuple[str, AsrTranscript] | None:
    """A derived transcript made by some engine from ``source`` (same audio, same crop)."""
    if not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8")).get("voxbench") or {}
        if meta.get("source") != source or not isinstance(meta.get("asr"), str):
            return None
        return meta["asr"], load_asr(path)
    except (OSError, ValueError, AttributeError, ConfigError):
        return None


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
