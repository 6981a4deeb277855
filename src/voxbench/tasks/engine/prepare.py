"""A record's audio made ready to send: decoded, resampled, cut, encoded as WAV, hashed.

``prepare_clip`` does it for one clip, in a thread for small runs and in the worker
processes of ``tasks.engine.pool`` for large ones: the same function on the same input, so
both send the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import struct
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import soundfile as sf

from voxbench.audio.wav import Audio, read_wav
from voxbench.core.errors import AudioError
from voxbench.tasks.engine.chunking import Piece, chunk_pieces

WAV_HEADER = 44
"""Bytes before the samples in the WAVs ``wav_bytes`` writes (RIFF, fmt, data headers)."""


@dataclass(frozen=True)
class Cut:
    """How a clip is cut to what a task sends (``LongAudio``, as plain values)."""

    sample_rate: int
    policy: str
    max_seconds: float
    overlap_seconds: float
    search_fraction: float = 0.0
    """The last part of a chunk searched for a silence to end it in (0: hard cuts only)."""


@dataclass(frozen=True)
class Prepared:
    """The WAV payload of each piece of a clip and its SHA-256 (what the cache key hashes)."""

    wavs: list[bytes]
    """Empty when ``bodies`` carry the audio."""
    digests: list[str]
    bodies: list[bytes] | None = None
    """Each piece's request body, when the worker processes encoded them (``BodySpec``)."""
    pieces: tuple[Piece, ...] = ()
    """Where each piece lies in the clip; empty when the clip is sent whole."""


@dataclass(frozen=True)
class BodySpec:
    """How a client encodes a request about a clip: its ``body_builder`` and the request
    with the audio left empty (``request_of(b"", …)``)."""

    builder: Callable[[Any], bytes]
    template: Any

    def bodies(self, wavs: list[bytes]) -> list[bytes]:
        """The request body of each piece."""
        return [self.builder(replace(self.template, audio_wav=w)) for w in wavs]


def wav_bytes(audio: Audio) -> bytes:
    """Mono 16-bit PCM WAV of ``audio`` (what ``input_audio`` / ``inline_data`` carry)."""
    samples = np.clip(np.round(audio.mono().samples * 32768.0), -32768, 32767).astype("<i2")
    data = samples.tobytes()
    rate = audio.sample_rate
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 1, 1, rate, rate * 2, 2, 16,
        b"data", len(data),
    )  # fmt: skip
    return header + data


def audio_of_wav(wav: bytes, sample_rate: int) -> Audio:
    """The audio a ``wav_bytes`` payload holds (exactly what the model hears)."""
    pcm = np.frombuffer(wav, dtype="<i2", offset=WAV_HEADER)
    return Audio(pcm.astype(np.float32) / np.float32(32768.0), sample_rate)


def cut_pieces(audio: Audio, cut: Cut) -> tuple[list[Audio], list[Piece]]:
    """The clip resampled and cut as the task says, and where each piece lies (no pieces
    listed when it is sent whole)."""
    audio = audio.mono().resampled(cut.sample_rate)
    if audio.duration <= cut.max_seconds:
        return [audio], []
    if cut.policy == "truncate":
        return [audio.slice(0, cut.max_seconds)], [Piece(0.0, cut.max_seconds, "truncated")]
    pieces = chunk_pieces(
        audio,
        max_seconds=cut.max_seconds,
        overlap_seconds=cut.overlap_seconds,
        search_fraction=cut.search_fraction,
    )
    return [audio.slice(p.start, p.end) for p in pieces], pieces


def prepare_clip(audio: Audio, cut: Cut) -> tuple[Prepared, list[Audio]]:
    """The payloads of a decoded clip, and the audio pieces they encode."""
    pieces, spans = cut_pieces(audio, cut)
    wavs = [wav_bytes(p) for p in pieces]
    digests = [hashlib.sha256(w).hexdigest() for w in wavs]
    return Prepared(wavs, digests, pieces=tuple(spans)), pieces


def decode_encoded(data: bytes | None, path: str | None, name: str) -> Audio:
    """Decode a clip given as encoded bytes, or as a file when there are none."""
    if data is None:
        if not path:
            raise AudioError(f"{name}: the row has neither audio bytes nor a path")
        return read_wav(path)
    try:
        samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=False)
    except sf.LibsndfileError as exc:
        raise AudioError(f"{name}: cannot decode the audio ({exc})") from exc
    return Audio(samples, rate)
