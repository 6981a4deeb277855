"""What each perturbation costs: audio seconds perturbed per wall second (× real time) on this
host, one step at a time, on 60 s of eSpeak NG speech at 16 kHz (the rate the local cascade
hears). The goal (issue 31) is ≥ 100× real time for every step but reverberation on 2 cores.

Each step runs ``--repeats`` times on the same clip (seed 0, a new key each time) after one
warm-up call (babble's bed, PyAV's codecs and scipy load once per process); the best time is
reported, so another process on the host inflates a figure less. Figures only, no thresholds.

Usage: python bench/perturb_cost.py [--seconds S] [--repeats N] [--specs SPEC ...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from voxbench.audio.espeak import espeak_sample_rate, espeak_synthesize
from voxbench.audio.perturb import (
    AMR_ENCODER,
    OPUS_ENCODER,
    codec_available,
    parse_perturbations,
)
from voxbench.audio.wav import Audio, write_wav

RATE = 16_000
SPECS = [
    "noise:white@10dB",
    "noise:pink@10dB",
    "noise:brown@10dB",
    "noise:babble@10dB",
    "noise:dir@10dB,path={noise_dir}",
    "gain@-6dB",
    "clip@-12dB",
    "band:telephone",
    "codec:mulaw",
    "codec:alaw",
    "codec:opus@12k",
    "codec:amrnb@12.2k",
    "loss:5%",
    "loss:5%,burst=3,conceal=repeat",
    "jitter@30ms,conceal=repeat",
    "speed@1.1",
    "pitch@2st",
    "reverb@0.5s",
    "reverb:file,path={rir}",
]
LINES = (
    "Please book the large meeting room for Thursday afternoon at three o'clock.",
    "Can you tell me whether the keynote has moved to the main hall this year?",
    "I would like to register two more people for the workshop on Friday morning.",
)


def speech(seconds: float) -> Audio:
    """``seconds`` of eSpeak NG speech at 16 kHz (the lines looped)."""
    parts = [espeak_synthesize(line).resampled(RATE).samples for line in LINES]
    one = np.concatenate(parts)
    reps = int(np.ceil(seconds * RATE / one.shape[0]))
    return Audio(np.tile(one, reps)[: round(seconds * RATE)], RATE)


def fixtures(folder: Path) -> dict[str, str]:
    """A noise folder and an RIR WAV for the steps that read files."""
    rng = np.random.default_rng(0)
    (folder / "noise").mkdir(parents=True, exist_ok=True)
    write_wav(
        folder / "noise" / "n.wav",
        Audio(rng.standard_normal(RATE * 5).astype(np.float32) * 0.1, RATE),
    )
    t = np.arange(RATE // 2) / RATE
    rir = (rng.standard_normal(t.shape[0]) * np.exp(-13.8 * t)).astype(np.float32)
    rir[0] = 1.0
    write_wav(folder / "rir.wav", Audio(rir, RATE))
    return {"noise_dir": str(folder / "noise"), "rir": str(folder / "rir.wav")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--specs", nargs="*", default=SPECS)
    args = parser.parse_args()
    clip = speech(args.seconds)
    print(f"{args.seconds:g} s of eSpeak NG speech (eSpeak at {espeak_sample_rate()} Hz → 16 kHz)")
    print(f"{'perturbation':<36} {'ms per call':>12} {'× real time':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        paths = fixtures(Path(tmp))
        for spec in args.specs:
            if (
                "opus" in spec
                and not codec_available(OPUS_ENCODER)
                or "amrnb" in spec
                and not codec_available(AMR_ENCODER)
            ):
                print(f"{spec:<36} {'(codec not in this PyAV build)':>25}")
                continue
            chain = parse_perturbations(spec.format(**paths))
            chain.apply(clip, 0, "warm-up")
            best = float("inf")
            for i in range(args.repeats):
                start = time.perf_counter()
                chain.apply(clip, 0, f"turn-{i}")
                best = min(best, time.perf_counter() - start)
            label = spec.split(",path=")[0]
            print(f"{label:<36} {best * 1000:>12.1f} {args.seconds / best:>11.0f}×")


if __name__ == "__main__":
    main()
