"""Silero v6's convolutional front (STFT magnitude and four convolutions) in numpy.

In onnxruntime these layers cost ~80% of the model's time: each window is a batch item of
only 4 STFT frames, so its convolutions run as many tiny products. Here each layer is one
matrix product over the whole batch of windows: the STFT is the model's own basis (258
Hann-windowed cosines and sines) times the frames, and each 1-D convolution over the 4 (then
2, then 1) frames is an im2col product. The recurrent tail stays in onnxruntime
(``voxbench.audio.silero_graph.tail_from``).

Products use the model's own float32 operands, as onnxruntime does, in other summation
orders: the probabilities differ from the whole graph's by float rounding amplified through
the LSTM (6.5e-6 at most on 10 minutes of speech, 8.6e-6 on a test signal;
``tests/audio/test_vad.py`` bounds it at 1e-5). Float64 products came no closer overall
(7.3e-6 on the 10 minutes: onnxruntime's own float32 rounding is the larger part) at twice
the front's time. An FFT in place of the basis product is cheaper but not the same: the
stored basis is the exact Hann-windowed DFT rounded to float32, and that rounding moved
probabilities by 1.8e-5.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

N_FFT = 256
HOP = 128
FRAMES = 4  # STFT frames per 576-sample window (the graph computes 5 and drops the first)
BINS = N_FFT // 2 + 1
WINDOW_WITH_CONTEXT = 576
_REFLECTED = 64  # the last frame runs 64 samples past the window, into its reflection
OUTPUT = 128  # features per window, the LSTM's input size


def _im2col(weight: np.ndarray, taps: slice = slice(None)) -> np.ndarray:
    """A Conv1d weight (out, in, kernel) as a (kernel·in, out) matrix, tap-major, for a
    product with rows of consecutive input frames laid end to end."""
    w = weight[:, :, taps]
    return np.ascontiguousarray(w.transpose(2, 1, 0).reshape(-1, w.shape[0]), np.float32)


class SileroEncoder:
    """Features of 576-sample windows (64 context + 512 new samples), as the LSTM sees them."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        basis = weights["encoder.feature_extractor.forward_basis_buffer"]
        if basis.shape != (2 * BINS, 1, N_FFT):
            raise ValueError(f"STFT basis of shape {basis.shape}: not Silero v6's front")
        self.basis = np.ascontiguousarray(basis[:, 0, :].T, np.float32)  # (256, 258): real, imag
        conv = [weights[f"encoder.conv_layers.{i}.weight"] for i in range(4)]
        self.biases = [
            weights[f"encoder.conv_layers.{i}.bias"].astype(np.float32) for i in range(4)
        ]
        # Layer 0: kernel 3, stride 1, 4 frames → 4. Layer 1: stride 2, 4 → 2. Layer 2: stride
        # 2, 2 → 1, whose left tap only ever sees padding. Layer 3: 1 → 1, centre tap only.
        self.matrices = [
            _im2col(conv[0]),
            _im2col(conv[1]),
            _im2col(conv[2], slice(1, 3)),
            _im2col(conv[3], slice(1, 2)),
        ]

    def encode(self, windows: np.ndarray, batch: int) -> Iterator[np.ndarray]:
        """(rows, 128) features for each ``batch`` rows of ``windows`` (n, 576), in order. The
        buffers are reused from one batch to the next: use each before asking for the next."""
        n = len(windows)
        size = min(batch, n)
        frames = np.empty((size, FRAMES, N_FFT), np.float32)
        stft = np.empty((size * FRAMES, 2 * BINS), np.float32)
        cols0 = np.zeros((size, FRAMES, 3 * BINS), np.float32)  # edges stay zero (padding)
        out0 = np.empty((size * FRAMES, self.matrices[0].shape[1]), np.float32)
        cols1 = np.zeros((size, 2, 3 * out0.shape[1]), np.float32)
        out1 = np.empty((size * 2, self.matrices[1].shape[1]), np.float32)
        out2 = np.empty((size, self.matrices[2].shape[1]), np.float32)
        out3 = np.empty((size, OUTPUT), np.float32)
        for start in range(0, n, size):
            x = windows[start : start + size]
            m = len(x)
            f = frames[:m]
            for t in range(FRAMES - 1):
                f[:, t] = x[:, HOP * t : HOP * t + N_FFT]
            tail = WINDOW_WITH_CONTEXT - HOP * (FRAMES - 1)
            f[:, -1, :tail] = x[:, HOP * (FRAMES - 1) :]
            f[:, -1, tail:] = x[:, -2 : -2 - _REFLECTED : -1]
            spectra = np.matmul(f.reshape(m * FRAMES, N_FFT), self.basis, out=stft[: m * FRAMES])
            spectra = spectra.reshape(m, FRAMES, 2 * BINS)
            c0 = cols0[:m]
            np.hypot(spectra[:, :, :BINS], spectra[:, :, BINS:], out=c0[:, :, BINS : 2 * BINS])
            c0[:, 1:, :BINS] = c0[:, :-1, BINS : 2 * BINS]  # the frame before
            c0[:, :-1, 2 * BINS :] = c0[:, 1:, BINS : 2 * BINS]  # and after
            y0 = self._layer(0, c0.reshape(m * FRAMES, -1), out0[: m * FRAMES])
            y0 = y0.reshape(m, FRAMES * y0.shape[1])
            c1 = cols1[:m]
            width = out0.shape[1]
            c1[:, 0, width:] = y0[:, : 2 * width]  # frames (pad), 0, 1
            c1[:, 1] = y0[:, width:]  # frames 1, 2, 3
            y1 = self._layer(1, c1.reshape(m * 2, -1), out1[: m * 2])
            y2 = self._layer(2, y1.reshape(m, -1), out2[:m])
            yield self._layer(3, y2, out3[:m])

    def _layer(self, i: int, cols: np.ndarray, out: np.ndarray) -> np.ndarray:
        np.matmul(cols, self.matrices[i], out=out)
        out += self.biases[i]
        return np.maximum(out, 0, out=out)
