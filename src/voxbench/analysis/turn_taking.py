"""Turn-taking of an audio run, measured on its recording against its timeline.

The timeline says when each turn started, when the user's audio ended and where each agent
chunk was placed; Silero VAD on ``conversation.wav`` (≤ 10 ms boundary resolution; the
public reference works at 32 ms and misses a 0.45 s "Yes.") measures the rest. Per turn:

- ``pipeline_ttfa``: first agent audio on the recording − user speech end.
- ``voice_to_voice``: agent speech onset (VAD) − user speech end (VAD); negative when the
  agent talks over the user. Values ≤ 0 stay in every percentile.
- On a virtual clock both add the turn's ``processing`` (the wall time the host took, which
  virtual time skipped); the issues below are still judged on the recording alone.
- ``silent_pad_vad`` / ``silent_pad_rms``: agent speech onset (VAD / −40 dBFS energy) − first
  agent audio: silence the agent sent before it spoke.
- ``overlaps``: user and agent speech overlapping ≥ 100 ms inside the turn.
- ``tag_alignment``: where the runner logged the first agent audio − where its marker tone
  was found on the recording (when tone tags were recorded); it checks the recording's own
  alignment to ±20 ms.
- ``issues``: what fails the turn's turn-taking (missing response, negative latency, overlap,
  silent padding over 5 s, alignment drift, a missing tag).

Run-wide: unprompted agent speech (not inside any turn's response window).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from voxbench.analysis.timeline import TurnWindow
from voxbench.audio.vad import SileroVAD, SpeechSegment
from voxbench.audio.wav import Audio
from voxbench.core.measures import TurnMeasures
from voxbench.core.records import TurnRecord

OVERLAP_MIN = 0.100
"""Seconds of simultaneous speech that count as an overlap."""
MAX_SILENT_PAD = 5.0
"""More silence than this before the agent speaks fails turn-taking."""
TAG_TOLERANCE = 0.020
RMS_ONSET_DBFS = -40.0


@dataclass(frozen=True)
class TurnTakingFindings:
    """Run-wide findings of the recording."""

    unprompted: list[tuple[float, float]]
    user_segments: int
    agent_segments: int


def _rms_onset(
    samples: np.ndarray, rate: int, threshold_dbfs: float = RMS_ONSET_DBFS
) -> float | None:
    frame = max(1, rate // 200)  # 5 ms
    usable = len(samples) // frame * frame
    if usable == 0:
        return None
    rms = np.sqrt(np.mean(samples[:usable].reshape(-1, frame) ** 2, axis=1) + 1e-12)
    loud = np.nonzero(20 * np.log10(rms) > threshold_dbfs)[0]
    return float(loud[0] * frame / rate) if loud.size else None


def measure_turn_taking(
    measures: list[TurnMeasures],
    windows: dict[str, TurnWindow],
    records: list[TurnRecord],
    recording: Audio,
    origin: float,
    tags: list[float] | None = None,
) -> TurnTakingFindings:
    """Add what the recording shows to each turn's ``measures`` (in place).

    ``recording`` is ``conversation.wav`` (user left, agent right); ``origin`` is the run-clock
    time of its first sample (the ``recording_started`` event); ``tags`` are the times, in
    seconds of the recording, of marker tones found on it, if tags were recorded.
    """
    user = recording.channel(0)
    agent = recording.channel(1)
    vad = SileroVAD(min_speech_ms=100, min_silence_ms=300)
    # The two channels at once: each call carries its own VAD state (``audio.vad``), so the
    # segments are those of one call after the other, in about half the time on two cores.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vad-user") as pool:
        user_future = pool.submit(vad.segments, user)
        agent_segs = [_shift(s, origin) for s in vad.segments(agent)]
        user_segs = [_shift(s, origin) for s in user_future.result()]
    by_turn = {m.turn: m for m in measures}
    claimed: set[int] = set()
    for record in records:
        timing = by_turn[record.turn]
        w = windows.get(record.turn)
        if not timing.scored or w is None:
            continue
        start, end = w.start, w.end if w.end is not None else w.start
        user_end = w.user_end if w.user_end is not None else end
        mine = [s for s in user_segs if start - 0.05 <= s.start < user_end + 0.05]
        if mine:
            timing.user_speech_start, timing.user_speech_end = mine[0].start, mine[-1].end
        replies = [(i, s) for i, s in enumerate(agent_segs) if start <= s.start <= end + 0.05]
        if replies:
            claimed.update(i for i, _ in replies)
            timing.agent_speech_start = replies[0][1].start
            timing.agent_speech_end = replies[-1][1].end
        timing.first_agent_audio = w.first_audio_plays_at
        _derive(timing, agent, origin)
        timing.overlaps = [
            (round(max(u.start, a.start), 4), round(min(u.end, a.end), 4))
            for u in mine
            for _, a in replies
            if min(u.end, a.end) - max(u.start, a.start) >= OVERLAP_MIN
        ]
        if tags is not None and timing.first_agent_audio is not None:
            logged = timing.first_agent_audio - origin
            near = [t for t in tags if abs(t - logged) <= 0.150]
            timing.tag_alignment = (
                round(logged - min(near, key=lambda t: abs(t - logged)), 4) if near else None
            )
            if not near:
                timing.issues.append("missing_tag")
        # Judged on the recording as it is: a verdict never moves with the host's speed.
        timing.issues += _issues(record, timing)
        if timing.processing:  # a virtual clock: in real time the answer came this much later
            for name in ("pipeline_ttfa", "voice_to_voice"):
                value = getattr(timing, name)
                if value is not None:
                    setattr(timing, name, round(value + timing.processing, 4))
    unprompted = [
        (round(s.start, 4), round(s.end, 4)) for i, s in enumerate(agent_segs) if i not in claimed
    ]
    return TurnTakingFindings(unprompted, len(user_segs), len(agent_segs))


def _shift(segment: SpeechSegment, origin: float) -> SpeechSegment:
    return SpeechSegment(round(segment.start + origin, 4), round(segment.end + origin, 4))


def _derive(t: TurnMeasures, agent: Audio, origin: float) -> None:
    rate = agent.sample_rate
    if t.user_speech_end is not None:
        if t.first_agent_audio is not None:
            t.pipeline_ttfa = round(t.first_agent_audio - t.user_speech_end, 4)
        if t.agent_speech_start is not None:
            t.voice_to_voice = round(t.agent_speech_start - t.user_speech_end, 4)
    if t.first_agent_audio is not None:
        if t.agent_speech_start is not None:
            t.silent_pad_vad = round(t.agent_speech_start - t.first_agent_audio, 4)
        a = max(0, round((t.first_agent_audio - origin) * rate))
        tail = agent.samples[a : a + int((MAX_SILENT_PAD + 1) * rate)]
        onset = _rms_onset(tail, rate)
        t.silent_pad_rms = round(onset, 4) if onset is not None else None


def _issues(record: TurnRecord, t: TurnMeasures) -> list[str]:
    issues = []
    if record.status == "no_response" or t.agent_speech_start is None:
        issues.append("missing_response")
    if t.voice_to_voice is not None and t.voice_to_voice < 0:
        issues.append(f"negative_latency ({t.voice_to_voice * 1000:.0f} ms)")
    if t.overlaps:
        issues.append(f"overlap ({len(t.overlaps)})")
    if t.silent_pad_vad is not None and t.silent_pad_vad > MAX_SILENT_PAD:
        issues.append(f"high_silent_pad ({t.silent_pad_vad:.1f} s)")
    if t.tag_alignment is not None and abs(t.tag_alignment) > TAG_TOLERANCE:
        issues.append(f"alignment_drift ({t.tag_alignment * 1000:.0f} ms)")
    return issues
