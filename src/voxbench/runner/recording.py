"""``conversation.wav``: user left, agent right, sample-aligned to the run's timeline.

A sample's index is its time on the run clock (seconds since ``origin``) times the rate. User
audio is placed where it was sent. Agent audio is placed the way a client plays it: a chunk
starts when it arrives, or when the audio queued before it finishes, whichever is later.
Frames are appended to the file as the timeline advances and the header is patched after
each flush, so a killed run leaves a valid WAV of everything recorded so far.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import soundfile as sf

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
        self._user = np.zeros(0, dtype=np.float32)  # pending frames from _written on
        self._agent = np.zeros(0, dtype=np.float32)
        self._tag_track = np.zeros(0, dtype=np.float32)
        self._agent_cursor = 0  # absolute frame where the next agent chunk may start
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

    def _place(self, track: np.ndarray, start: int, samples: np.ndarray) -> np.ndarray:
        offset = start - self._written
        if offset < 0:  # already flushed: keep what still fits
            samples = samples[-offset:]
            offset = 0
        end = offset + len(samples)
        if end > len(track):
            track = np.concatenate([track, np.zeros(end - len(track), dtype=np.float32)])
        track[offset:end] += samples
        return track

    def add_user(self, t: float, audio: Audio) -> None:
        """User audio sent at ``t``."""
        self._user = self._place(self._user, self.frame_at(t), self._prepare(audio))

    def add_agent(self, t: float, audio: Audio) -> float:
        """Agent audio that arrived at ``t``; returns the time it starts playing."""
        start = max(self.frame_at(t), self._agent_cursor)
        samples = self._prepare(audio)
        self._agent = self._place(self._agent, start, samples)
        self._agent_cursor = start + len(samples)
        return self.time_of(start)

    def add_tag(self, t: float) -> None:
        """Mark run-clock time ``t`` (where an answer starts playing) with a tag tone."""
        if self.tags == "off":
            return
        tone = make_tag(self.rate)
        if self.tags == "mix":
            self._agent = self._place(self._agent, self.frame_at(t), tone)
        else:
            self._tag_track = self._place(self._tag_track, self.frame_at(t), tone)

    def _prepare(self, audio: Audio) -> np.ndarray:
        return audio.mono().resampled(self.rate).samples

    # -- writing ------------------------------------------------------------------------

    def flush(self, until: float) -> None:
        """Write every frame before run-clock time ``until`` (silence where nothing played)."""
        end = self.frame_at(until)
        count = end - self._written
        if count <= 0:
            return
        user = np.zeros(count, dtype=np.float32)
        agent = np.zeros(count, dtype=np.float32)
        user[: min(count, len(self._user))] = self._user[:count]
        agent[: min(count, len(self._agent))] = self._agent[:count]
        _append_pcm(self.path, np.stack([user, agent], axis=1), self._written, self.rate)
        if self.tags == "track":
            tag = np.zeros(count, dtype=np.float32)
            tag[: min(count, len(self._tag_track))] = self._tag_track[:count]
            _append_pcm(self.tags_path, tag[:, None], self._written, self.rate)
        self._written = end
        self._user = self._user[count:]
        self._agent = self._agent[count:]
        self._tag_track = self._tag_track[count:]

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
        pending = self._user if index == 0 else self._agent
        lo, hi = max(a, self._written) - self._written, b - self._written
        if hi > lo:
            chunk = np.zeros(hi - lo, dtype=np.float32)
            available = pending[lo:hi]
            chunk[: len(available)] = available
            parts.append(chunk)
        samples = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
        return Audio(samples, self.rate)


def _append_pcm(path: Path, frames: np.ndarray, already: int, rate: int) -> None:
    """Append float frames (frames × channels) as PCM16 and patch the header's sizes."""
    pcm = (np.clip(frames, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
    with path.open("r+b") as f:
        f.seek(0, 2)
        f.write(pcm)
        f.seek(0)
        f.write(_header(already + len(frames), rate, channels=frames.shape[1]))
