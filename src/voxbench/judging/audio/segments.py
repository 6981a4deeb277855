"""The clips a judge hears: one per agent turn of a recorded run, and long clips split on
silences.

Per turn: the agent's audio of each turn is where its chunks played on ``conversation.wav``
(``assistant_audio`` events: ``plays_at`` and length, on the run clock; the recording's
first sample is at ``recording_started.origin``), from the first chunk's start to the last
one's end. ``scope: agent`` hears the agent channel (right) only; ``both`` hears both
channels mixed, from the turn's start.

A clip longer than the judge's input limit is cut in the middle of the silences between
speech (Silero VAD), each piece as long as allowed; where speech runs on past the limit
the cut falls at the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voxbench.audio.vad import detect_speech
from voxbench.audio.wav import Audio, read_wav
from voxbench.core.records import TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.core.timeline import AudioRecorded, RecordingStarted, TurnStarted

AGENT_CHANNEL = 1
"""``conversation.wav``: user left (0), agent right (1)."""
MIN_TURN_SECONDS = 0.05


@dataclass
class Clip:
    """Audio to judge, with its label and the transcript that goes with it."""

    label: str
    audio: Audio
    transcript: str | None = None
    start: float = 0.0
    """Where it starts in its source (seconds)."""


def split_on_silences(audio: Audio, max_seconds: float) -> list[Audio]:
    """``audio`` in pieces no longer than ``max_seconds``, cut inside silences."""
    if audio.duration <= max_seconds:
        return [audio]
    mono = audio if audio.channels == 1 else Audio(audio.samples.mean(axis=1), audio.sample_rate)
    speech = detect_speech(mono)
    gaps = [(a.end + b.start) / 2 for a, b in zip(speech, speech[1:], strict=False)]
    cuts, start = [], 0.0
    while audio.duration - start > max_seconds:
        limit = start + max_seconds
        inside = [g for g in gaps if start < g <= limit]
        cut = inside[-1] if inside else limit
        cuts.append(cut)
        start = cut
    edges = [0.0, *cuts, audio.duration]
    rate = audio.sample_rate
    return [
        Audio(audio.samples[round(a * rate) : round(b * rate)], rate)
        for a, b in zip(edges, edges[1:], strict=False)
        if b - a > 0
    ]


def turn_clips(
    run_dir: RunDirectory, records: list[TurnRecord], scope: str = "agent"
) -> tuple[list[Clip], dict[str, str]]:
    """One clip per recorded turn that has agent audio, and why the others have none."""
    recording = read_wav(run_dir.recording_file)
    events = run_dir.events()
    origin = next((e.origin for e in events if isinstance(e, RecordingStarted)), 0.0)
    starts: dict[str, float] = {}
    spans: dict[str, tuple[float, float]] = {}
    for e in events:
        if e.turn is None:
            continue
        if isinstance(e, TurnStarted):
            starts[e.turn] = e.t
            spans.pop(e.turn, None)  # a retried turn: its last attempt counts
        elif isinstance(e, AudioRecorded) and e.plays_at is not None and e.sample_rate > 0:
            end = e.plays_at + e.samples / e.sample_rate
            a, b = spans.get(e.turn, (e.plays_at, end))
            spans[e.turn] = (min(a, e.plays_at), max(b, end))
    rate = recording.sample_rate
    channels = recording.samples if recording.channels > 1 else recording.samples[:, None]
    clips: list[Clip] = []
    missing: dict[str, str] = {}
    for record in records:
        span = spans.get(record.turn)
        if span is None:
            missing[record.turn] = "no agent audio on the recording"
            continue
        begin = starts.get(record.turn, span[0]) if scope == "both" else span[0]
        a = max(0, round((begin - origin) * rate))
        b = min(len(channels), round((span[1] - origin) * rate))
        if (b - a) / rate < MIN_TURN_SECONDS:
            missing[record.turn] = "the agent audio lies outside the recording"
            continue
        if scope == "both":
            samples = channels[a:b].mean(axis=1)
        else:
            samples = channels[a:b, min(AGENT_CHANNEL, channels.shape[1] - 1)]
        clips.append(
            Clip(
                label=record.turn,
                audio=Audio(np.ascontiguousarray(samples), rate),
                transcript=record.assistant_text,
                start=a / rate,
            )
        )
    return clips, missing


def scoped_audio(audio: Audio, scope: str = "agent") -> Audio:
    """What the judge may hear of a recording: a two-channel ``conversation.wav``-style file
    (user left, agent right) gives the agent channel alone under ``scope: agent`` — the
    caller's voice is never sent — and both channels mixed under ``both``; mono is as is."""
    if audio.channels == 1:
        return audio
    samples = audio.samples[:, AGENT_CHANNEL] if scope == "agent" else audio.samples.mean(axis=1)
    return Audio(np.ascontiguousarray(samples), audio.sample_rate)


def whole_clip(run_dir: RunDirectory, records: list[TurnRecord], scope: str = "agent") -> Clip:
    """The whole recording (the agent channel, or both mixed) as one clip."""
    recording = scoped_audio(read_wav(run_dir.recording_file), scope)
    transcript = "\n".join(r.assistant_text for r in records if r.assistant_text)
    return Clip("run", recording, transcript)
