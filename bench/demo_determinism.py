"""Does ``voxbench demo`` give the same results idle and under load?

Runs ``voxbench demo`` N times (default 3), the last one while K busy processes (pure-Python
spin loops, default 8) compete for the cores, and prints for each run its wall time, the load
average, each agent's turn status counts, and whether each agent's scorecard (timing and
latency figures, run ids, paths and timestamps stripped) and ``conversation.wav`` are
byte-identical to the first run's. In-process agents run on a virtual clock, so only their
timing figures may differ. Exits 1 when anything differs.

Usage: python bench/demo_determinism.py [--benchmark smoke] [--mode audio] [--runs 3] [--load 8]
       python bench/demo_determinism.py --quick   # smoke in text mode, 2 runs, 2 busy processes
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TIMING_KEY = re.compile(
    r"latency|^run_id$|_at$|_ms$|_s$|seconds|timestamp|^path$|_path$|_dir$", re.IGNORECASE
)
"""Scorecard keys whose values are timing figures, run ids, paths or timestamps."""


def strip_timing(value: Any) -> Any:
    """``value`` (a scorecard) without the keys that may differ between identical runs."""
    if isinstance(value, dict):
        return {k: strip_timing(v) for k, v in value.items() if not TIMING_KEY.search(k)}
    if isinstance(value, list):
        return [strip_timing(v) for v in value]
    return value


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Dotted paths at which two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            out += differences(a.get(key), b.get(key), f"{where}.{key}" if where else key)
        return out
    return [] if a == b else [where or "(root)"]


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """``count`` spin loops competing for the cores while the block runs; killed after it."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def run_demo(runs_dir: Path, benchmark: str, mode: str) -> tuple[float, dict[str, Path]]:
    """Run ``voxbench demo`` into ``runs_dir``; its wall time and each agent's run directory."""
    command = [sys.executable, "-m", "voxbench.cli.main", "demo", "--benchmark", benchmark]
    command += ["--mode", mode, "--runs-dir", str(runs_dir)]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-2000:])
        raise SystemExit(f"voxbench demo failed with exit code {done.returncode}")
    agents = {}
    for card in sorted(runs_dir.glob("*/*/scorecard.json")):
        agents[json.loads(card.read_text())["target"]] = card.parent
    return elapsed, agents


def status_counts(run: Path) -> str:
    """The run's turn statuses, counted (from its scorecard)."""
    counts = json.loads((run / "scorecard.json").read_text())["counts"]
    return " ".join(f"{k} {counts.get(k, 0)}" for k in ("ok", "no_response", "error"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="conference")
    parser.add_argument("--mode", default="audio", choices=("audio", "text"))
    parser.add_argument("--runs", type=int, default=3, help="demo runs (the last one loaded)")
    parser.add_argument("--load", type=int, default=8, help="busy processes in the last run")
    parser.add_argument(
        "--quick", action="store_true", help="smoke in text mode, 2 runs, 2 busy processes"
    )
    args = parser.parse_args()
    if args.quick:
        args.benchmark, args.mode, args.runs, args.load = "smoke", "text", 2, 2
    if args.runs < 2:
        parser.error("--runs must be at least 2 (the first run is the reference)")
    print(
        f"voxbench demo --benchmark {args.benchmark} --mode {args.mode}: {args.runs} runs, "
        f"the last with {args.load} busy processes; {os.cpu_count()} CPUs"
    )
    all_same = True
    with tempfile.TemporaryDirectory() as tmp:
        reference: dict[str, tuple[Any, bytes | None]] = {}
        for index in range(args.runs):
            load = args.load if index == args.runs - 1 else 0
            with busy_processes(load):
                elapsed, agents = run_demo(Path(tmp) / f"demo-{index}", args.benchmark, args.mode)
                loadavg = os.getloadavg()[0]
            print(
                f"run {index + 1}: {load} busy processes, {elapsed:.0f} s wall clock, "
                f"load average {loadavg:.1f}"
            )
            for target, run in sorted(agents.items()):
                card = strip_timing(json.loads((run / "scorecard.json").read_text()))
                wav_file = run / "conversation.wav"
                wav = wav_file.read_bytes() if wav_file.is_file() else None
                if index == 0:
                    reference[target] = (card, wav)
                    verdict = "reference"
                else:
                    first_card, first_wav = reference[target]
                    changed = differences(first_card, card)
                    same_wav = wav == first_wav
                    all_same = all_same and not changed and same_wav
                    shown = ", ".join(changed[:5]) + (" …" if len(changed) > 5 else "")
                    verdict = f"scorecard {'same' if not changed else 'DIFFERS: ' + shown}; " + (
                        "no recording"
                        if wav is None and first_wav is None
                        else f"conversation.wav {'same' if same_wav else 'DIFFERS'}"
                    )
                print(f"  {target:<24} {status_counts(run):<30} {verdict}")
    print("all runs identical to the first" if all_same else "some runs DIFFER from the first")
    if not all_same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
