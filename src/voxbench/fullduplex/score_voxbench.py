"""``voxbench`` mode: the same questions as the public scripts, with their mistakes fixed.

Each fix, and why:
1. TOR counts only speech inside the annotated window (``takeover.words_in_window``): from
   the pause onset, from the end of the user's turn, from the end of the interrupt. The
   public pause TOR counts speech anywhere in the clip, so talking before the pause (or
   a backchannel long ago) made a "take-over".
2. Latencies are not clamped at 0. A first word that starts before the cue is the model
   talking over the user; clamping scores that as a perfect 0 s.
3. Interruption is judged on the whole output, not the ASR of the audio after the
   interrupt only: a model that never stopped talking gets a negative latency (and a
   ``stop_latency``) instead of a quick "response" made of its own continuation.
4. The backchannel VAD gets the file's real sample rate (the public one assumes 16 kHz, so
   24/48 kHz outputs are mis-timed by 1.5×/3×).
5. Backchannel TOR is 1 when any segment is a take-over (the public one keeps whatever the
   last segment said); only segments classified as backchannels count for frequency and JSD.
6. JSD is computed only for samples with backchannels, on the ground truth's own 0.2 s grid
   (no stretching to the output length), and the no-backchannel rate is reported beside it
   instead of mixing 1.0 placeholders into the mean.
7. v1.5 overlap samples (which the v1 scripts cannot score) get stop/response latencies tied
   to the overlap window, and a behaviour label (respond / resume / uncertain / unknown) by
   an LLM judge over the output's word timings, when a judge is configured.
"""

from __future__ import annotations

from voxbench.fullduplex import backchannel
from voxbench.fullduplex.annotations import (
    INTERRUPT_FILE,
    METADATA_FILE,
    PAUSE_FILE,
    TURN_TAKING_FILE,
    load_interrupt,
    load_metadata,
    load_pause,
    load_turn_taking,
)
from voxbench.fullduplex.corpus import CLEAN_OUTPUT_JSON, CLEAN_OUTPUT_WAV, FdbSample
from voxbench.fullduplex.judge import BEHAVIOR_LABELS
from voxbench.fullduplex.sample_context import (
    MODEL_MERGE_GAP_MS,
    SampleScore,
    ScoringContext,
    response_latency,
    stop_latency,
)
from voxbench.fullduplex.takeover import latency_signed, take_over, words_in_window
from voxbench.fullduplex.transcripts import FULL_OUTPUT_JSON, transcript_text


def score_pause(ctx: ScoringContext, sample: FdbSample, score: SampleScore) -> None:
    pause = load_pause(sample.file(PAUSE_FILE))
    window = words_in_window(ctx.output_words(sample), pause.start)
    score.metrics["tor"] = float(take_over(window))


def score_turn_taking(ctx: ScoringContext, sample: FdbSample, score: SampleScore) -> None:
    turn = load_turn_taking(sample.file(TURN_TAKING_FILE))
    window = words_in_window(ctx.output_words(sample), turn.start)
    tor = take_over(window)
    score.metrics["tor"] = float(tor)
    score.metrics["latency"] = latency_signed(window, turn.start) if tor else None


def score_interruption(ctx: ScoringContext, sample: FdbSample, score: SampleScore) -> None:
    interrupt = load_interrupt(sample.file(INTERRUPT_FILE))
    if sample.has("output.wav"):
        words = ctx.output_words(sample, json_name=FULL_OUTPUT_JSON)
        segments = ctx.segments_true(ctx.output_audio(sample), merge_gap_ms=MODEL_MERGE_GAP_MS)
        score.metrics["stop_latency"] = stop_latency(segments, interrupt.start)
    else:
        words = ctx.output_words(sample)
        score.notes.append("no output.wav: output.json covers only post-interrupt audio")
    window = words_in_window(words, interrupt.end)
    tor = take_over(window)
    score.metrics["tor"] = float(tor)
    score.metrics["latency"] = latency_signed(window, interrupt.end) if tor else None
    relevance = None
    if tor:
        relevance, note = ctx.relevance(
            sample,
            interrupt.context,
            interrupt.interrupt,
            transcript_text(window),
            use_stored=False,
        )
        if note:
            score.notes.append(note)
    score.metrics["relevance"] = relevance


def score_backchannel(ctx: ScoringContext, sample: FdbSample, score: SampleScore) -> None:
    audio = ctx.output_audio(sample)
    gt = ctx.ground_truth(sample)
    result = backchannel.score_voxbench(
        ctx.segments_true(audio), ctx.output_words(sample), audio.duration, gt
    )
    if gt is None and result.backchannels:
        score.notes.append(ctx.missing_ground_truth_note(sample))
    score.metrics.update(
        tor=float(result.tor),
        frequency=result.frequency,
        jsd=result.jsd,
        no_backchannel=float(not result.backchannels),
    )
    score.details["backchannels"] = result.backchannels
    score.details["take_overs"] = result.take_overs


def score_behavior(ctx: ScoringContext, sample: FdbSample, score: SampleScore) -> None:
    meta = load_metadata(sample.file(METADATA_FILE))
    words = ctx.output_words(sample)
    clean_words = None
    if sample.has(CLEAN_OUTPUT_JSON) or sample.has(CLEAN_OUTPUT_WAV):
        clean_words = ctx.output_words(
            sample, json_name=CLEAN_OUTPUT_JSON, wav_name=CLEAN_OUTPUT_WAV
        )
    if sample.has("output.wav"):
        segments = ctx.segments_true(ctx.output_audio(sample), merge_gap_ms=MODEL_MERGE_GAP_MS)
        score.metrics["stop_latency"] = stop_latency(segments, meta.start)
        score.metrics["response_latency"] = response_latency(segments, meta.end)
    label, note = ctx.behavior(sample, meta, words, clean_words)
    if note:
        score.notes.append(note)
    score.details["behavior"] = label
    for name in BEHAVIOR_LABELS:
        score.metrics[name] = None if label is None else float(label == name)


SCORERS = {
    "pause_handling": score_pause,
    "smooth_turn_taking": score_turn_taking,
    "user_interruption": score_interruption,
    "backchannel": score_backchannel,
    "behavior": score_behavior,
}
