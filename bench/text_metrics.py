"""Scoring speed of the text metrics that are pure Python: METEOR, cpWER, WDER.

Scores N synthetic (prediction, reference) pairs — 20-word English sentences with a few
words changed, and 3-speaker transcripts of 60 words with some turns reassigned — and pools
them (with the 1000-draw bootstrap interval), printing records per second for each metric.
Imports (nltk's, ~1 s) are paid before timing. Large runs score in worker processes; this is
the cost one core pays. cpWER/WDER spend most of it in Whisper's English normaliser (per
turn), as WER does.

    python bench/text_metrics.py [--records 2000]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "runs",
    "running",
    "jumped",
    "jumps",
    "house",
    "houses",
    "over",
    "under",
    "big",
    "small",
    "red",
    "blue",
    "quickly",
    "slowly",
    "said",
    "says",
    "go",
    "went",
    "gone",
    "is",
    "are",
    "was",
    "were",
    "on",
    "in",
    "at",
    "of",
    "to",
    "from",
    "with",
]


def _sentence(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(WORDS) for _ in range(n)]


def _pairs(records: int, seed: int = 0) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    rng = random.Random(seed)
    texts, transcripts = [], []
    for _ in range(records):
        ref = _sentence(rng, 20)
        hyp = [rng.choice(WORDS) if rng.random() < 0.2 else w for w in ref]
        texts.append((" ".join(hyp), " ".join(ref)))
        turns = [(f"S{i % 3}", _sentence(rng, 10)) for i in range(6)]
        reference = "\n".join(f"{s}: {' '.join(w)}" for s, w in turns)
        moved = [
            (f"S{(i + 1) % 3}" if rng.random() < 0.2 else s, w) for i, (s, w) in enumerate(turns)
        ]
        prediction = "\n".join(f"X{s}: {' '.join(w)}" for s, w in moved)
        transcripts.append((prediction, reference))
    return texts, transcripts


def main() -> None:
    from voxbench.metrics.registry import METRICS, ScoringContext

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    args = parser.parse_args()
    texts, transcripts = _pairs(args.records)
    for name, pairs in (("meteor", texts), ("cpwer", transcripts), ("wder", transcripts)):
        metric = METRICS[name]
        metric.score(*pairs[0][:1], ScoringContext(pairs[0][1], "en", "en", "text"))  # imports
        started = time.perf_counter()
        stats = [
            metric.score(p, ScoringContext(reference=r, language="en", target_language="en",
                                           answer="text"))
            for p, r in pairs
        ]  # fmt: skip
        scored = time.perf_counter() - started
        pooled = metric.pool(stats, np.random.default_rng(0))
        pooled_s = time.perf_counter() - started - scored
        print(
            f"{name:7s} {args.records} records: score {args.records / scored:8.0f} rec/s, "
            f"pool+bootstrap {pooled_s * 1000:6.0f} ms, value {pooled['value']} CI {pooled['ci']}"
        )


if __name__ == "__main__":
    main()
