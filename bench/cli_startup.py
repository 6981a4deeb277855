"""How fast does the CLI answer? Print the time of ``voxbench --help`` and what it imports.

Runs ``voxbench --help`` (and ``voxbench list benchmarks``) in fresh interpreters several
times and prints the median and fastest wall time, with the CPU time the process used (what
the wall time would be on an idle machine: on a shared one, wall time includes waiting for a
core). Then the number of modules ``import voxbench.cli.main`` and ``voxbench --help`` load,
the heavy packages among them (none: each command's module, and scipy, onnxruntime,
faster-whisper or the provider clients with it, is imported only when that command runs),
the slowest imports (``python -X importtime``), and whether the goal of issue 24 is met:
``voxbench --help`` in under 0.3 s.

Usage: python bench/cli_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL_S = 0.3
"""Issue 24: ``voxbench --help`` answers in under this many seconds on an idle machine."""

HEAVY = (
    "scipy",
    "numpy",
    "onnxruntime",
    "faster_whisper",
    "ctranslate2",
    "soundfile",
    "soxr",
    "httpx",
    "pydantic",
    "jinja2",
    "starlette",
    "websockets",
    "boto3",
)


def command() -> list[str]:
    """The ``voxbench`` console script beside this interpreter, or ``python -m`` without one."""
    script = Path(sys.executable).with_name("voxbench")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "voxbench.cli.main"]


def timed(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    """(wall seconds, CPU seconds) of each of ``runs`` fresh runs of ``argv``."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus


_COUNT = """
import json, sys
import voxbench.cli.main
imported = sorted(sys.modules)
sys.argv = ["voxbench", "--help"]
try:
    voxbench.cli.main.main()
except SystemExit:
    pass
print(json.dumps({"import": imported, "help": sorted(sys.modules)}), file=sys.stderr)
"""


def modules_loaded() -> dict[str, list[str]]:
    """The modules in ``sys.modules`` after ``import voxbench.cli.main``, then after ``--help``."""
    done = subprocess.run(
        [sys.executable, "-c", _COUNT],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


def import_profile() -> list[tuple[int, str]]:
    """The slowest imports (cumulative µs) of the CLI module."""
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
    return sorted(rows, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    voxbench = command()
    timed([*voxbench, "--help"], 1)  # warm the file cache
    python_alone, _ = timed([sys.executable, "-c", "pass"], args.runs)
    print(
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
        f"python alone: {statistics.median(python_alone) * 1000:.0f} ms (n={args.runs})"
    )
    help_wall: list[float] = []
    for label, cli_args in (
        ("voxbench --help", ["--help"]),
        ("voxbench list benchmarks", ["list", "benchmarks"]),
    ):
        walls, cpus = timed([*voxbench, *cli_args], args.runs)
        help_wall = help_wall or walls
        print(
            f"{label:26s} median {statistics.median(walls) * 1000:5.0f} ms  "
            f"fastest {min(walls) * 1000:5.0f} ms  CPU {statistics.median(cpus) * 1000:5.0f} ms"
            f"  (n={args.runs})"
        )
    loaded = modules_loaded()
    for stage in ("import", "help"):
        tops = {name.split(".")[0] for name in loaded[stage]}
        heavy = ", ".join(h for h in HEAVY if h in tops) or "none"
        what = "import voxbench.cli.main" if stage == "import" else "voxbench --help"
        print(f"{what:26s} {len(loaded[stage]):5d} modules; heavy packages: {heavy}")
    median = statistics.median(help_wall)
    verdict = "met" if median < GOAL_S else "NOT met"
    print(
        f"goal: voxbench --help under {GOAL_S * 1000:.0f} ms: {verdict} "
        f"(median {median * 1000:.0f} ms; on a loaded machine compare the CPU time)"
    )
    print("slowest imports of `import voxbench.cli.main` (cumulative ms):")
    for cumulative, name in import_profile()[:12]:
        print(f"  {cumulative / 1000:7.1f}  {name}")


if __name__ == "__main__":
    main()
