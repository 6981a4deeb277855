"""Latency from the timeline alone: what the runner stamped, turn by turn.

Each turn's last attempt (a retried or resumed turn starts again at its last
``turn_started``) gives its window and its latencies, all relative to the moment the user
finished (``user_turn_ended``: the text was sent, or the last audio sample was streamed):

- ``ttfb``: the first target event that is agent output of any kind (text, audio, a tool call,
  an error, the end of the response) — not the target's own transcript of the user, usage,
  VAD or stage reports;
- ``ttft``: the first assistant text (or provider transcript of the agent's speech);
- ``first_audio_latency``: the first agent audio chunk received;
- ``stages``: durations reported by composite targets (a cascade's stt, llm_first_token,
  tts_first_audio).

Text runs get these too; audio runs add what the recording shows (``analysis.turn_taking``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voxbench.core.timeline import (
    AudioRecorded,
    SpeechStartedRecorded,
    SpeechStoppedRecorded,
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
    StageTimingRecorded,
)


@dataclass
class TurnWindow:
    """Stamps of one turn's last attempt (run-clock seconds)."""

    start: float
    user_end: float | None = None
    end: float | None = None
    first_output: float | None = None
    first_text: float | None = None
    first_audio: float | None = None
    first_audio_plays_at: float | None = None
    """Where the first agent audio starts playing on the recording (audio runs)."""
    stages: dict[str, float] = field(default_factory=dict)

    def since_user_end(self, t: float | None) -> float | None:
        """``t`` relative to the end of the user's turn."""
        if t is None or self.user_end is None:
            return None
        return round(t - self.user_end, 6)


def turn_windows(events: list[TimelineEvent]) -> dict[str, TurnWindow]:
    """Each turn's window and first stamps, from its last attempt."""
    windows: dict[str, TurnWindow] = {}
    for e in events:
        if e.turn is None:
            continue
        if isinstance(e, TurnStarted):
            windows[e.turn] = TurnWindow(start=e.t)
            continue
        w = windows.get(e.turn)
        if w is None:
            continue
        if isinstance(e, UserTurnEnded):
            w.user_end = e.t
        elif isinstance(e, TurnEnded):
            w.end = e.t
        elif isinstance(e, StageTimingRecorded):
            w.stages[e.stage] = e.seconds
        if e.source != "target" or isinstance(e, _NOT_AGENT_OUTPUT):
            continue
        if w.first_output is None:
            w.first_output = e.t
        if isinstance(e, TextRecorded) and w.first_text is None:
            w.first_text = e.t
        elif isinstance(e, AudioRecorded) and w.first_audio is None:
            w.first_audio = e.t
            w.first_audio_plays_at = e.plays_at
    return windows
