"""``fdb-v1`` mode: the public v1 scoring scripts, reproduced rule for rule.

Kept on purpose, so numbers compare with published tables: pause TOR looks at the whole
output (``pause.json`` is never read); latencies are clamped at 0 and averaged over TOR = 1
samples; interruption TOR/latency/relevance use only the words after the interrupt ends;
the backchannel VAD is told every file is 16 kHz, the last classified segment sets the
sample's TOR, every segment of at most 3 s is listed as a backchannel, and a sample with
none gets JSD 1.0. v1.5 overlap samples have no v1 metric and are not scored here.
"""

from __future__ import annotations

from voxbench.fullduplex import backchannel
from voxbench.fullduplex.annotations import (
    INTERRUPT_FILE,
    TURN_TAKING_FILE,
    load_interrupt,
    load_turn_taking,
)
from voxbench.fullduplex.corpus import FdbSample
from voxbench.fullduplex.sample_context import SampleScore, ScoringContext
from voxbench.fullduplex.takeover import latency_fdb_v1, take_over
from voxbench.fullduplex.transcripts import transcript_text


def score_pause(ctx: ScoringContext, sample: FdbSample, score: SampleScore) -> None:
    score.metrics["tor"] = float(take_over(ctx.output_words(sample)))


def score_turn_taking(ctx: ScoringContext, sample: FdbSample, score: SampleScore) -> None:
    turn = load_turn_taking(sample.file(TURN_TAKING_FILE))
    words = ctx.output_words(sample)
    tor = take_over(words)
    score.metrics["tor"] = float(tor)
    score.metrics["latency"] = latency_fdb_v1(words, turn.start) if tor else None


def score_interruption(ctx: ScoringContext, sample: FdbSample, score: SampleScore) -> None:
    interrupt = load_interrupt(sample.file(INTERRUPT_FILE))
    # The public ASR step transcribes only what follows the interrupt.
    words = ctx.output_words(sample, crop_from=interrupt.end)
    tor = take_over(words)
    score.metrics["tor"] = float(tor)
    score.metrics["latency"] = latency_fdb_v1(words, interrupt.end) if tor else None
    relevance = None
    if tor:
        relevance, note = ctx.relevance(
            sample, interrupt.context, interrupt.interrupt, transcript_text(words), use_stored=True
        )
        if note:
            score.notes.append(note)
    score.metrics["relevance"] = relevance


def score_backchannel(ctx: ScoringContext, sample: FdbSample, score: SampleScore) -> None:
    audio = ctx.output_audio(sample)
    words = ctx.output_words(sample)
    gt = ctx.ground_truth(sample)
    result = backchannel.score_fdb_v1(
        ctx.segments_public(audio, ctx.vad_model), words, audio.duration, gt
    )
    jsd = result.jsd
    if gt is None:
        # The public placeholder (1.0 without any backchannel) compares with a ground truth
        # that is not there: say so instead of printing a JSD.
        jsd = None
        score.notes.append(ctx.missing_ground_truth_note(sample))
    score.metrics.update(tor=float(result.tor), frequency=result.frequency, jsd=jsd)
    score.details["backchannels"] = result.backchannels


SCORERS = {
    "pause_handling": score_pause,
    "smooth_turn_taking": score_turn_taking,
    "user_interruption": score_interruption,
    "backchannel": score_backchannel,
}
