"""Wall time and peak memory of the README's main job, ``voxbench demo``.

Runs the demo (the full ``conference`` benchmark in audio mode: the oracle and the local
cascade Whisper → baseline → eSpeak NG) in a child process and prints its wall-clock time
(target: under 2 minutes cold on a 2-core machine, issue 33), peak resident memory and the
load average before and after (other jobs on the cores slow it). ``--cold`` empties the
audio cache first, so the user's turns are synthesized too.

Usage: python bench/demo_cost.py [--cold] [--benchmark conference]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="start with an empty audio cache")
    parser.add_argument("--benchmark", default="conference")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        if args.cold:
            env["VOXBENCH_CACHE_DIR"] = str(Path(tmp) / "cache")
        command = [
            sys.executable,
            "-m",
            "voxbench.cli.main",
            "demo",
            "--benchmark",
            args.benchmark,
            "--runs-dir",
            str(Path(tmp) / "runs"),
        ]
        load_before = os.getloadavg()[0]
        began = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - began
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-2000:])
        raise SystemExit(f"demo failed with exit code {done.returncode}")
    print(
        f"voxbench demo ({args.benchmark}, audio, {'cold' if args.cold else 'warm'} cache): "
        f"{elapsed:.1f} s wall clock (target < 120 s), peak memory {peak_kib / 1024:.0f} MiB, "
        f"{os.cpu_count()} CPUs, load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after"
    )


if __name__ == "__main__":
    main()
