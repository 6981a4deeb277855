"""What per-sample scoring shares: the result type, and access to transcripts, VAD,
ground truth and the judges (with their answers cached beside each sample)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from voxbench.audio.silero_timestamps import silero_speech_seconds
from voxbench.audio.vad import SileroVAD
from voxbench.audio.wav import Audio, read_wav
from voxbench.core.errors import ConfigError, ProviderError
from voxbench.fullduplex.annotations import (
    GT_DISTRIBUTION_FILE,
    OverlapMetadata,
    TimedWord,
    load_gt_distribution,
)
from voxbench.fullduplex.corpus import OUTPUT_JSON, OUTPUT_WAV, FdbSample, find_upwards
from voxbench.fullduplex.judge import ChatJudge, classify_behavior, rate_relevance
from voxbench.fullduplex.transcripts import TranscriptStore

Mode = Literal["fdb-v1", "voxbench"]
MODES: tuple[Mode, ...] = ("fdb-v1", "voxbench")

STORED_RATING_FILE = "rating.json"
"""The public scripts' cached judge rating; read, never overwritten."""
RELEVANCE_CACHE = "judge_relevance.json"
BEHAVIOR_CACHE = "judge_behavior.json"

VAD_PARAMS: dict[str, Any] = {
    "threshold": 0.5,
    "min_speech_ms": 250,
    "min_silence_ms": 100,
    "pad_ms": 30,
}
"""Silero's ``get_speech_timestamps`` defaults, which the public backchannel script uses."""
PUBLIC_VAD_RATE = 16_000
"""The rate the public script's VAD assumes for every file (it never passes the real one)."""
MODEL_MERGE_GAP_MS = 500
"""Pauses shorter than this inside model speech do not end it (as the v1.5 timing script)."""


@dataclass
class SampleScore:
    """One sample's metrics in one mode; ``None`` means not applicable or not computed."""

    sample: str
    subset: str
    category: str
    target: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "sample": self.sample,
            "subset": self.subset,
            "category": self.category,
            "target": self.target,
            "metrics": self.metrics,
            "error": self.error,
            "notes": self.notes,
            "details": self.details,
        }


@cache
def _gt_file(path: Path) -> dict[str, list[float]]:
    return load_gt_distribution(path)


def _vad(**kwargs: Any) -> SileroVAD:
    return SileroVAD(**{**VAD_PARAMS, **kwargs})


class ScoringContext:
    """Shared by every sample of one scoring pass."""

    def __init__(
        self,
        transcripts: TranscriptStore,
        *,
        judge: ChatJudge | None = None,
        gt_file: Path | None = None,
        target: str | None = None,
        vad_model: Path | None = None,
        derived_root: Path | None = None,
    ) -> None:
        self.transcripts = transcripts
        self.judge = judge
        self.gt_file = gt_file
        self.target = target
        self.vad_model = vad_model
        self.derived_root = derived_root
        """Where files computed from a sample go (transcripts, judge answers), mirroring the
        samples' layout; never the sample folders themselves. None: nothing is kept."""

    def derived(self, sample: FdbSample, name: str) -> Path | None:
        """The path of a file computed from ``sample`` (None when nothing is kept)."""
        if self.derived_root is None:
            return None
        return self.derived_root / sample.relative / name

    # -- transcripts and audio ---------------------------------------------------------------------------------

    def output_words(
        self,
        sample: FdbSample,
        *,
        json_name: str = OUTPUT_JSON,
        wav_name: str = OUTPUT_WAV,
        crop_from: float = 0.0,
    ) -> list[TimedWord]:
        """The output's ASR words (transcribing the wav when its ASR file is missing)."""
        words = self.transcripts.words(
            sample.file(json_name),
            sample.file(wav_name),
            crop_from=crop_from,
            derived=self.derived(sample, json_name),
        )
        if words is None and sample.has(wav_name):
            raise ConfigError(
                f"no {json_name}, and the metadata mode (--no-asr) does not transcribe "
                f"{wav_name}", file=sample.path, expected=f"an ASR file {json_name}",
            )  # fmt: skip
        if words is None:
            raise ConfigError(
                f"neither {json_name} nor {wav_name}", file=sample.path,
                expected="the model's output audio or its ASR file",
            )  # fmt: skip
        return words

    def output_audio(self, sample: FdbSample, name: str = "output.wav") -> Audio:
        path = sample.file(name)
        if not path.is_file():
            raise ConfigError("missing output audio", file=path, expected="the model's output.wav")
        return read_wav(path).mono()

    @staticmethod
    def segments_public(audio: Audio, vad_model: Path | None = None) -> list[tuple[float, float]]:
        """Speech segments as the public script gets them: Silero's ``get_speech_timestamps``
        with its defaults and ``return_seconds`` (its own post-processing, times rounded to
        0.1 s), told 16 kHz whatever the file's rate (so a 24 kHz output's times come out
        1.5× too long). ``vad_model``: another Silero ONNX file than the shipped one."""
        mislabelled = Audio(audio.mono().samples, PUBLIC_VAD_RATE)
        probs, _ = _vad(refine=False, model_path=vad_model).probabilities(mislabelled)
        return silero_speech_seconds(probs.tolist(), mislabelled.frames)

    @staticmethod
    def segments_true(
        audio: Audio, *, merge_gap_ms: int | None = None
    ) -> list[tuple[float, float]]:
        """Speech segments at the file's real sample rate, boundaries refined to the signal."""
        extra = {"min_silence_ms": merge_gap_ms} if merge_gap_ms is not None else {}
        return [(s.start, s.end) for s in _vad(**extra).segments(audio)]

    # -- ground truth --------------------------------------------------------------------------

    def ground_truth_file(self, sample: FdbSample) -> Path | None:
        """The ``icc_gt_distribution.json`` that holds the sample's ground truth, if any."""
        return self.gt_file or find_upwards(sample.path, GT_DISTRIBUTION_FILE, sample.root)

    def ground_truth(self, sample: FdbSample) -> list[float] | None:
        """The sample's backchannel histogram, or None when there is none for its id."""
        path = self.ground_truth_file(sample)
        if path is None:
            return None
        return _gt_file(Path(path).resolve()).get(sample.sample_id)

    def missing_ground_truth_note(self, sample: FdbSample) -> str:
        """Why a backchannel sample has no ground truth: no file at all, or not its id."""
        if self.ground_truth_file(sample) is None:
            return (
                f"JSD not computed: no {GT_DISTRIBUTION_FILE} found above the samples "
                "(give it with --gt FILE)"
            )
        return f"no ground-truth distribution for sample id {sample.sample_id!r}"

    # -- judges --------------------------------------------------------------------------------

    def relevance(
        self, sample: FdbSample, context: str, interrupt: str, reply: str, *, use_stored: bool
    ) -> tuple[float | None, str | None]:
        """``(rating, note)``: from the judge (cached per judge and reply), else, with
        ``use_stored``, from the public scripts' ``rating.json`` (rated on their reply)."""
        if self.judge is not None:
            cached = _read_cache(self.derived(sample, RELEVANCE_CACHE))
            if cached and cached.get("judge") == self.judge.name and cached.get("reply") == reply:
                return float(cached["rating"]), None
            try:
                r = rate_relevance(self.judge, context, interrupt, reply)
            except ProviderError as exc:
                return None, f"judge error: {exc}"
            _write_cache(
                self.derived(sample, RELEVANCE_CACHE),
                {
                    "judge": r.judge,
                    "seed": r.seed,
                    "rating": r.rating,
                    "analysis": r.analysis,
                    "reply": reply,
                },
            )
            return float(r.rating), None
        stored = _read_cache(sample.file(STORED_RATING_FILE)) if use_stored else None
        if stored and isinstance(stored.get("rating"), int | float):
            return float(stored["rating"]), "relevance from a stored rating.json (judge unknown)"
        return None, "relevance not computed: no judge configured (--judge provider/model)"

    def behavior(
        self,
        sample: FdbSample,
        metadata: OverlapMetadata,
        words: list[TimedWord],
        clean_words: list[TimedWord] | None,
    ) -> tuple[str | None, str | None]:
        """``(label, note)`` of the overlap-behaviour judge (cached per judge)."""
        if self.judge is None:
            return None, "behaviour not judged: no judge configured (--judge provider/model)"
        key = [[w.text, w.start, w.end] for w in words]
        cached = _read_cache(self.derived(sample, BEHAVIOR_CACHE))
        if cached and cached.get("judge") == self.judge.name and cached.get("words") == key:
            return str(cached["label"]), None
        try:
            b = classify_behavior(self.judge, sample.subset, metadata, words, clean_words)
        except ProviderError as exc:
            return None, f"judge error: {exc}"
        _write_cache(
            self.derived(sample, BEHAVIOR_CACHE),
            {"judge": b.judge, "seed": b.seed, "label": b.label, "reason": b.reason, "words": key},
        )
        return b.label, None


def _read_cache(path: Path | None) -> dict[str, Any] | None:
    if path is None or not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _write_cache(path: Path | None, value: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def speech_at(segments: list[tuple[float, float]], t: float) -> tuple[float, float] | None:
    """The segment that covers time ``t``, if any."""
    for seg in segments:
        if seg[0] <= t < seg[1]:
            return seg
    return None


def stop_latency(segments: list[tuple[float, float]], t: float) -> float | None:
    """How long the model kept talking after ``t`` (None when it was silent at ``t``)."""
    seg = speech_at(segments, t)
    return None if seg is None else seg[1] - t


def response_latency(segments: list[tuple[float, float]], t: float) -> float | None:
    """Seconds from ``t`` to the first model speech onset strictly after it."""
    for start, _ in segments:
        if start > t:
            return start - t
    return None
