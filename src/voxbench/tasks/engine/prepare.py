"""A record's audio made ready to send: decoded, resampled, cut, encoded as WAV, hashed.

``prepare_clip`` does it for one clip, in a thread for small runs and in the worker
processes of ``tasks.engine.pool`` for large ones: the same function on the same input, so
both send the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import io
import struct
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import soundfile as sf

from voxbench.audio.wav import Audio, read_wav
from voxbench.core.errors import AudioError
from voxbench.tasks.engine.chunking import Piece, chunk_pieces

if TYPE_CHECKING:  # the worker processes need not import the HTTP clients
    from voxbench.providers.completion import Body

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
    bodies: list[Body] | None = None
    """Each piece's request body, when the worker processes encoded them (``BodySpec``)."""
    pieces: tuple[Piece, ...] = ()
    """Where each piece lies in the clip; empty when the clip is sent whole."""
    b64: list[bytes] | None = None
    """Each piece's WAV in base64, when the bodies were spliced around it (``BodySpec``):
    kept by content (``tasks.engine.clips``) for the next record with the same clip."""


@dataclass(frozen=True)
class BodySpec:
    """How a client encodes a request about a clip: its ``body_builder`` and the request
    with the audio left empty (``request_of(b"", …)``)."""

    builder: Callable[[Any], bytes]
    template: Any

    @property
    def splices(self) -> bool:
        """Whether a body is the WAV's base64 between two parts the builder gives
        (``around``): a clip is then encoded once, whatever the prompt."""
        return callable(getattr(self.builder, "around", None))

    def bodies(self, wavs: list[bytes]) -> list[Body]:
        """The request body of each piece."""
        return [self.builder(replace(self.template, audio_wav=w)) for w in wavs]

    def spliced(self, b64: list[bytes] | tuple[bytes, ...]) -> list[Body]:
        """The request body of each piece given its WAV in base64 (``splices`` builders), as
        its parts: joined, the bytes ``bodies`` makes of the WAVs (the client joins them
        as it sends them, and the base64 is held once, by the clip cache)."""
        head, tail = self.builder.around(self.template)  # type: ignore[attr-defined]
        return [(head, b, tail) for b in b64]

    def encoded(self, prepared: Prepared) -> Prepared:
        """``prepared`` with its request bodies (and, spliced, the base64 they carry) and
        without its WAVs: the bodies carry the audio, so a clip waiting is held once."""
        if not self.splices:
            return replace(prepared, wavs=[], bodies=self.bodies(prepared.wavs))
        b64 = [base64.b64encode(w) for w in prepared.wavs]
        return replace(prepared, wavs=[], bodies=self.spliced(b64), b64=b64)


def wav_bytes(audio: Audio) -> bytes:
    """Mono 16-bit PCM WAV of ``audio`` (what ``input_audio`` / ``inline_data`` carry)."""
    samples = np.clip(np.round(audio.mono().samples * 32768.0), -32768, 32767).astype("<i2")
    return _wav_of_pcm16(samples.tobytes(), audio.sample_rate)


def _wav_of_pcm16(data: bytes, rate: int) -> bytes:
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 1, 1, rate, rate * 2, 2, 16,
        b"data", len(data),
    )  # fmt: skip
    return header + data


def source_pcm16(data: bytes, rate: int) -> bytes | None:
    """The samples of an encoded mono clip at ``rate`` as 16-bit PCM, when the source holds
    exactly them: a PCM WAV's data chunk as it is (no decoding), a 16-bit FLAC's samples
    (no float round trip); None for anything else (another rate, channels or sample format).
    ``wav_bytes`` of the decoded clip holds the same samples (``decode_encoded`` scales 16-bit
    samples by 1/32768, which ``wav_bytes`` undoes exactly)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return _wav_pcm16(data, rate)
    if data[:4] == b"fLaC":
        try:
            info = sf.info(io.BytesIO(data))
            if info.channels != 1 or info.samplerate != rate or info.subtype != "PCM_16":
                return None
            samples, _ = sf.read(io.BytesIO(data), dtype="int16", always_2d=False)
        except (sf.LibsndfileError, RuntimeError):
            return None
        return samples.astype("<i2", copy=False).tobytes()
    return None


def _wav_pcm16(data: bytes, rate: int) -> bytes | None:
    """A WAV's PCM16 data chunk when the file is mono 16-bit PCM at ``rate``, else None."""
    offset, fmt, size = 12, -1, len(data)
    while offset + 8 <= size:
        chunk, length = struct.unpack_from("<4sI", data, offset)
        body = offset + 8
        if chunk == b"fmt " and length >= 16 and body + length <= size:
            fmt = body
        elif chunk == b"data":
            if fmt < 0 or body + length > size or length % 2:
                return None
            tag, channels, found_rate, _, align, bits = struct.unpack_from("<HHIIHH", data, fmt)
            # WAVE_FORMAT_EXTENSIBLE: PCM when its sub-format GUID starts with 1.
            extensible = tag == 0xFFFE and data[fmt + 24 : fmt + 26] == b"\x01\x00"
            if tag != 1 and not extensible:
                return None
            if (channels, bits, align, found_rate) != (1, 16, 2, rate):
                return None
            return data[body : body + length]
        offset = body + length + (length & 1)
    return None


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


def prepare_encoded(
    data: bytes | None, path: str | None, name: str, cut: Cut
) -> tuple[Prepared, list[Audio] | None]:
    """``prepare_clip`` of an encoded clip, without decoding it when its samples are already
    what is sent (``source_pcm16``: mono 16-bit at the task's rate, no longer than a piece):
    the same WAV bytes, no float samples (None: read back from the WAV where wanted)."""
    passed = pass_through(data, path, cut)
    if passed is not None:
        return passed, None
    return prepare_clip(decode_encoded(data, path, name), cut)


def pass_through(data: bytes | None, path: str | None, cut: Cut) -> Prepared | None:
    """The payload of a clip whose source already holds what is sent (``prepare_encoded``),
    cheaply (no float samples, no resampling); None when it must be decoded."""
    if data is None and path and path.lower().endswith(".wav"):
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None  # decode_encoded names the file
    pcm = source_pcm16(data, cut.sample_rate) if data is not None else None
    if not pcm or len(pcm) // 2 / cut.sample_rate > cut.max_seconds:  # empty: an error
        return None
    wav = _wav_of_pcm16(pcm, cut.sample_rate)
    return Prepared([wav], [hashlib.sha256(wav).hexdigest()])


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
