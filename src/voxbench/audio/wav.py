"""Audio in memory and on disk: a float32 ``Audio`` value, a tolerant reader and a writer.

``read_wav`` reads what real recorders leave behind: WAVE files whose sizes are placeholders
(0 or 0xFFFFFFFF, as streaming writers leave them), stereo, any sample rate, 8/16/24/32-bit
PCM and float. Other formats libsndfile knows (FLAC, OGG, AIFF, RF64) are read through it.
A file that is missing, empty, corrupt or not audio raises ``AudioError`` naming it.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from voxbench.audio.resample import resample
from voxbench.audio.riff import (
    FORMAT_PCM,
    WaveLayout,
    decode_wave,
    is_riff_wave,
    parse_wave_layout,
)
from voxbench.core.errors import AudioError

PCM16_SCALE = 32768.0


@dataclass(frozen=True, eq=False)
class Audio:
    """Samples as float32 in [-1, 1]: shape (frames,) for mono, (frames, channels) otherwise."""

    samples: np.ndarray
    sample_rate: int

    def __post_init__(self) -> None:
        samples = np.asarray(self.samples)
        if samples.dtype != np.float32:
            samples = samples.astype(np.float32)
        if samples.ndim == 2 and samples.shape[1] == 1:
            samples = samples[:, 0]
        if samples.ndim not in (1, 2):
            raise ValueError(f"audio samples must be 1-D or 2-D, got shape {samples.shape}")
        if int(self.sample_rate) <= 0:
            raise ValueError(f"sample rate must be positive, got {self.sample_rate}")
        object.__setattr__(self, "samples", samples)
        object.__setattr__(self, "sample_rate", int(self.sample_rate))

    @property
    def frames(self) -> int:
        """Number of sample frames (one sample per channel each)."""
        return int(self.samples.shape[0])

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return self.frames / self.sample_rate

    @property
    def channels(self) -> int:
        """Number of channels."""
        return 1 if self.samples.ndim == 1 else int(self.samples.shape[1])

    def mono(self) -> Audio:
        """The mean of the channels (this audio itself when it is mono)."""
        if self.samples.ndim == 1:
            return self
        return Audio(self.samples.mean(axis=1, dtype=np.float32), self.sample_rate)

    def channel(self, index: int) -> Audio:
        """One channel as mono audio (0 is left)."""
        if self.samples.ndim == 1:
            if index != 0:
                raise IndexError(f"mono audio has no channel {index}")
            return self
        return Audio(np.ascontiguousarray(self.samples[:, index]), self.sample_rate)

    def resampled(self, rate: int) -> Audio:
        """The same audio at ``rate`` Hz (soxr, high quality)."""
        if rate == self.sample_rate:
            return self
        return Audio(resample(self.samples, self.sample_rate, rate), rate)

    def slice(self, start: float, end: float | None = None) -> Audio:
        """The part between ``start`` and ``end`` seconds."""
        a = max(0, round(start * self.sample_rate))
        b = self.frames if end is None else max(a, round(end * self.sample_rate))
        return Audio(self.samples[a:b], self.sample_rate)

    def to_pcm16(self) -> bytes:
        """Little-endian signed 16-bit PCM, channels interleaved; clips outside [-1, 1]."""
        scaled = np.clip(np.round(self.samples * PCM16_SCALE), -32768, 32767)
        return scaled.astype("<i2").tobytes()

    @classmethod
    def from_pcm16(cls, data: bytes, sample_rate: int, channels: int = 1) -> Audio:
        """Audio from little-endian interleaved 16-bit PCM bytes."""
        frame_bytes = 2 * channels
        if len(data) % frame_bytes:
            raise AudioError(
                f"{len(data)} bytes of PCM16 is not a whole number of {channels}-channel frames"
            )
        samples = np.frombuffer(data, "<i2").astype(np.float32) / PCM16_SCALE
        if channels > 1:
            samples = samples.reshape(-1, channels)
        return cls(samples, sample_rate)

    @classmethod
    def silence(cls, seconds: float, sample_rate: int, channels: int = 1) -> Audio:
        """Digital silence of the given length."""
        frames = round(seconds * sample_rate)
        shape: tuple[int, ...] = (frames,) if channels == 1 else (frames, channels)
        return cls(np.zeros(shape, np.float32), sample_rate)

    def __repr__(self) -> str:
        return f"Audio({self.duration:.3f} s, {self.sample_rate} Hz, {self.channels} ch)"


def concatenate(parts: list[Audio]) -> Audio:
    """Join audio end to end; all parts must share rate and channel count."""
    if not parts:
        raise ValueError("nothing to concatenate")
    rate, channels = parts[0].sample_rate, parts[0].channels
    for part in parts:
        if part.sample_rate != rate or part.channels != channels:
            raise ValueError(
                f"cannot join {part.sample_rate} Hz/{part.channels} ch onto {rate} Hz/{channels} ch"
            )
    return Audio(np.concatenate([p.samples for p in parts]), rate)


def read_wav(path: str | Path) -> Audio:
    """Read an audio file as float32; ``AudioError`` naming the file if it is not usable audio."""
    p = Path(path)
    if not p.is_file():
        raise AudioError("file not found" if not p.exists() else "not a regular file", file=p)
    if p.stat().st_size == 0:
        raise AudioError("file is empty", file=p)
    with p.open("rb") as f:
        head = f.read(12)
    if is_riff_wave(head):
        return _read_riff(p)
    try:
        data, rate = sf.read(str(p), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError, ValueError) as exc:
        raise AudioError(f"not a readable audio file ({exc})", file=p) from exc
    return _checked(Audio(data, rate), p)


def read_wav_span(path: str | Path, start: float, end: float | None = None) -> Audio:
    """The part of an audio file between ``start`` and ``end`` seconds, decoding only that
    part when libsndfile can seek in the file (a report cutting 150 clips out of a 30-minute
    recording), else the whole file, sliced."""
    p = Path(path)
    try:
        with sf.SoundFile(str(p)) as f:
            rate = f.samplerate
            a = min(max(0, round(start * rate)), f.frames)
            b = f.frames if end is None else min(max(a, round(end * rate)), f.frames)
            f.seek(a)
            data = f.read(b - a, dtype="float32", always_2d=True)
        return Audio(data, rate)
    except (sf.LibsndfileError, RuntimeError, TypeError, ValueError):
        return read_wav(p).slice(start, end)


def _read_riff(p: Path) -> Audio:
    layout = parse_wave_layout(p)
    if layout.sizes_trusted and _is_pcm16(layout):
        # Our decoder gives libsndfile's values (sample / 32768, exact in float32) about ten
        # times faster: it was most of reading a run's conversation.wav for analysis. Integer
        # samples are always finite: no need to scan them.
        return _checked(Audio(decode_wave(p, layout), layout.sample_rate), p, finite=True)
    if layout.sizes_trusted:
        try:
            data, rate = sf.read(str(p), dtype="float32", always_2d=True)
            return _checked(Audio(data, rate), p)
        except (sf.LibsndfileError, RuntimeError, TypeError, ValueError):
            pass  # libsndfile refused it; our own decoder may still read it
    return _checked(Audio(decode_wave(p, layout), layout.sample_rate), p)


def _is_pcm16(layout: WaveLayout) -> bool:
    return layout.format_tag == FORMAT_PCM and layout.block_align == 2 * layout.channels


def _checked(audio: Audio, p: Path, finite: bool = False) -> Audio:
    """``audio`` once it has frames, all finite (``finite``: known to be, from integers)."""
    if audio.frames == 0:
        raise AudioError("file holds no audio frames", file=p)
    if not finite and not np.isfinite(audio.samples).all():
        raise AudioError("file holds NaN or infinite samples", file=p)
    return audio


def write_wav(path: str | Path, audio: Audio, subtype: str = "PCM_16") -> None:
    """Write ``audio`` as a WAVE file, atomically (a reader never sees half a file)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    samples = audio.samples
    if subtype.startswith("PCM"):
        samples = np.clip(samples, -1.0, 1.0)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    try:
        sf.write(tmp, samples, audio.sample_rate, subtype=subtype, format="WAV")
        os.replace(tmp, p)
    except (sf.LibsndfileError, RuntimeError, TypeError, ValueError) as exc:
        raise AudioError(f"cannot write WAV with subtype {subtype!r} ({exc})", file=p) from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
