"""Voice activity detection: Silero VAD on onnxruntime, with boundaries refined to milliseconds.

The model is the one faster-whisper ships (``faster_whisper/assets/silero_vad_v6.onnx``), so
nothing is downloaded and torch is not needed; its SHA-256 is checked against the pinned one
(``audio.weights``) before it is loaded. Another Silero file may be chosen (``fdb score
--vad-model``): faster-whisper's repackaged interface (``input``, ``h``, ``c``) or silero-vad's
own ``silero_vad.onnx`` (``input``, ``state``, ``sr``), told apart by their input names.
Silero scores 32 ms windows (512 samples at 16 kHz, each seen with the 64 samples before it);
its raw boundaries therefore land on a 32 ms grid, and its recurrent state lags real onsets by a window or two. ``SileroVAD.segments``
snaps each boundary to the signal's energy onset/offset near it (1 ms steps), so speech
start/end are accurate to a few milliseconds, and short words ("Yes.") still count.

The pinned model runs split: its convolutional front in numpy (``audio.silero_encoder``), its
LSTM and decoder in onnxruntime (``audio.silero_graph`` cuts them out of the file), ~2x
faster than the whole graph with the same probabilities to float rounding.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

from voxbench.audio.wav import Audio
from voxbench.audio.weights import SILERO_VAD_V6, verify_model
from voxbench.core.errors import PrerequisiteError

VAD_RATE = 16_000
WINDOW = 512
CONTEXT = 64
FRAME_SECONDS = WINDOW / VAD_RATE
BATCH_WINDOWS = 512
"""Windows per call of the whole graph (the recurrent state carries across calls, so any batch
gives the same probabilities). The convolutions run over the whole batch before the LSTM steps
through it: 512 windows keep their buffers in cache, ~1.5-2x faster than 4096 (``bench/vad_throughput.py``)."""
SPLIT_BATCH_WINDOWS = 512
"""Windows per numpy encoder batch and LSTM call on the split path (``_SplitSilero``)."""
REPACKAGED_INPUTS = frozenset({"input", "h", "c"})
"""faster-whisper's repackaged Silero (a sequence of windows per call, LSTM ``h`` / ``c``)."""
OFFICIAL_INPUTS = frozenset({"input", "state", "sr"})
"""silero-vad's own ``silero_vad.onnx`` (5.x, 6.x): one window per call, ``state``, ``sr``."""


@dataclass(frozen=True)
class SpeechSegment:
    """A stretch of speech, in seconds from the start of the audio."""

    start: float
    end: float

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return self.end - self.start


def silero_model_path() -> Path:
    """Where faster-whisper keeps the Silero VAD ONNX model."""
    try:
        import faster_whisper
    except ImportError as exc:
        raise PrerequisiteError(
            "Silero VAD needs faster-whisper: pip install faster-whisper"
        ) from exc
    path = Path(faster_whisper.__file__).parent / "assets" / "silero_vad_v6.onnx"
    if not path.is_file():
        raise PrerequisiteError(
            f"Silero VAD model not found at {path}: install faster-whisper>=1.2 (it ships the model)"
        )
    return path


def _session(model: str | bytes) -> Any:
    """An onnxruntime session on one thread: the analysis runs two channels' VAD at once, and
    each call is sequential through its windows (the LSTM), so more threads buy little."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(
        model, sess_options=options, providers=["CPUExecutionProvider"]
    )


class _SplitSilero:
    """The pinned Silero v6 with its convolutional front in numpy (``SileroEncoder``) and its
    recurrent tail (LSTM, decoder) in onnxruntime: ~2x faster than the whole graph, the
    same probabilities to float rounding (``tests/audio/test_vad.py`` bounds the difference)."""

    def __init__(self, model: bytes) -> None:
        from voxbench.audio.native import one_blas_thread
        from voxbench.audio.silero_encoder import OUTPUT, SileroEncoder
        from voxbench.audio.silero_graph import float_weights, tail_from

        one_blas_thread()  # the front's products run from several threads at once
        self.encoder = SileroEncoder(float_weights(model))
        tail, self.entry = tail_from(model, "LSTM", ("seq_len", 1, OUTPUT))
        self.session = _session(tail)

    def probabilities(self, frames: np.ndarray, batch: int) -> np.ndarray:
        h = np.zeros((1, 1, 128), np.float32)
        c = np.zeros((1, 1, 128), np.float32)
        out = np.empty(len(frames), np.float32)
        start = 0
        for features in self.encoder.encode(frames, batch):
            probs, h, c = self.session.run(
                None, {self.entry: features[:, np.newaxis, :], "h": h, "c": c}
            )
            out[start : start + len(features)] = np.asarray(probs).reshape(-1)
            start += len(features)
        return out


class _SileroModel:
    """A Silero model. Calls may run at once from several threads (onnxruntime's ``run`` is
    thread-safe, and each call threads its own recurrent state through its windows), so two
    runs side by side, or their Whisper and analysis threads, use both cores.

    The pinned file (by its SHA-256, wherever it lies) runs split (``_SplitSilero``); any
    other file runs as one onnxruntime graph, as does ``whole_graph=True``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        data = path.read_bytes() if path.is_file() else b""
        pinned = hashlib.sha256(data).hexdigest() in SILERO_VAD_V6.hashes.values()
        self.split = _SplitSilero(data) if pinned else None
        self.official = False
        if self.split is not None:
            return  # faster-whisper's interface; the whole graph loads only if asked for
        names = {i.name for i in self.session.get_inputs()}
        if names == REPACKAGED_INPUTS:
            self.official = False
        elif names == OFFICIAL_INPUTS:
            self.official = True
        else:
            raise PrerequisiteError(
                f"unexpected Silero VAD model inputs {sorted(names)} in {path} (expected "
                f"{sorted(OFFICIAL_INPUTS)}, silero-vad's silero_vad.onnx, or "
                f"{sorted(REPACKAGED_INPUTS)}, faster-whisper's silero_vad_v6.onnx)",
            )

    @cached_property
    def session(self) -> Any:
        """The whole graph in onnxruntime."""
        return _session(str(self.path))

    def probabilities(
        self, samples16k: np.ndarray, batch: int | None = None, whole_graph: bool = False
    ) -> np.ndarray:
        """Speech probability of each 512-sample window of 16 kHz mono audio, ``batch`` windows
        per model call (every batch gives the same values; 1 with ``whole_graph`` is the plain
        per-frame path, the reference the split path is tested against)."""
        n = -(-len(samples16k) // WINDOW)
        if n == 0:
            return np.zeros(0, np.float32)
        # Each window is preceded by the last 64 samples of the one before (zeros first): one
        # (n, 576) array filled in place, no padded or concatenated copies.
        frames = np.zeros((n, CONTEXT + WINDOW), np.float32)
        whole, rest = divmod(len(samples16k), WINDOW)
        frames[:whole, CONTEXT:] = samples16k[: whole * WINDOW].reshape(whole, WINDOW)
        if rest:
            frames[whole, CONTEXT : CONTEXT + rest] = samples16k[whole * WINDOW :]
        frames[1:, :CONTEXT] = frames[:-1, -CONTEXT:]
        if self.split is not None and not whole_graph:
            return self.split.probabilities(frames, batch or SPLIT_BATCH_WINDOWS)
        if self.official:
            return self._official(frames)
        batch = batch or BATCH_WINDOWS
        h = np.zeros((1, 1, 128), np.float32)
        c = np.zeros((1, 1, 128), np.float32)
        out = np.empty(n, np.float32)
        for i in range(0, n, batch):
            probs, h, c = self.session.run(None, {"input": frames[i : i + batch], "h": h, "c": c})
            out[i : i + batch] = np.asarray(probs).reshape(-1)
        return out

    def _official(self, batch: np.ndarray) -> np.ndarray:
        """silero-vad's own ONNX interface: one window (with its 64-sample context) per call,
        the recurrent ``state`` (2, 1, 128) threaded through, ``sr`` an int64 scalar: as
        silero-vad's ``OnnxWrapper`` calls it for one stream."""
        state = np.zeros((2, 1, 128), np.float32)
        rate = np.array(VAD_RATE, dtype=np.int64)
        out = np.empty(len(batch), np.float32)
        for i, window in enumerate(batch):
            probs, state = self.session.run(
                None, {"input": window[np.newaxis, :], "state": state, "sr": rate}
            )
            out[i] = float(np.asarray(probs).reshape(-1)[0])
        return out


def load_silero(path: Path) -> _SileroModel:
    """The Silero VAD model at ``path``, once its SHA-256 is the pinned one."""
    verify_model(path.parent, SILERO_VAD_V6)
    return _SileroModel(path)


@cache
def _model(path: Path | None = None) -> _SileroModel:
    # The shipped model is checked against its pin; a file the user chose (fdb --vad-model)
    # is theirs to vouch for, and its hash is recorded where it is used.
    return load_silero(silero_model_path()) if path is None else _SileroModel(path)


class SileroVAD:
    """Silero speech detection with hysteresis, minimum durations and refined boundaries.

    ``threshold`` starts speech; it ends after ``min_silence_ms`` below ``neg_threshold``
    (default ``threshold - 0.15``). Segments shorter than ``min_speech_ms`` are dropped.
    With ``refine`` each boundary moves to the energy onset/offset found near it; where none is
    found (and when ``refine`` is off) the 32 ms boundary is widened by ``pad_ms`` instead.
    """

    def __init__(
        self,
        threshold: float = 0.5,
        min_speech_ms: int = 250,
        min_silence_ms: int = 100,
        pad_ms: int = 30,
        refine: bool = True,
        neg_threshold: float | None = None,
        model_path: Path | None = None,
    ) -> None:
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
        self.threshold = threshold
        self.neg_threshold = max(0.01, threshold - 0.15) if neg_threshold is None else neg_threshold
        if self.neg_threshold > threshold:
            raise ValueError("neg_threshold must not exceed threshold")
        self.min_speech_ms = min_speech_ms
        self.min_silence_ms = min_silence_ms
        self.pad_ms = pad_ms
        self.refine = refine
        self.model_path = model_path
        """Another Silero ONNX file (a different Silero release); None uses the shipped one."""

    def probabilities(self, audio: Audio) -> tuple[np.ndarray, float]:
        """Per-frame speech probability and the frame length in seconds (0.032)."""
        return _model(self.model_path).probabilities(_to_vad_rate(audio)), FRAME_SECONDS

    def segments(self, audio: Audio) -> list[SpeechSegment]:
        """Speech segments in seconds of the input audio."""
        signal = _to_vad_rate(audio)
        probs = _model(self.model_path).probabilities(signal)
        frames = self._frame_segments(probs)
        duration = audio.duration
        out: list[SpeechSegment] = []
        if self.refine and frames:
            from voxbench.audio.vad_refine import refine_segments

            refined = refine_segments(signal, VAD_RATE, frames, FRAME_SECONDS)
        else:
            refined = [(None, None)] * len(frames)
        pad = self.pad_ms / 1000
        for (f0, f1), (r0, r1) in zip(frames, refined, strict=True):
            start = r0 if r0 is not None else f0 * FRAME_SECONDS - pad
            end = r1 if r1 is not None else f1 * FRAME_SECONDS + pad
            out.append(
                SpeechSegment(round(max(0.0, float(start)), 4), round(min(duration, float(end)), 4))
            )
        return _merge_overlaps(out)

    def _frame_segments(self, probs: np.ndarray) -> list[tuple[int, int]]:
        """Hysteresis over frame probabilities: [start, end) frame index pairs."""
        min_silence = max(1, round(self.min_silence_ms / 1000 / FRAME_SECONDS))
        min_speech = self.min_speech_ms / 1000 / FRAME_SECONDS
        segments: list[tuple[int, int]] = []
        start: int | None = None
        quiet_since: int | None = None
        for i, p in enumerate(probs):
            if start is None:
                if p >= self.threshold:
                    start, quiet_since = i, None
                continue
            if p >= self.threshold:
                quiet_since = None
            elif p < self.neg_threshold:
                if quiet_since is None:
                    quiet_since = i
                if i + 1 - quiet_since >= min_silence:
                    segments.append((start, quiet_since))
                    start, quiet_since = None, None
        if start is not None:
            segments.append((start, quiet_since if quiet_since is not None else len(probs)))
        return [(a, b) for a, b in segments if b - a >= min_speech]


def _to_vad_rate(audio: Audio) -> np.ndarray:
    return audio.mono().resampled(VAD_RATE).samples


def _merge_overlaps(segments: list[SpeechSegment]) -> list[SpeechSegment]:
    merged: list[SpeechSegment] = []
    for seg in sorted(segments, key=lambda s: s.start):
        if merged and seg.start <= merged[-1].end:
            merged[-1] = SpeechSegment(merged[-1].start, max(merged[-1].end, seg.end))
        else:
            merged.append(seg)
    return merged


@cache
def _cached_vad(items: tuple[tuple[str, object], ...]) -> SileroVAD:
    return SileroVAD(**dict(items))  # type: ignore[arg-type]


def detect_speech(audio: Audio, **vad_kwargs: object) -> list[SpeechSegment]:
    """Speech segments of ``audio`` with a cached Silero model (kwargs as for ``SileroVAD``)."""
    return _cached_vad(tuple(sorted(vad_kwargs.items()))).segments(audio)
