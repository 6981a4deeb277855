"""Silero VAD: finds speech where we put it, to the millisecond, at any sample rate."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import pytest

from tests.audio.conftest import trimmed
from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.silero_graph import operators, tail_from
from voxbench.audio.silero_timestamps import silero_speech_seconds
from voxbench.audio.vad import (
    FRAME_SECONDS,
    VAD_RATE,
    SileroVAD,
    SpeechSegment,
    _model,
    _SileroModel,
    detect_speech,
    silero_model_path,
)
from voxbench.audio.wav import Audio, concatenate
from voxbench.core.errors import PrerequisiteError

TOLERANCE_S = 0.030


def assert_matches(segments: list[SpeechSegment], truth: list[tuple[float, float]]) -> None:
    """Each utterance is covered, start and end within tolerance; nothing in the silences."""
    for start, end in truth:
        inside = [s for s in segments if s.end > start - 0.2 and s.start < end + 0.2]
        assert inside, f"no speech found in {start:.3f}-{end:.3f}: {segments}"
        assert abs(inside[0].start - start) <= TOLERANCE_S, (inside[0], start)
        assert abs(inside[-1].end - end) <= TOLERANCE_S, (inside[-1], end)
    for seg in segments:
        assert any(seg.end > s - 0.2 and seg.start < e + 0.2 for s, e in truth), seg


@pytest.mark.parametrize("rate", [8000, 16000, 22050, 44100, 48000])
def test_boundaries_within_30_ms_at_any_rate(spoken_with_gaps, rate):
    audio, truth = spoken_with_gaps
    segments = SileroVAD().segments(audio.resampled(rate))
    assert_matches(segments, truth)
    assert len(segments) == 3


def test_refined_boundaries_beat_the_32_ms_grid(spoken_with_gaps):
    audio, truth = spoken_with_gaps
    refined = SileroVAD().segments(audio)
    coarse = SileroVAD(refine=False, pad_ms=0).segments(audio)
    edges = [t for pair in truth for t in pair]
    refined_error = np.abs(np.array([t for s in refined for t in (s.start, s.end)]) - edges)
    coarse_error = np.abs(np.array([t for s in coarse for t in (s.start, s.end)]) - edges)
    assert refined_error.max() <= 0.010
    assert coarse_error.mean() > refined_error.mean()
    for seg in coarse:  # unrefined boundaries sit on the frame grid
        assert seg.start / FRAME_SECONDS == pytest.approx(
            round(seg.start / FRAME_SECONDS), abs=1e-3
        )


def test_short_yes_counts_as_speech():
    yes = trimmed(espeak_synthesize("Yes."))
    assert yes.duration < 0.45
    rate = yes.sample_rate
    audio = concatenate([Audio.silence(1.0, rate), yes, Audio.silence(1.0, rate)])
    segments = detect_speech(audio)
    assert len(segments) == 1
    assert segments[0].start == pytest.approx(1.0, abs=TOLERANCE_S)
    assert segments[0].end == pytest.approx(1.0 + yes.duration, abs=TOLERANCE_S)


def test_stereo_input_and_background_noise(spoken_with_gaps):
    audio, truth = spoken_with_gaps
    noise = np.random.default_rng(7).normal(0, 0.004, (audio.frames, 2)).astype(np.float32)
    stereo = Audio(audio.samples[:, None] + noise, audio.sample_rate)
    assert_matches(SileroVAD().segments(stereo), truth)


def test_silence_and_noise_have_no_speech():
    quiet = Audio.silence(3.0, 16000)
    assert detect_speech(quiet) == []
    hiss = Audio(np.random.default_rng(1).normal(0, 0.01, 48000).astype(np.float32), 16000)
    assert detect_speech(hiss) == []


def test_probabilities_per_32_ms_frame(spoken_with_gaps):
    audio, truth = spoken_with_gaps
    probs, frame = SileroVAD().probabilities(audio)
    assert frame == pytest.approx(0.032)
    assert len(probs) == int(np.ceil(audio.duration / frame))
    start, end = truth[0]
    assert probs[int(start / frame) + 2 : int(end / frame) - 2].mean() > 0.7
    assert probs[: int(0.6 / frame)].max() < 0.1


@pytest.mark.parametrize("batch", [1, 7, 512, 4096])
def test_batched_windows_give_the_per_frame_probabilities_and_segments(spoken_with_gaps, batch):
    """Windows scored many per model call (the recurrent state carried between calls) are the
    plain path's, one window per call: bit for bit on the whole graph; on the split path
    (numpy front, onnxruntime LSTM) to float rounding whatever its batch (BLAS kernels differ
    with the number of rows)."""
    audio, _ = spoken_with_gaps
    long = concatenate([audio] * 3).resampled(VAD_RATE).samples[:-100]  # a ragged last window
    model = _model()
    plain = model.probabilities(long, batch=1, whole_graph=True)
    batched = model.probabilities(long, batch=batch, whole_graph=True)
    assert batched.shape == plain.shape == (-(-len(long) // 512),)
    np.testing.assert_array_equal(batched, plain)
    split = model.probabilities(long, batch=batch)
    np.testing.assert_allclose(split, plain, atol=1e-5, rtol=0)
    vad = SileroVAD()
    assert vad._frame_segments(split) == vad._frame_segments(plain)


def _speech_with_noise(spoken_with_gaps) -> np.ndarray:
    """The fixture's speech, then again quieter in background noise, at 16 kHz, ragged end."""
    audio, _ = spoken_with_gaps
    signal = audio.resampled(VAD_RATE).samples
    noise = np.random.default_rng(3).normal(0, 0.003, len(signal)).astype(np.float32)
    return np.concatenate([signal, 0.3 * signal + noise, signal])[:-77]


def test_the_split_model_finds_the_whole_graphs_speech(spoken_with_gaps, monkeypatch):
    """The pinned model runs split by default: its probabilities are the whole graph's per-frame
    ones to float rounding (6.5e-6 at most on 10 minutes of speech; bound 1e-5), and every
    segmentation built on them (voxbench's, refined or not, and Silero's own) is the same."""
    signal = _speech_with_noise(spoken_with_gaps)
    model = _model()
    assert model.split is not None
    plain = model.probabilities(signal, batch=1, whole_graph=True)
    split = model.probabilities(signal)
    assert split.shape == plain.shape
    np.testing.assert_allclose(split, plain, atol=1e-5, rtol=0)
    assert np.abs(split - plain).max() > 0  # really computed another way
    vad = SileroVAD()
    assert vad._frame_segments(split) == vad._frame_segments(plain)
    assert silero_speech_seconds(split.tolist(), len(signal)) == silero_speech_seconds(
        plain.tolist(), len(signal)
    )
    audio = Audio(signal, VAD_RATE)
    split_segments = vad.segments(audio)
    whole = partial(model.probabilities, batch=1, whole_graph=True)
    monkeypatch.setattr(model, "probabilities", whole)
    assert vad.segments(audio) == split_segments


def test_a_copy_of_the_pinned_model_runs_split_and_another_file_whole(tmp_path):
    """The split path follows the file's SHA-256, not its place (``fdb --vad-model`` with a
    copy gives the shipped model's numbers); any other file runs as one onnxruntime graph."""
    copy = tmp_path / "chosen.onnx"
    copy.write_bytes(silero_model_path().read_bytes())
    assert _SileroModel(copy).split is not None
    tail, entry = tail_from(copy.read_bytes(), "LSTM", ("seq_len", 1, 128))
    assert entry == "/Transpose_output_0"
    assert operators(tail) == ["LSTM", "Squeeze", "Relu", "Transpose", "Conv", "Sigmoid", "Reshape"]
    other = tmp_path / "tail.onnx"  # a valid ONNX file that is not the pinned one
    other.write_bytes(tail)
    with pytest.raises(PrerequisiteError, match=r"unexpected Silero VAD model inputs"):
        _SileroModel(other)


def test_threads_share_the_model_and_each_gets_its_own_probabilities(spoken_with_gaps):
    """The session takes calls from several threads at once (no lock): each call carries its
    own recurrent state, so every thread gets what a call on its own gets."""
    audio, _ = spoken_with_gaps
    signals = [audio.resampled(VAD_RATE).samples, np.zeros(VAD_RATE, np.float32)] * 2
    model = _model()
    alone = [model.probabilities(s) for s in signals]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(model.probabilities, signals))
    for a, b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a, b)


def test_min_speech_drops_short_bursts_and_thresholds_are_checked():
    yes = trimmed(espeak_synthesize("Yes."))
    audio = concatenate(
        [Audio.silence(0.5, yes.sample_rate), yes, Audio.silence(0.5, yes.sample_rate)]
    )
    assert SileroVAD(min_speech_ms=700).segments(audio) == []
    with pytest.raises(ValueError):
        SileroVAD(threshold=1.5)
    with pytest.raises(ValueError):
        SileroVAD(threshold=0.3, neg_threshold=0.6)


def test_min_silence_merges_a_short_pause():
    word = trimmed(espeak_synthesize("Hello there"))
    rate = word.sample_rate
    gap = Audio.silence(0.25, rate)
    edge = Audio.silence(0.5, rate)
    audio = concatenate([edge, word, gap, word, edge])
    assert len(SileroVAD(min_silence_ms=100).segments(audio)) == 2
    assert len(SileroVAD(min_silence_ms=600).segments(audio)) == 1
