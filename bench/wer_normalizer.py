"""What English WER's normaliser costs: Whisper's (``whisper-normalizer``) plus voxbench's times.

Prints the import time of ``whisper_normalizer.english`` in a fresh interpreter (it is imported
on first use, so only a process that computes English WER pays it), and the time per text of
``normalize_english`` against the spelled-out ``normalize_text``, over every user and golden
text of the ``conference`` benchmark.

    python bench/wer_normalizer.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from voxbench.audio.textnorm import normalize_english, normalize_text
from voxbench.benchmarks.loader import load_benchmark

_IMPORT_TIMER = (
    "import time; t = time.perf_counter(); "
    "from whisper_normalizer.english import EnglishTextNormalizer; EnglishTextNormalizer(); "
    "print(time.perf_counter() - t)"
)


def import_seconds(repeat: int) -> list[float]:
    """Import (and construction) time of Whisper's English normaliser, fresh each time."""
    out = []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", _IMPORT_TIMER], capture_output=True, text=True, check=True
        )
        out.append(float(done.stdout.strip()))
    return out


def per_text_us(texts: list[str], normalise, repeat: int) -> float:
    normalise(texts[0])  # first use pays any import outside the timing
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        for text in texts:
            normalise(text)
        best = min(best, time.perf_counter() - began)
    return best / len(texts) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    imports = sorted(import_seconds(args.repeat))
    print(
        f"whisper_normalizer.english import + construction: median "
        f"{imports[len(imports) // 2] * 1e3:.1f} ms (min {imports[0] * 1e3:.1f} ms, "
        f"{args.repeat} fresh interpreters)"
    )
    bench = load_benchmark("conference")
    texts = [t.text for t in bench.turns] + [t.golden_text for t in bench.turns if t.golden_text]
    # Uncached: the time of each normalisation, not of a cache hit.
    english = normalize_english.__wrapped__
    for name, func in (("normalize_english", english), ("normalize_text", normalize_text)):
        print(
            f"{name}: {per_text_us(texts, func, args.repeat):.0f} µs per text ({len(texts)} texts)"
        )


if __name__ == "__main__":
    main()
