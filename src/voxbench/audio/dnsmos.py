"""DNSMOS P.835: a non-intrusive estimate of speech quality — SIG (the speech signal's
distortion), BAK (background noise intrusiveness) and OVRL (overall), each on the 1–5 MOS
scale of ITU-T P.835 — offline, from the ONNX model Microsoft ships in the ``speechmos``
wheel (MIT), on onnxruntime.

What it measures: noise, distortion and their effect on overall quality, as listeners
rated them in the DNS Challenge (Reddy et al., "DNSMOS P.835", ICASSP 2022). It does **not**
measure accent, naturalness of prosody, correctness or whether the right words were said:
clean synthetic speech with a flat voice scores high.

The model hears raw 16 kHz samples (no hand-made features) in windows of 9.01 s, one per
second of audio; a clip shorter than a window is repeated until it fills one (the reference
script's rules, ``windows_of``). Each window's raw outputs go through the published third-order fits to the
P.835 ratings (``POLYFIT``, the non-personalised ones); the clip's score is the mean over its
windows. The model file's SHA-256 is checked before it is loaded (``audio.weights``).
The ``speechmos`` package is used only for its weight file: its own code needs librosa,
which voxbench does not install, and which SIG/BAK/OVRL do not need.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from voxbench.audio.wav import Audio
from voxbench.audio.weights import DNSMOS_P835, verify_model
from voxbench.core.errors import PrerequisiteError

RATE = 16000
WINDOW = int(9.01 * RATE)
"""Samples in one window the model hears (9.01 s)."""
HOP = RATE
POLYFIT = {
    # Highest power first; the DNS Challenge's fits of raw outputs to P.835 ratings.
    "sig": (-0.08397278, 1.22083953, 0.0052439),
    "bak": (-0.13166888, 1.60915514, -0.39604546),
    "ovrl": (-0.06766283, 1.11546468, 0.04602535),
}
MIN_SECONDS = 0.1
"""Shorter clips are not scored (there is no speech quality to hear)."""


@dataclass(frozen=True)
class QualityScore:
    """DNSMOS P.835 of one clip."""

    sig: float
    bak: float
    ovrl: float
    windows: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "sig": self.sig,
            "bak": self.bak,
            "ovrl": self.ovrl,
            "windows": self.windows,
            "seconds": self.seconds,
        }


def model_path() -> Path:
    """``sig_bak_ovr.onnx`` in the installed ``speechmos`` package (not imported)."""
    spec = importlib.util.find_spec("speechmos")
    if spec is None or not spec.submodule_search_locations:
        raise PrerequisiteError(
            f"DNSMOS needs the speechmos package's model file; fix: {DNSMOS_P835.fix()}"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "dnsmos_models" / "sig_bak_ovr.onnx"


class _Model:
    def __init__(self, path: Path) -> None:
        import onnxruntime

        verify_model(path.parent, DNSMOS_P835)
        options = onnxruntime.SessionOptions()
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        self.lock = threading.Lock()

    def raw(self, windows: np.ndarray) -> np.ndarray:
        with self.lock:
            return np.asarray(self.session.run(None, {"input_1": windows})[0], dtype=np.float64)


@cache
def _model() -> _Model:
    return _Model(model_path())


def windows_of(samples: np.ndarray) -> np.ndarray:
    """The 9.01 s windows (one per second) of 16 kHz mono ``samples``: (n, WINDOW)."""
    x = np.asarray(samples, dtype=np.float32)
    while 0 < len(x) < WINDOW:
        x = np.concatenate([x, x])
    count = int(np.floor(len(x) / RATE - 9.01)) + 1
    # The reference computes a window's end as int((i + 9.01) * 16000), one sample short
    # for some i (floating point), and skips those windows; the same windows are kept here
    # so that the scores are the reference's.
    kept = [i for i in range(count) if int((i + 9.01) * RATE) - i * HOP >= WINDOW]
    return np.stack([x[i * HOP : i * HOP + WINDOW] for i in kept])


def dnsmos(audio: Audio) -> QualityScore | None:
    """SIG, BAK and OVRL of ``audio`` (mixed to mono, resampled to 16 kHz); None for a clip
    shorter than ``MIN_SECONDS``."""
    mono = audio.mono().resampled(RATE).samples
    seconds = len(mono) / RATE
    if seconds < MIN_SECONDS:
        return None
    windows = windows_of(np.clip(mono, -1.0, 1.0))
    raw = _model().raw(windows)
    fitted = {
        name: float(np.mean(np.polyval(POLYFIT[name], raw[:, column])))
        for column, name in enumerate(("sig", "bak", "ovrl"))
    }
    return QualityScore(
        sig=round(fitted["sig"], 3),
        bak=round(fitted["bak"], 3),
        ovrl=round(fitted["ovrl"], 3),
        windows=len(windows),
        seconds=round(seconds, 3),
    )
