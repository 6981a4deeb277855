"""``conversation.wav``: user left, agent right, sample-aligned to the run's timeline.

A sample's index is its time on the run clock (seconds since ``origin``) times the rate. User
audio is placed where it was sent. Agent audio is placed the way a client plays it: a chunk
starts when it arrives, or when the audio queued before it finishes, whichever is later.
Frames are appended to the file as the timeline advances and the header is patched after
each flush, so a killed run leaves a valid WAV of everything recorded so far.

Audio at another rate is resampled as one signal, never chunk by chunk: a chunk resampled on
its own is zero-padded at both edges by the filter, which leaves a click every chunk (0.15 on
a 0.5 sine sent in 20 ms chunks at 16 kHz). The runner hands the user's turns over
already at the recording's rate; the agent's chunks go through one streaming resampler per
stretch of contiguous playback, whose output equals resampling the stretch at once.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from voxbench.audio.tags import make_tag
from voxbench.audio.wav import Audio

RECORDING_RATE = 24_000
_HEADER_BYTES = 44


def _header(frames: int, rate: int, channels: int = 2) -> bytes:
    block = 2 * channels  # 16-bit samples
    data = frames * block
    return (
        b"RIFF"
        + struct.pack("<I", 36 + data)
        + b"WAVE"
        + b"fmt "
        + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * block, block, 16)
        + b"data"
        + struct.pack("<I", data)
    )


class ConversationRecorder:
    """Builds the two-channel recording of a run as it happens.

    Optional marker tones (2 kHz, 15 ms: the public turn-metrics method's tags) mark where
    each answer's first agent audio starts playing: with ``tags="track"`` on their own
    ``tags.wav`` (the agent's recorded audio stays clean), with ``"mix"`` added into the agent
    channel as the public method does. ``voxbench analyze`` checks them against the timeline.
    """

    def __init__(
        self,
        path: Path,
        origin: float,
        rate: int = RECORDING_RATE,
        tags: str = "off",
        tags_path: Path | None = None,
    ) -> None:
        self.path = path
        self.origin = origin
        self.rate = rate
        self.tags = tags
        self.tags_path = tags_path or path.with_name(path.stem + "_tags.wav")
        self._written = 0  # frames already in the file
        self._user = _Track()  # pending frames from _written on
        self._agent = _Track()
        self._tag_track = _Track()
        self._agent_cursor = 0  # absolute frame where the next agent chunk may start
        self._stretch: _Stretch | None = None  # agent audio being resampled as one signal
        if path.is_file() and path.stat().st_size > _HEADER_BYTES:
            self._written = (path.stat().st_size - _HEADER_BYTES) // 4
            self._agent_cursor = self._written
        else:
            path.write_bytes(_header(0, rate))
        if tags == "track":
            if not self.tags_path.is_file():
                self.tags_path.write_bytes(_header(0, rate, channels=1))
            have = max(0, (self.tags_path.stat().st_size - _HEADER_BYTES) // 2)
            if have < self._written:  # tags switched on when resuming: align the track
                _append_pcm(self.tags_path, np.zeros((self._written - have, 1)), have, rate)

    # -- timeline <-> frames ------------------------------------------------------------

    def frame_at(self, t: float) -> int:
        """The frame index of run-clock time ``t``."""
        return max(0, round((t - self.origin) * self.rate))

    def time_of(self, frame: int) -> float:
        """The run-clock time of frame ``frame``."""
        return self.origin + frame / self.rate

    @property
    def end_time(self) -> float:
        """Run-clock time of the last frame written to the file."""
        return self.time_of(self._written)

    @property
    def agent_playback_end(self) -> float:
        """When the agent audio received so far finishes playing."""
        return self.time_of(self._agent_cursor)

    # -- adding audio -------------------------------------------------------------------

    def _place(self, track: _Track, start: int, samples: np.ndarray) -> None:
        offset = start - self._written
        if offset < 0:  # already flushed: keep what still fits
            samples = samples[-offset:]
            offset = 0
        track.add(offset, samples)

    def add_user(self, t: float, audio: Audio) -> None:
        """User audio sent at ``t`` (pass it at the recording's rate: see the module doc)."""
        self._place(self._user, self.frame_at(t), audio.mono().resampled(self.rate).samples)

    def add_agent(self, t: float, audio: Audio) -> float:
        """Agent audio that arrived at ``t``; returns the time it starts playing."""
        start = max(self.frame_at(t), self._agent_cursor)
        audio = audio.mono()
        if audio.sample_rate == self.rate:
            self._end_stretch()
            self._place(self._agent, start, audio.samples)
            self._agent_cursor = start + audio.frames
            return self.time_of(start)
        stretch = self._stretch
        if stretch is None or stretch.rate != audio.sample_rate or start != self._agent_cursor:
            self._end_stretch()  # a gap in playback (or a new rate) starts a new stretch
            stretch = self._stretch = _Stretch(audio.sample_rate, self.rate, start)
        at = stretch.placed  # before feeding: the output continues the stretch
        self._place(self._agent, at, stretch.feed(audio.samples))
        self._agent_cursor = stretch.end
        return self.time_of(start)

    def _end_stretch(self) -> None:
        """Place the resampler's last samples (before anything reads or writes the agent
        channel, and when its playback stops)."""
        if self._stretch is not None:
            stretch, self._stretch = self._stretch, None
            at = stretch.placed
            self._place(self._agent, at, stretch.finish())

    def add_tag(self, t: float) -> None:
        """Mark run-clock time ``t`` (where an answer starts playing) with a tag tone."""
        if self.tags == "off":
            return
        tone = make_tag(self.rate)
        if self.tags == "mix":
            self._place(self._agent, self.frame_at(t), tone)
        else:
            self._place(self._tag_track, self.frame_at(t), tone)

    # -- writing ------------------------------------------------------------------------

    def flush(self, until: float) -> None:
        """Write every frame before run-clock time ``until`` (silence where nothing played)."""
        self._end_stretch()
        end = self.frame_at(until)
        count = end - self._written
        if count <= 0:
            return
        user, agent = self._user.take(count), self._agent.take(count)
        _append_pcm(self.path, np.stack([user, agent], axis=1), self._written, self.rate)
        tag = self._tag_track.take(count)
        if self.tags == "track":
            _append_pcm(self.tags_path, tag[:, None], self._written, self.rate)
        self._written = end

    def agent_audio(self, start: float, end: float) -> Audio:
        """The agent channel between two run-clock times (from the file and pending frames)."""
        return self._channel(1, start, end)

    def user_audio(self, start: float, end: float) -> Audio:
        """The user channel between two run-clock times."""
        return self._channel(0, start, end)

    def _channel(self, index: int, start: float, end: float) -> Audio:
        a, b = self.frame_at(start), self.frame_at(end)
        parts = []
        if a < self._written:
            stored, _ = sf.read(
                self.path, start=a, stop=min(b, self._written), dtype="float32", always_2d=True
            )
            parts.append(stored[:, index])
        if index == 1:
            self._end_stretch()
        pending = self._user if index == 0 else self._agent
        lo, hi = max(a, self._written) - self._written, b - self._written
        if hi > lo:
            parts.append(pending.window(lo, hi))
        samples = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
        return Audio(samples, self.rate)


class _Track:
    """One channel's frames not yet written, from the file's end on; grows by doubling, so
    adding a chunk costs the chunk, not the whole pending stretch."""

    def __init__(self) -> None:
        self._buffer = np.zeros(0, dtype=np.float32)
        self._length = 0  # frames in use; the buffer's tail beyond it is zeros

    def add(self, offset: int, samples: np.ndarray) -> None:
        """Mix ``samples`` in from frame ``offset`` on."""
        end = offset + len(samples)
        if end > len(self._buffer):
            grown = np.zeros(max(end, 2 * len(self._buffer)), dtype=np.float32)
            grown[: self._length] = self._buffer[: self._length]
            self._buffer = grown
        self._buffer[offset:end] += samples
        self._length = max(self._length, end)

    def window(self, lo: int, hi: int) -> np.ndarray:
        """A copy of frames ``lo`` to ``hi`` (zeros where nothing was placed)."""
        out = np.zeros(hi - lo, dtype=np.float32)
        available = self._buffer[lo : min(hi, self._length)]
        out[: len(available)] = available
        return out

    def take(self, count: int) -> np.ndarray:
        """The first ``count`` frames (zero-padded), dropped from the track."""
        out = self.window(0, count)
        rest = self._buffer[count : self._length].copy() if self._length > count else None
        self._buffer = np.zeros(0, dtype=np.float32) if rest is None else rest
        self._length = 0 if rest is None else len(rest)
        return out


class _Stretch:
    """Agent audio played without a gap, resampled as one signal by a streaming resampler
    (its output equals resampling the whole stretch at once)."""

    def __init__(self, rate: int, to_rate: int, start: int) -> None:
        self.rate, self.to_rate, self.start = rate, to_rate, start
        self._stream = soxr.ResampleStream(rate, to_rate, 1, dtype="float32", quality="HQ")
        self._fed = 0  # input frames
        self._out = 0  # output frames produced

    @property
    def placed(self) -> int:
        """The frame where the next output sample goes."""
        return self.start + self._out

    @property
    def end(self) -> int:
        """The frame where the input fed so far finishes playing."""
        return self.start + round(self._fed * self.to_rate / self.rate)

    def feed(self, samples: np.ndarray) -> np.ndarray:
        """Output for ``samples`` (the filter holds back a few milliseconds until ``finish``)."""
        self._fed += len(samples)
        out = self._stream.resample_chunk(np.ascontiguousarray(samples, dtype=np.float32))
        self._out += len(out)
        return np.asarray(out, dtype=np.float32)

    def finish(self) -> np.ndarray:
        """The samples the filter still holds."""
        out = self._stream.resample_chunk(np.zeros(0, dtype=np.float32), last=True)
        self._out += len(out)
        return np.asarray(out, dtype=np.float32)


def _append_pcm(path: Path, frames: np.ndarray, already: int, rate: int) -> None:
    """Append float frames (frames × channels) as PCM16 and patch the header's sizes."""
    pcm = (np.clip(frames, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
    with path.open("r+b") as f:
        f.seek(0, 2)
        f.write(pcm)
        f.seek(0)
        f.write(_header(already + len(frames), rate, channels=frames.shape[1]))
