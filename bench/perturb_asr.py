"""How local Whisper tiny.en's WER on eSpeak speech moves under perturbations, and what each
perturbation costs.

The user's side of an offline audio run is eSpeak NG speech heard through local Whisper. This
prints the normalized WER over the first N turns of ``conference`` clean, under pink noise at
20/10/5 dB SNR (on active speech), babble, G.711 μ-law (with ``band@50-3900Hz`` beside it: how
much of μ-law's damage is the 8 kHz band alone), and a few telephone/network conditions; then
each perturbation's speed in audio seconds per second on this host. Figures only, no
thresholds. Every condition uses seed 0 and the turn id (``Perturbation.apply``), so a rerun
hears the same audio.

Usage: python bench/perturb_asr.py [--turns N] [--specs SPEC ...]
"""

from __future__ import annotations

import argparse
import time

from voxbench.audio.perturb import OPUS_ENCODER, codec_available, parse_perturbations
from voxbench.audio.wav import Audio, concatenate, read_wav
from voxbench.audio.wer import word_error_rate
from voxbench.benchmarks.audio import ensure_benchmark_audio
from voxbench.benchmarks.loader import load_benchmark
from voxbench.providers.speech import get_asr

LADDER = [
    "none",
    "noise:pink@20dB",
    "noise:pink@10dB",
    "noise:pink@5dB",
    "noise:babble@10dB",
    "band@50-3900Hz",
    "codec:mulaw",
    "band:telephone+codec:mulaw+noise:pink@10dB",
    "loss:5%",
    "loss:5%,burst=3,conceal=repeat",
]
COSTED = [
    "noise:white@10dB",
    "noise:pink@10dB",
    "gain@-6dB",
    "clip@-12dB",
    "band:telephone",
    "codec:mulaw",
    "codec:alaw",
    "codec:opus@12k",
    "loss:5%",
    "loss:5%,burst=3,conceal=repeat",
    "reverb@0.5s",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40, help="first N turns of conference")
    parser.add_argument("--specs", nargs="*", default=None, help="perturbation specs to score")
    args = parser.parse_args()
    specs = args.specs or LADDER + (["codec:opus@12k"] if codec_available(OPUS_ENCODER) else [])

    bench = load_benchmark("conference")
    turns = bench.turns[: args.turns]
    files = ensure_benchmark_audio(bench, tts="local/espeak")
    clips = {t.id: read_wav(files[t.id]).mono().resampled(16_000) for t in turns}
    seconds = sum(c.duration for c in clips.values())
    asr = get_asr("local/whisper-tiny.en")
    refs = [t.text for t in turns]
    print(f"conference, first {len(turns)} turns, {seconds:.1f} s of eSpeak speech at 16 kHz")
    print(f"{'perturbation':<46} {'WER':>7} {'ASR s':>7}")
    for spec in specs:
        chain = parse_perturbations(spec)
        began = time.perf_counter()
        hyps = [asr.transcribe(chain.apply(clips[t.id], 0, t.id)).text for t in turns]
        print(
            f"{str(chain):<46} {word_error_rate(refs, hyps):>7.2%} "
            f"{time.perf_counter() - began:>7.1f}"
        )

    # Cost: each perturbation over all the clips joined (one long signal, as a run's turns).
    joined: Audio = concatenate(list(clips.values()))
    print(f"\ncost on {joined.duration:.1f} s at 16 kHz (audio seconds per second, best of 3)")
    for spec in COSTED:
        if "opus" in spec and not codec_available(OPUS_ENCODER):
            continue
        chain = parse_perturbations(spec)
        best = min(_timed(chain, joined) for _ in range(3))
        print(f"{spec:<46} {joined.duration / best:>9.0f}x real time")


def _timed(chain, audio: Audio) -> float:  # noqa: ANN001
    began = time.perf_counter()
    chain.apply(audio, 0, "bench")
    return time.perf_counter() - began


if __name__ == "__main__":
    main()
