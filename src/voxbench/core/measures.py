"""``analysis.json``: latency and turn-taking of a run, measured once.

``voxbench.analysis`` measures a run from its timeline (``events.jsonl``) and, in audio runs,
its recording (``conversation.wav``). Everything downstream — the scorecard's latency
percentiles, the ``turn_taking`` judgments, ``voxbench analyze``, reports — reads this model
instead of measuring again. All times are seconds; a value is None when it could not be
measured (a turn with no agent audio has no voice-to-voice latency).

A run on a virtual clock (``RunAnalysis.clock``: in-process targets in audio runs) places
every answer on its recording the moment the user's turn ends, whatever the host's speed, so
its latencies are the host's processing time, measured on wall time: the timeline latencies
from the events' wall stamps, and ``pipeline_ttfa`` / ``voice_to_voice`` as measured on the
recording plus the turn's ``processing`` (in real time the answer would have started that
much later). Turn-taking ``issues`` are judged on the recording as it is, so they are the
same on a fast, slow or busy host.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from voxbench.core.records import LatencySummary, Record

ANALYSIS_SCHEMA = 3
"""2: ``warnings``, and turns past the end of a cut recording are not scored. 3: ``clock``
and ``processing``; a virtual-clock run's latencies are wall time."""

LATENCY_METRICS = (
    "ttfb",
    "ttft",
    "first_audio_latency",
    "pipeline_ttfa",
    "voice_to_voice",
    "silent_pad_vad",
    "silent_pad_rms",
)
"""The per-turn latencies summarised into percentiles, in display order."""


class TurnMeasures(Record):
    """What was measured on one turn."""

    turn: str
    scored: bool = True
    """False for turns that never ran (the conversation had ended), have no timeline, or run
    past the end of a recording cut short (``issues`` then says ``recording_ends_early``)."""
    ttfb: float | None = None
    """First target event of any kind after the user finished (timeline; wall stamps on a
    virtual clock)."""
    ttft: float | None = None
    """First assistant text or provider transcript after the user finished (timeline; wall
    stamps on a virtual clock)."""
    first_audio_latency: float | None = None
    """First agent audio chunk received after the user finished (timeline; wall stamps on a
    virtual clock)."""
    stages: dict[str, float] = Field(default_factory=dict)
    """Per-stage durations of composite targets (cascade: stt, llm_first_token,
    tts_first_audio; wall stamps on a virtual clock)."""
    processing: float | None = None
    """Virtual clock only: wall seconds the host took from the user's end to the first agent
    audio (virtual time skipped them: the answer starts at the user's end on the recording);
    added to ``pipeline_ttfa`` and ``voice_to_voice``. None on a real clock."""
    user_speech_start: float | None = None
    user_speech_end: float | None = None
    first_agent_audio: float | None = None
    """Where the first agent audio starts playing on the recording (run clock)."""
    agent_speech_start: float | None = None
    agent_speech_end: float | None = None
    pipeline_ttfa: float | None = None
    """First agent audio on the recording − user speech end (+ ``processing`` on a virtual
    clock)."""
    voice_to_voice: float | None = None
    """Agent speech onset − user speech end (VAD; + ``processing`` on a virtual clock);
    negative when the agent talks over the user."""
    silent_pad_vad: float | None = None
    silent_pad_rms: float | None = None
    tag_alignment: float | None = None
    overlaps: list[tuple[float, float]] = Field(default_factory=list)
    issues: list[str] = Field(default_factory=list)
    """Turn-taking problems found on the recording (audio runs): missing_response,
    negative_latency, overlap, high_silent_pad, alignment_drift, missing_tag."""


class RunAnalysis(Record):
    """The measurement of a whole run (``analysis.json``)."""

    schema_version: int = ANALYSIS_SCHEMA
    mode: Literal["text", "audio"]
    clock: Literal["real", "virtual"] = "real"
    """The run's clock (``recording_started``): on ``virtual`` the latencies are wall time
    (see the module docstring)."""
    turn_taking: bool = False
    """Whether turn-taking was measured (an audio run with its recording)."""
    turns: list[TurnMeasures]
    unprompted: list[tuple[float, float]] = Field(default_factory=list)
    """Agent speech outside every turn's response window (run clock)."""
    user_segments: int | None = None
    agent_segments: int | None = None
    latency: dict[str, LatencySummary] = Field(default_factory=dict)
    """Percentiles per metric of ``LATENCY_METRICS`` over scored turns (metrics with data)."""
    warnings: list[str] = Field(default_factory=list)
    """What makes the measurement less than complete (a recording that ends before the
    timeline does), in words for the user."""
    inputs: dict[str, int] = Field(default_factory=dict)
    """Sizes of the files measured (``events.jsonl``, ``conversation.wav``, ...): a changed
    size means the analysis is stale."""

    def turn(self, turn_id: str) -> TurnMeasures | None:
        """The measures of turn ``turn_id``."""
        return next((t for t in self.turns if t.turn == turn_id), None)
