"""Issue 30 item 4: ``--vad-model`` takes silero-vad's own ``silero_vad.onnx`` (inputs
``input``, ``state``, ``sr``, as in silero-vad 6.2.x) as well as faster-whisper's repackaged
model (``input``, ``h``, ``c``).

``onnx`` is not installed here, so no ONNX file is built: a fake onnxruntime session with the
official interface drives the adapter's input/output name mapping and shapes. The fake's
speech probability follows the window's loudness; its state counts the calls, so the test
sees the state threaded from one window to the next."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from voxbench.audio import vad as vad_module
from voxbench.audio.vad import SileroVAD, _SileroModel
from voxbench.audio.wav import Audio
from voxbench.core.errors import PrerequisiteError


@dataclass
class _Arg:
    name: str


class OfficialSileroSession:
    """silero-vad 6.2.x ``silero_vad.onnx`` as onnxruntime presents it."""

    inputs = ("input", "state", "sr")
    outputs = ("output", "stateN")

    def __init__(self, path: str, sess_options=None, providers=None) -> None:
        self.calls = 0
        self.feeds: list[dict[str, np.ndarray]] = []

    def get_inputs(self) -> list[_Arg]:
        return [_Arg(n) for n in self.inputs]

    def get_outputs(self) -> list[_Arg]:
        return [_Arg(n) for n in self.outputs]

    def run(self, names, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        assert names is None and set(feed) == set(self.inputs)
        x, state, sr = feed["input"], feed["state"], feed["sr"]
        assert x.shape == (1, 576) and x.dtype == np.float32
        assert state.shape == (2, 1, 128) and state.dtype == np.float32
        assert sr.dtype == np.int64 and sr.shape == () and int(sr) == 16_000
        assert float(state[0, 0, 0]) == self.calls  # the state it returned last time
        self.calls += 1
        loud = float(np.sqrt(np.mean(x[0, 64:] ** 2))) > 0.05
        out = np.array([[0.95 if loud else 0.02]], np.float32)
        return [out, np.full((2, 1, 128), self.calls, np.float32)]


class RepackagedSession(OfficialSileroSession):
    inputs = ("input", "h", "c")


class OtherSession(OfficialSileroSession):
    inputs = ("x", "sr")


@pytest.fixture(autouse=True)
def _forget_models():
    """The loaded models are cached by path: none of these fakes outlives its test."""
    yield
    vad_module._model.cache_clear()


def _model(monkeypatch, session_class, path: Path) -> _SileroModel:
    import onnxruntime

    monkeypatch.setattr(onnxruntime, "InferenceSession", session_class)
    return _SileroModel(path)


def _speech(rate: int = 16_000) -> Audio:
    t = np.arange(3 * rate) / rate
    samples = np.zeros_like(t)
    loud = (t >= 1.0) & (t < 2.0)
    samples[loud] = 0.5 * np.sin(2 * np.pi * 220 * t[loud])
    return Audio(samples.astype(np.float32), rate)


def test_the_official_interface_is_called_window_by_window(monkeypatch, tmp_path) -> None:
    model = _model(monkeypatch, OfficialSileroSession, tmp_path / "silero_vad.onnx")
    assert model.official
    probs = model.probabilities(_speech().samples)
    windows = -(-3 * 16_000 // 512)
    assert model.session.calls == windows and probs.shape == (windows,)
    frames = np.nonzero(probs > 0.5)[0]
    assert frames[0] * 512 / 16_000 == pytest.approx(1.0, abs=0.04)
    assert frames[-1] * 512 / 16_000 == pytest.approx(2.0, abs=0.04)


def test_segments_with_the_official_model(monkeypatch, tmp_path) -> None:
    path = tmp_path / "official.onnx"
    _model(monkeypatch, OfficialSileroSession, path)  # patches InferenceSession
    (segment,) = SileroVAD(model_path=path).segments(_speech(48_000))
    assert segment.start == pytest.approx(1.0, abs=0.05)
    assert segment.end == pytest.approx(2.0, abs=0.05)


def test_the_repackaged_interface_is_still_recognised(monkeypatch, tmp_path) -> None:
    assert not _model(monkeypatch, RepackagedSession, tmp_path / "fw.onnx").official


def test_another_interface_names_both_accepted_ones(monkeypatch, tmp_path) -> None:
    with pytest.raises(PrerequisiteError) as info:
        _model(monkeypatch, OtherSession, tmp_path / "other.onnx")
    text = str(info.value)
    assert "['input', 'sr', 'state']" in text and "['c', 'h', 'input']" in text
