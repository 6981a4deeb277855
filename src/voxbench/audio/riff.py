"""A small RIFF/WAVE parser for the files libsndfile misreads.

Streaming writers (realtime recorders, pipes, crashed processes) leave the RIFF and
``data`` chunk sizes at 0 or 0xFFFFFFFF, or larger than the file. libsndfile then reads
zero frames, or reads trailing chunks as audio. Here the ``data`` chunk runs to the end of
the file whenever its declared size cannot be true.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voxbench.core.errors import AudioError

FORMAT_PCM = 0x0001
FORMAT_FLOAT = 0x0003
FORMAT_EXTENSIBLE = 0xFFFE
UNKNOWN_SIZES = (0, 0xFFFFFFFF)


@dataclass(frozen=True)
class WaveLayout:
    """Where the samples of a WAVE file are and how they are encoded."""

    format_tag: int
    channels: int
    sample_rate: int
    bits_per_sample: int
    block_align: int
    data_offset: int
    data_bytes: int
    sizes_trusted: bool
    """False when the RIFF or data size was a placeholder or ran past the end of the file."""
    declared_data_bytes: int | None = None
    """The ``data`` size the header states, when it is not a placeholder (more than
    ``data_bytes`` means the file was cut short after its header was written)."""

    @property
    def frames(self) -> int:
        """Sample frames the file holds."""
        return self.data_bytes // self.block_align

    @property
    def declared_frames(self) -> int | None:
        """Sample frames the header says the file holds (None for a placeholder size)."""
        if self.declared_data_bytes is None:
            return None
        return self.declared_data_bytes // self.block_align


def is_riff_wave(head: bytes) -> bool:
    """Whether ``head`` (the first 12 bytes or more) starts a RIFF/WAVE file."""
    return len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WAVE"


def parse_wave_layout(path: Path) -> WaveLayout:
    """Walk the chunks of a RIFF/WAVE file; tolerate placeholder sizes."""
    file_size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(12)
        if not is_riff_wave(head):
            raise AudioError("not a RIFF/WAVE file", file=path)
        riff_size = struct.unpack("<I", head[4:8])[0]
        trusted = riff_size not in UNKNOWN_SIZES and riff_size + 8 <= file_size
        fmt: bytes | None = None
        pos = 12
        while pos + 8 <= file_size:
            f.seek(pos)
            chunk_id, size = struct.unpack("<4sI", f.read(8))
            body = pos + 8
            if chunk_id == b"fmt ":
                fmt = f.read(min(size, 64))
            elif chunk_id == b"data":
                if fmt is None:
                    raise AudioError("'data' chunk comes before the 'fmt ' chunk", file=path)
                room = file_size - body
                declared = None if size in UNKNOWN_SIZES else size
                if size in UNKNOWN_SIZES or size > room:
                    size, trusted = room, False
                return _layout(path, fmt, body, size, trusted, declared)
            if size == 0xFFFFFFFF:
                break
            pos = body + size + (size & 1)  # chunks are padded to even sizes
    if fmt is None:
        raise AudioError("no 'fmt ' chunk: not a usable WAVE file", file=path)
    raise AudioError("no 'data' chunk: the file holds no audio", file=path)


def _layout(
    path: Path, fmt: bytes, offset: int, size: int, trusted: bool, declared: int | None
) -> WaveLayout:
    if len(fmt) < 16:
        raise AudioError(f"'fmt ' chunk is {len(fmt)} bytes, expected at least 16", file=path)
    tag, channels, rate, _, align, bits = struct.unpack("<HHIIHH", fmt[:16])
    if tag == FORMAT_EXTENSIBLE and len(fmt) >= 26:
        tag = struct.unpack("<H", fmt[24:26])[0]  # first two bytes of the sub-format GUID
    if channels == 0 or rate == 0 or bits == 0:
        raise AudioError(
            f"'fmt ' chunk says {channels} channels at {rate} Hz, {bits} bits", file=path
        )
    if align == 0:
        align = channels * ((bits + 7) // 8)
    return WaveLayout(tag, channels, rate, bits, align, offset, size, trusted, declared)


def decode_wave(path: Path, layout: WaveLayout) -> np.ndarray:
    """Samples of ``layout`` as float32 in [-1, 1], shape (frames, channels)."""
    width = layout.block_align // layout.channels
    frames = layout.data_bytes // layout.block_align
    # Read into an array, not bytes, and scale 16-bit samples in place: a run's recording is
    # hundreds of MB, and each copy of it costs page faults as well as the copy.
    raw = np.fromfile(path, np.uint8, count=frames * layout.block_align, offset=layout.data_offset)
    tag = layout.format_tag
    if tag == FORMAT_PCM and width == 1:
        data = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif tag == FORMAT_PCM and width == 2:
        data = np.frombuffer(raw, "<i2").astype(np.float32)
        data /= 32768.0
    elif tag == FORMAT_PCM and width == 3:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        ints = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        ints = np.where(ints >= 1 << 23, ints - (1 << 24), ints)
        data = ints.astype(np.float32) / float(1 << 23)
    elif tag == FORMAT_PCM and width == 4:
        data = (np.frombuffer(raw, "<i4").astype(np.float64) / float(1 << 31)).astype(np.float32)
    elif tag == FORMAT_FLOAT and width == 4:
        data = np.frombuffer(raw, "<f4").astype(np.float32)
    elif tag == FORMAT_FLOAT and width == 8:
        data = np.frombuffer(raw, "<f8").astype(np.float32)
    else:
        raise AudioError(
            f"unsupported WAVE encoding (format tag 0x{tag:04x}, {layout.bits_per_sample} bits)",
            file=path,
        )
    return data.reshape(-1, layout.channels)
