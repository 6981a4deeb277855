"""Throughput of Silero VAD on 10 minutes of speech.

Builds ten minutes of eSpeak speech with silences between utterances at 24 kHz (the
rate of synthesized benchmark audio, so resampling to 16 kHz is counted), then times
``SileroVAD.probabilities`` (the model alone: numpy front, onnxruntime LSTM on one thread),
``SileroVAD.segments`` (model, hysteresis and millisecond boundary refinement) and two
channels' probabilities at once in two threads (as the turn-taking analysis runs them).
Prints × real time, beside anchors timed in the same run: the whole ONNX graph in onnxruntime
with 512 windows a call (the former default) and one window a call (the plain per-frame
path), each with the largest difference of its probabilities from the per-frame path's.

    python bench/vad_throughput.py [--minutes 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from voxbench.audio.vad import BATCH_WINDOWS, VAD_RATE, SileroVAD, _model
from voxbench.audio.wav import Audio, concatenate
from voxbench.providers.speech import get_tts

SENTENCES = (
    "Hi! What time do the doors open tomorrow, and where do I check in?",
    "Yes.",
    "Please register me for the streaming ASR talk.",
    "My sister is a student too. How much would two student tickets cost?",
    "So which talk am I still registered for, and which room is it in?",
)


def ten_minutes(minutes: float, rate: int = 24_000) -> Audio:
    tts = get_tts("local/espeak")
    clips = [tts.synthesize(s).resampled(rate) for s in SENTENCES]
    rng = np.random.default_rng(0)
    parts: list[Audio] = []
    total = 0.0
    while total < minutes * 60:
        clip = clips[len(parts) // 2 % len(clips)]
        gap = Audio.silence(float(rng.uniform(0.3, 2.0)), rate)
        parts += [clip, gap]
        total += clip.duration + gap.duration
    return concatenate(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    audio = ten_minutes(args.minutes)
    vad = SileroVAD()
    vad.probabilities(Audio.silence(1.0, 16_000))  # load the model

    def best_of(fn) -> float:
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            fn()
            times.append(time.perf_counter() - started)
        return min(times)

    model_only = best_of(lambda: vad.probabilities(audio))
    full = best_of(lambda: vad.segments(audio))
    with ThreadPoolExecutor(2) as pool:  # the turn-taking analysis: two channels at once
        both = best_of(lambda: list(pool.map(vad.probabilities, [audio, audio])))
    segments = vad.segments(audio)
    default = vad.probabilities(audio)[0]
    signal = audio.mono().resampled(VAD_RATE).samples
    model = _model()
    reference = model.probabilities(signal, batch=1, whole_graph=True)
    print(
        f"audio: {audio.duration / 60:.1f} min at {audio.sample_rate} Hz, {len(segments)} segments"
    )
    print(
        f"Silero probabilities: {model_only:.2f} s, {audio.duration / model_only:.0f}x real time "
        f"(max |Δp| from the per-frame whole graph {abs(default - reference).max():.1e})"
    )
    print(f"segments (+ refinement): {full:.2f} s, {audio.duration / full:.0f}x real time")
    print(
        f"two channels at once (2 threads): {both:.2f} s, "
        f"{2 * audio.duration / both:.0f}x real time in all"
    )
    anchors = (
        (f"whole graph, {BATCH_WINDOWS} windows a call", BATCH_WINDOWS),
        ("whole graph, per frame (1 window a call)", 1),
    )
    for name, batch in anchors:
        seconds = best_of(  # resampling counted, as in the default figure
            lambda batch=batch: model.probabilities(
                audio.mono().resampled(VAD_RATE).samples, batch=batch, whole_graph=True
            )
        )
        diff = float(
            abs(model.probabilities(signal, batch=batch, whole_graph=True) - reference).max()
        )
        print(
            f"anchor {name}: {seconds:.2f} s, {audio.duration / seconds:.0f}x real time "
            f"(the default path {seconds / model_only:.2f}x faster; max |Δp| from per frame "
            f"{diff:.1e})"
        )


if __name__ == "__main__":
    main()
