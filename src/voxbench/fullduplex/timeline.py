"""The model's output on the input's timeline, as a loudspeaker would have played it.

Sample 0 of the output is sample 0 of the input. A chunk of agent audio starts playing when
it arrives, or when what was queued before it has finished playing (targets send audio
faster than real time); a barge-in stops playback at once and drops what was queued.
Everything past the input's end is cut, so the output has exactly the input's length.
"""

from __future__ import annotations

import numpy as np

from voxbench.audio.wav import Audio


class OutputTimeline:
    """A time-aligned output buffer of ``duration`` seconds at ``sample_rate``."""

    def __init__(self, frames: int, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self.samples = np.zeros(frames, dtype=np.float32)
        self.cursor = 0.0
        """When what is queued so far finishes playing (seconds)."""
        self.spans: list[list[float]] = []
        """Where agent audio plays: ``[start, end]`` seconds, contiguous chunks merged."""

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate

    def place(self, chunk: Audio, arrival: float) -> tuple[float, float]:
        """Queue ``chunk`` (arrived at ``arrival`` s); returns where it plays."""
        data = chunk.mono().resampled(self.sample_rate).samples
        start = max(arrival, self.cursor)
        end = start + len(data) / self.sample_rate
        self.cursor = end
        first = round(start * self.sample_rate)
        if first < len(self.samples) and len(data):
            take = min(len(data), len(self.samples) - first)
            self.samples[first : first + take] += data[:take]
        if self.spans and abs(self.spans[-1][1] - start) < 1e-6:
            self.spans[-1][1] = end
        elif len(data):
            self.spans.append([start, end])
        return start, end

    def stop(self, t: float) -> float:
        """Stop playback at ``t`` (barge-in): silence what was queued after it.

        Returns the seconds of audio cut (0 when nothing was playing or queued at ``t``).
        """
        if self.cursor <= t:
            return 0.0
        cut = self.cursor - t
        first = max(0, round(t * self.sample_rate))
        self.samples[first:] = 0.0
        self.cursor = t
        kept = []
        for start, end in self.spans:
            if start < t:
                kept.append([start, min(end, t)])
        self.spans = kept
        return cut

    def playing_at(self, t: float) -> bool:
        """Whether agent audio is playing (or queued to play) at ``t``."""
        return self.cursor > t

    def audio(self) -> Audio:
        return Audio(np.clip(self.samples, -1.0, 1.0), self.sample_rate)
