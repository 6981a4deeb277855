"""The run's analysis (latency and turn-taking, measured once) as evaluation reads it.

Interim: until ``voxbench.analysis.load_or_analyse`` lands, this builds the ``RunAnalysis``
from the runner's per-turn stamps and, in audio runs, ``analysis.turn_taking``'s
measurement of the recording.
"""

from __future__ import annotations

from voxbench.core.measures import LATENCY_METRICS, LatencySummary, RunAnalysis, TurnMeasures
from voxbench.core.rundir import RunDirectory
from voxbench.scoring.stats import percentiles

_MEASURED_ON_THE_RECORDING = (
    "user_speech_start",
    "user_speech_end",
    "first_agent_audio",
    "agent_speech_start",
    "agent_speech_end",
    "pipeline_ttfa",
    "voice_to_voice",
    "silent_pad_vad",
    "silent_pad_rms",
    "tag_alignment",
    "overlaps",
    "issues",
    "scored",
)


def _summary(values: list[float | None]) -> LatencySummary:
    found = percentiles(values)
    return LatencySummary(**{k: v for k, v in found.items() if k in LatencySummary.model_fields})


def analyse(run_dir: RunDirectory) -> RunAnalysis:
    """Measure the run (the caller holds its writer lock)."""
    records = run_dir.turns()
    turns = [
        TurnMeasures(
            turn=r.turn,
            scored=r.status != "ended_early",
            ttfb=r.timings.ttfb,
            ttft=r.timings.ttft,
            first_audio_latency=r.timings.first_audio_latency,
            stages=dict(r.timings.stages),
        )
        for r in records
    ]
    analysis = RunAnalysis(mode=run_dir.info().mode, turns=turns)
    if run_dir.has_recording:
        from voxbench.analysis.turn_taking import analyse_recorded_run  # loads the VAD model

        report = analyse_recorded_run(run_dir.path)
        by_turn = {t.turn: t for t in report.turns}
        for m in turns:
            timing = by_turn.get(m.turn)
            if timing is not None:
                for name in _MEASURED_ON_THE_RECORDING:
                    setattr(m, name, getattr(timing, name))
        analysis = analysis.model_copy(
            update={
                "mode": "audio",
                "turn_taking": True,
                "unprompted": report.unprompted,
                "user_segments": report.user_segments,
                "agent_segments": report.agent_segments,
            }
        )
    latency = {
        name: _summary([getattr(m, name) for m in analysis.turns if m.scored])
        for name in LATENCY_METRICS
    }
    analysis.latency = {k: v for k, v in latency.items() if v.count}
    return analysis
