"""Real-time factor of the local speech stack: Whisper tiny.en ASR (and eSpeak TTS).

Speaks every smoke-benchmark turn with eSpeak NG, transcribes it with
``local/whisper-tiny.en`` (faster-whisper, int8, CPU) and prints the model load time, the
real-time factor (processing seconds / audio seconds; below 1 is faster than real time)
and the normalised WER. The first transcription is a warm-up and is not timed.

    python bench/audio_rtf.py [--repeat 2] [--threads 0]
"""

from __future__ import annotations

import argparse
import os
import time

from voxbench.audio.wer import word_error_rate
from voxbench.benchmarks.loader import load_benchmark
from voxbench.providers.speech import get_asr, get_tts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="passes over the turns")
    parser.add_argument("--threads", type=int, default=0, help="CTranslate2 CPU threads (0: auto)")
    args = parser.parse_args()

    turns = load_benchmark("smoke").turns
    tts = get_tts("local/espeak")
    started = time.perf_counter()
    clips = [tts.synthesize(t.text) for t in turns]
    tts_seconds = time.perf_counter() - started
    audio_seconds = sum(c.duration for c in clips)

    started = time.perf_counter()
    asr = get_asr("local/whisper-tiny.en", cpu_threads=args.threads)
    asr.transcribe(clips[0])  # loads the model and warms it up
    load_seconds = time.perf_counter() - started

    timings, hypotheses = [], []
    for _ in range(args.repeat):
        started = time.perf_counter()
        hypotheses = [asr.transcribe(c).text for c in clips]
        timings.append(time.perf_counter() - started)
    best = min(timings)
    wer = word_error_rate([t.text for t in turns], hypotheses)
    print(f"machine: {os.cpu_count()} CPUs")
    print(f"audio: {len(clips)} turns, {audio_seconds:.1f} s of eSpeak speech")
    print(f"eSpeak TTS: {tts_seconds * 1000:.0f} ms, RTF {tts_seconds / audio_seconds:.4f}")
    print(f"Whisper tiny.en load + first call: {load_seconds:.2f} s")
    print(
        f"Whisper tiny.en ASR: best {best:.2f} s of {args.repeat} passes, "
        f"RTF {best / audio_seconds:.3f} ({audio_seconds / best:.1f}x real time)"
    )
    print(f"WER (normalised): {wer:.1%}")


if __name__ == "__main__":
    main()
