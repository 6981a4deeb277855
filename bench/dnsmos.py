"""How DNSMOS P.835 (``audio_quality``) moves on eSpeak NG speech: clean, under pink noise at
20/10/5 dB SNR and babble at 10 dB, and through a telephone band with μ-law; and its speed.

DNSMOS estimates what listeners would say about noise and distortion — SIG (the speech
signal), BAK (background), OVRL (overall), 1–5 — not accent, prosody or content: eSpeak's
clean but robotic voice is what the clean row shows. The clips are the accent set's three
sentences in eSpeak's en-gb voice (``--voices`` for more; seed 0 for every perturbation, so a
rerun hears the same audio); each row is the mean over the clips. Figures only, no
thresholds; the speed column is DNSMOS alone, on one thread.

Usage: python bench/dnsmos.py [--voices V ...] [--specs SPEC ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from voxbench.audio.dnsmos import dnsmos
from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.perturb import parse_perturbations

SENTENCES = (
    "Good afternoon, thank you for calling. How can I help you today?",
    "Your table for four is booked for half past seven on Thursday evening.",
    "I am afraid the last train to Oxford has already left the station.",
)
LADDER = [
    "none",
    "noise:pink@20dB",
    "noise:pink@10dB",
    "noise:pink@5dB",
    "noise:babble@10dB",
    "band:telephone+codec:mulaw",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices", nargs="+", default=["en-gb"])
    parser.add_argument("--specs", nargs="+", default=LADDER)
    args = parser.parse_args()
    clips = [espeak_synthesize(s, v) for v in args.voices for s in SENTENCES]
    seconds = sum(len(c.samples) / c.sample_rate for c in clips)
    print(f"{len(clips)} eSpeak NG clips ({seconds:.1f} s of speech), DNSMOS P.835 (1-5)")
    print(f"{'condition':<30} {'SIG':>6} {'BAK':>6} {'OVRL':>6}  {'x real time':>11}")
    for spec in args.specs:
        perturbation = parse_perturbations(spec)
        heard = [perturbation.apply(c, 0, f"clip{i}") for i, c in enumerate(clips)]
        start = time.perf_counter()
        scores = [dnsmos(h) for h in heard]
        elapsed = time.perf_counter() - start
        decided = [s for s in scores if s is not None]
        sig, bak, ovrl = (
            float(np.mean([getattr(s, k) for s in decided])) for k in ("sig", "bak", "ovrl")
        )
        print(f"{spec:<30} {sig:>6.2f} {bak:>6.2f} {ovrl:>6.2f}  {seconds / elapsed:>10.1f}x")


if __name__ == "__main__":
    main()
