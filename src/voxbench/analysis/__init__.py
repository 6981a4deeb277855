"""Measure a run once: latency from its timeline, turn-taking from its recording.

``analyse_run`` reads ``events.jsonl``, ``transcript.jsonl`` and, in audio runs,
``conversation.wav`` (and ``tags.wav``) and returns a ``RunAnalysis``; ``load_or_analyse``
reuses ``analysis.json`` while the files it measured are unchanged. Everything that reports a
latency or judges turn-taking reads this one measurement.

Which clock the run was on (``RunAnalysis.clock``, from ``recording_started``) decides what a
latency is read from. On the real clock, the timeline's times and the recording are real
time. On a virtual clock (in-process targets in audio runs) virtual time stands still while
the target computes, so each answer starts on the recording the moment the user's turn
ends, the same on any host; what the host took is the latency, measured on wall time:

- ``ttfb``, ``ttft``, ``first_audio_latency`` and stage durations come from the events'
  ``wall`` stamps (``analysis.timeline``);
- ``pipeline_ttfa`` and ``voice_to_voice`` are measured on the recording, plus the turn's
  ``processing`` (wall first audio − wall user end): in real time the answer would have
  started that much later;
- turn-taking ``issues`` (and so the ``turn_taking`` verdicts) are judged on the recording as
  it is, never on wall time: they are the same idle and under load.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from voxbench.analysis.timeline import TurnWindow, turn_windows
from voxbench.core.errors import RunError
from voxbench.core.measures import (
    ANALYSIS_SCHEMA,
    LATENCY_METRICS,
    LatencySummary,
    RunAnalysis,
    TurnMeasures,
)
from voxbench.core.records import TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.core.timeline import RecordingStarted, TimelineEvent

PERCENTILES = (50, 90, 95, 99)


def summarise(values: list[float | None]) -> LatencySummary:
    """Count, mean and p50/p90/p95/p99 of the measured values (values ≤ 0 included)."""
    data = np.asarray([v for v in values if v is not None], dtype=float)
    if data.size == 0:
        return LatencySummary()
    points = {f"p{p}": round(float(np.percentile(data, p)), 4) for p in PERCENTILES}
    return LatencySummary(
        count=int(data.size),
        mean=round(float(data.mean()), 4),
        min=round(float(data.min()), 4),
        max=round(float(data.max()), 4),
        **points,
    )


def _inputs(run: RunDirectory) -> dict[str, int]:
    files = (run.events_file, run.transcript_file, run.recording_file, run.tags_file)
    return {f.name: f.stat().st_size for f in files if f.is_file()}


def analyse_run(run_dir: str | Path | RunDirectory) -> RunAnalysis:
    """Measure the run at ``run_dir`` (nothing is written)."""
    run = run_dir if isinstance(run_dir, RunDirectory) else RunDirectory.open_existing(run_dir)
    inputs = _inputs(run)
    events = run.events()
    records = run.turns()
    windows = turn_windows(events)
    measures = []
    for record in records:
        w = windows.get(record.turn)
        if record.status == "ended_early" or w is None:
            measures.append(TurnMeasures(turn=record.turn, scored=False))
            continue
        measures.append(
            TurnMeasures(
                turn=record.turn,
                ttfb=w.since_user_end(w.first_output),
                ttft=w.since_user_end(w.first_text),
                first_audio_latency=w.since_user_end(w.first_audio),
                stages=dict(w.stages),
                processing=w.processing,
            )
        )
    started = next((e for e in events if isinstance(e, RecordingStarted)), None)
    analysis = RunAnalysis(
        mode="audio" if run.info().mode == "audio" else "text",
        clock=started.clock if started is not None else "real",
        turns=measures,
        inputs=inputs,
    )
    if run.has_recording:
        analysis = _with_turn_taking(run, analysis, windows, records, events)
    latency = {
        name: summarise([getattr(m, name) for m in analysis.turns if m.scored])
        for name in LATENCY_METRICS
    }
    analysis.latency = {k: v for k, v in latency.items() if v.count}
    return analysis


def _with_turn_taking(
    run: RunDirectory,
    analysis: RunAnalysis,
    windows: dict[str, TurnWindow],
    records: list[TurnRecord],
    events: list[TimelineEvent],
) -> RunAnalysis:
    # The audio stack (VAD, wav I/O, resampling) loads only for audio runs.
    from voxbench.analysis.turn_taking import measure_turn_taking
    from voxbench.audio.tags import find_tags
    from voxbench.audio.wav import read_wav

    recording = read_wav(run.recording_file)
    if recording.channels != 2:
        raise RunError(
            f"{run.recording_file}: expected 2 channels (user, agent), found {recording.channels}"
        )
    origin = next((e.origin for e in events if isinstance(e, RecordingStarted)), 0.0)
    warnings = _cut_short(run, recording.duration, origin, analysis.turns, windows)
    if run.tags_file.is_file():
        tags = find_tags(read_wav(run.tags_file))
    elif run.info().config.get("tags") == "mix":
        tags = find_tags(recording.channel(1))
    else:
        tags = None
    findings = measure_turn_taking(analysis.turns, windows, records, recording, origin, tags)
    return analysis.model_copy(
        update={
            "mode": "audio",
            "turn_taking": True,
            "unprompted": findings.unprompted,
            "user_segments": findings.user_segments,
            "agent_segments": findings.agent_segments,
            "warnings": analysis.warnings + warnings,
        }
    )


RECORDING_SLACK = 0.05
"""Seconds a turn may end after the last recorded frame (the recording is flushed to each
turn's end, rounded to a frame)."""


def _cut_short(
    run: RunDirectory,
    duration: float,
    origin: float,
    measures: list[TurnMeasures],
    windows: dict[str, TurnWindow],
) -> list[str]:
    """Mark the turns a cut-short recording does not cover unmeasurable; the warning, if any.

    A recording truncated after the run (a full disk, an interrupted copy) would otherwise
    make every later turn look like the agent never answered (``missing_response``).
    """
    from voxbench.audio.riff import is_riff_wave, parse_wave_layout

    recorded_until = origin + duration
    cut = []
    for m in measures:
        w = windows.get(m.turn)
        if not m.scored or w is None:
            continue
        end = w.end if w.end is not None else w.start
        if end > recorded_until + RECORDING_SLACK:
            m.scored = False
            m.issues.append(
                f"recording_ends_early (the recording stops at {recorded_until:.2f} s, "
                f"this turn runs to {end:.2f} s)"
            )
            cut.append(m.turn)
    if not cut:
        return []
    file = run.recording_file
    claim = ""
    with file.open("rb") as f:
        riff = is_riff_wave(f.read(12))
    if riff:
        layout = parse_wave_layout(file)
        declared = layout.declared_frames
        if declared is not None and declared > layout.frames:
            claim = (
                f"; its header says {declared / layout.sample_rate:.2f} s, the file holds "
                f"{layout.frames / layout.sample_rate:.2f} s"
            )
    return [
        f"{file} ends early: {duration:.2f} s of audio, but the timeline runs to "
        f"{max(windows[t].end or windows[t].start for t in cut) - origin:.2f} s{claim} "
        f"(cut short by a full disk or an interrupted copy?). Turns {', '.join(cut)} are not "
        "measured; re-run them for turn-taking."
    ]


def load_or_analyse(run_dir: str | Path | RunDirectory, *, write: bool = False) -> RunAnalysis:
    """``analysis.json`` when it measured the run's current files, else a fresh measurement
    (written back when ``write``: the caller must hold the run's writer lock)."""
    run = run_dir if isinstance(run_dir, RunDirectory) else RunDirectory.open_existing(run_dir)
    try:
        saved = run.read_json(run.analysis_file)
        if saved is not None and saved.get("schema_version") == ANALYSIS_SCHEMA:
            analysis = RunAnalysis.model_validate(saved)
            if analysis.inputs == _inputs(run):
                return analysis
    except (RunError, ValueError):
        pass  # unreadable or from another version: measure again
    analysis = analyse_run(run)
    if write:
        run.write_json(run.analysis_file, analysis.model_dump(mode="json"))
    return analysis


__all__ = ["analyse_run", "load_or_analyse", "summarise"]
