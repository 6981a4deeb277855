"""PCM16 helpers for realtime adapters: streaming resampling and base64 framing.

Providers take one fixed input rate (OpenAI 24 kHz, Gemini 16 kHz); the runner may stream
any rate. A streaming resampler per input rate keeps chunk boundaries click-free, which a
per-chunk resample would not.
"""

from __future__ import annotations

import base64
import binascii

import numpy as np
import soxr

from voxbench.core.errors import ProtocolError


class PcmResampler:
    """Resample mono PCM16 chunks to ``target_rate``, keeping filter state across chunks."""

    def __init__(self, target_rate: int) -> None:
        self.target_rate = target_rate
        self._streams: dict[int, soxr.ResampleStream] = {}

    def __call__(self, pcm: bytes, sample_rate: int) -> bytes:
        """Resample one chunk; the same rate as the target passes through untouched."""
        if sample_rate == self.target_rate or not pcm:
            return pcm
        stream = self._streams.get(sample_rate)
        if stream is None:
            stream = soxr.ResampleStream(sample_rate, self.target_rate, 1, dtype="int16")
            self._streams[sample_rate] = stream
        samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2")
        return np.asarray(stream.resample_chunk(samples), dtype="<i2").tobytes()

    def flush(self) -> bytes:
        """The samples still held in the filters (call at the end of a user turn)."""
        out = b""
        for stream in self._streams.values():
            tail = stream.resample_chunk(np.zeros(0, dtype="<i2"), last=True)
            out += np.asarray(tail, dtype="<i2").tobytes()
        self._streams.clear()
        return out


SILENCE_PEAK = 64
"""Peak sample (of 32767) under which a chunk counts as digital silence (about -54 dBFS)."""


def is_silent(pcm: bytes) -> bool:
    """Whether a PCM16 chunk is (near) digital silence."""
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2")
    return samples.size == 0 or int(np.abs(samples.astype(np.int32)).max()) < SILENCE_PEAK


def b64encode(pcm: bytes) -> str:
    """Base64 text of raw bytes."""
    return base64.b64encode(pcm).decode("ascii")


def b64decode(text: str, what: str = "audio") -> bytes:
    """Bytes of base64 ``text``; a corrupt payload is a ``ProtocolError``."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ProtocolError(f"{what} is not valid base64: {exc}") from exc


def rate_from_mime(mime: str | None, default: int) -> int:
    """``audio/pcm;rate=24000`` → 24000; ``default`` when no rate is given (Vertex omits it)."""
    for part in (mime or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == "rate" and value.isdigit():
            return int(value)
    return default
