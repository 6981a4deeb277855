"""Latency from the timeline alone: what the runner stamped, turn by turn.

Each turn's last attempt (a retried or resumed turn starts again at its last
``turn_started``) gives its window and its latencies, all relative to the moment the user
finished (``user_turn_ended``: the text was sent, or the last audio sample was streamed):

- ``ttfb``: the first target event that is agent output of any kind (text, audio, a tool call,
  an error, the end of the response) — not the target's own transcript of the user, usage,
  VAD or stage reports;
- ``ttft``: the first assistant text (or provider transcript of the agent's speech);
- ``first_audio_latency``: the first agent audio chunk received;
- ``stages``: durations of a composite target's stages (a cascade's stt, llm_first_token,
  tts_first_audio), from the start and end marks it emitted.

Text runs get these too; audio runs add what the recording shows (``analysis.turn_taking``).

They measure how long the host took, so they are read on the wall clock: an event's ``wall``
stamp in a virtual-clock run (virtual time stands still while an in-process target computes:
on it, every answer comes at once), else its run-clock time ``t`` (which is real time).
Where things are on the recording stays on the run clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voxbench.core.timeline import (
    AudioRecorded,
    SpeechStartedRecorded,
    SpeechStoppedRecorded,
    StageMarkRecorded,
    StageTimingRecorded,
    TextRecorded,
    TimelineEvent,
    TurnEnded,
    TurnStarted,
    UsageRecorded,
    UserTranscriptRecorded,
    UserTurnEnded,
)

_NOT_AGENT_OUTPUT = (
    UserTranscriptRecorded,
    UsageRecorded,
    SpeechStartedRecorded,
    SpeechStoppedRecorded,
    StageMarkRecorded,
    StageTimingRecorded,
)


@dataclass
class TurnWindow:
    """Stamps of one turn's last attempt: where it is on the run clock (``start``,
    ``user_end``, ``end``, ``first_audio_plays_at``) and, for its latencies, when things
    happened on the wall clock (``wall_user_end``, ``first_output``, ``first_text``,
    ``first_audio``, ``stages``: see the module docstring)."""

    start: float
    user_end: float | None = None
    end: float | None = None
    first_audio_plays_at: float | None = None
    """Where the first agent audio starts playing on the recording (audio runs)."""
    virtual: bool = False
    """Whether the turn ran on a virtual clock (its stamps carry ``wall``)."""
    wall_user_end: float | None = None
    first_output: float | None = None
    first_text: float | None = None
    first_audio: float | None = None
    stages: dict[str, float] = field(default_factory=dict)
    stage_starts: dict[str, float] = field(default_factory=dict)

    def since_user_end(self, wall: float | None) -> float | None:
        """Wall time ``wall`` relative to the end of the user's turn."""
        if wall is None or self.wall_user_end is None:
            return None
        return round(wall - self.wall_user_end, 6)

    @property
    def processing(self) -> float | None:
        """Virtual-clock turns: wall seconds from the user's end to the first agent audio, the
        time the host took that virtual time skipped (0 for audio that came before the user's
        end); None on a real clock, where the recording already shows it."""
        if not self.virtual:
            return None
        latency = self.since_user_end(self.first_audio)
        return None if latency is None else max(0.0, latency)


def turn_windows(events: list[TimelineEvent]) -> dict[str, TurnWindow]:
    """Each turn's window and first stamps, from its last attempt."""
    windows: dict[str, TurnWindow] = {}
    for e in events:
        if e.turn is None:
            continue
        wall = e.t if e.wall is None else e.wall
        if isinstance(e, TurnStarted):
            windows[e.turn] = TurnWindow(start=e.t, virtual=e.wall is not None)
            continue
        w = windows.get(e.turn)
        if w is None:
            continue
        if isinstance(e, UserTurnEnded):
            w.user_end = e.t
            w.wall_user_end = wall
        elif isinstance(e, TurnEnded):
            w.end = e.t
        elif isinstance(e, StageMarkRecorded):
            if e.edge == "start":
                w.stage_starts[e.stage] = wall
            elif e.stage in w.stage_starts:
                w.stages[e.stage] = round(wall - w.stage_starts.pop(e.stage), 6)
        elif isinstance(e, StageTimingRecorded):  # recorded before stage marks
            w.stages[e.stage] = e.seconds
        if e.source != "target" or isinstance(e, _NOT_AGENT_OUTPUT):
            continue
        if w.first_output is None:
            w.first_output = wall
        if isinstance(e, TextRecorded) and w.first_text is None:
            w.first_text = wall
        elif isinstance(e, AudioRecorded) and w.first_audio is None:
            w.first_audio = wall
            w.first_audio_plays_at = e.plays_at
    return windows
