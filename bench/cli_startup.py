"""How fast does the CLI answer? Print the wall time of ``voxbench --help`` and what it imports.

Runs ``voxbench --help`` (and ``voxbench list benchmarks``) in fresh interpreters several
times, prints the median and the fastest, and the modules that take longest to import
(``python -X importtime``): the target is well under a second for ``--help`` on a 2-core
machine, with scipy, onnxruntime, faster-whisper and the provider SDKs loaded only by the
commands that use them.

Usage: python bench/cli_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

HEAVY = ("scipy", "onnxruntime", "faster_whisper", "ctranslate2", "soundfile", "soxr", "boto3")


def wall(args: list[str], runs: int) -> list[float]:
    """Seconds each of ``runs`` fresh ``python -m voxbench.cli.main ARGS`` takes."""
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "voxbench.cli.main", *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        times.append(time.perf_counter() - began)
    return times


def import_profile() -> tuple[list[tuple[int, str]], set[str]]:
    """The slowest imports (cumulative µs) of the CLI module, and the heavy packages loaded."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import voxbench.cli.main"],
        check=True,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = (
            part.strip() for part in line.removeprefix("import time:").split("|")
        )
        rows.append((int(cumulative), name))
    loaded = {name.split(".")[0] for _, name in rows}
    return sorted(rows, reverse=True), {h for h in HEAVY if h in loaded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    wall(["--help"], 1)  # warm the file cache
    python_alone = []
    for _ in range(args.runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        python_alone.append(time.perf_counter() - began)
    for label, cli_args in (
        ("voxbench --help", ["--help"]),
        ("voxbench list benchmarks", ["list", "benchmarks"]),
    ):
        times = wall(cli_args, args.runs)
        print(
            f"{label:28s} median {statistics.median(times) * 1000:6.0f} ms  "
            f"fastest {min(times) * 1000:6.0f} ms  (python alone: "
            f"{statistics.median(python_alone) * 1000:.0f} ms, n={args.runs})"
        )
    rows, heavy = import_profile()
    print(
        "heavy packages imported by `import voxbench.cli.main`:", ", ".join(sorted(heavy)) or "none"
    )
    print("slowest imports (cumulative ms):")
    for cumulative, name in rows[:12]:
        print(f"  {cumulative / 1000:7.1f}  {name}")


if __name__ == "__main__":
    main()
