"""G.711 μ-law (PCMU), the telephone codec: 8-bit samples, 14-bit dynamic range.

Encoding follows ITU-T G.711 on 14-bit magnitudes (bias 33, clip 8159): the sign, a 3-bit
segment and 4 mantissa bits, inverted — the reference implementation's bytes, sample for
sample. Decoding maps each byte to its segment's midpoint value.
"""

from __future__ import annotations

import numpy as np

_BIAS = 0x84
_CLIP14 = 8159
_SEGMENT_ENDS = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF])


def _decode_table() -> np.ndarray:
    codes = ~np.arange(256, dtype=np.int32) & 0xFF
    sign = codes & 0x80
    exponent = (codes >> 4) & 0x07
    mantissa = codes & 0x0F
    magnitude = (((mantissa << 3) + _BIAS) << exponent) - _BIAS
    return np.where(sign != 0, -magnitude, magnitude).astype(np.int16)


_DECODE = _decode_table()


def mulaw_encode(pcm: bytes) -> bytes:
    """Mono PCM16 little-endian → μ-law bytes (one per sample)."""
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.int32) >> 2
    mask = np.where(samples < 0, 0x7F, 0xFF)
    magnitude = np.minimum(np.abs(samples), _CLIP14) + 0x21
    segment = np.searchsorted(_SEGMENT_ENDS, magnitude)  # 8: beyond the last segment
    code = np.where(
        segment > 7, 0x7F, (segment << 4) | ((magnitude >> (np.minimum(segment, 7) + 1)) & 0x0F)
    )
    return (code ^ mask).astype(np.uint8).tobytes()


def mulaw_decode(data: bytes) -> bytes:
    """μ-law bytes → mono PCM16 little-endian."""
    return _DECODE[np.frombuffer(data, dtype=np.uint8)].astype("<i2").tobytes()
