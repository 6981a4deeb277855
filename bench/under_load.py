"""Run a bench script beside N busy processes: the same figures at a known, repeatable load.

Figures on a shared machine move with whatever else runs on its cores. Each bench already
measures its anchor in the same run (the ratio is what to compare), but whether a ratio holds
when the machine is busy is a question of its own. This runs the command given after ``--``
with ``--burn N`` processes spinning on the CPU (pure Python loops, one core each, at the
same priority) and prints the load average before and after, so "quiet" and "loaded" tables
come from the same command on any machine.

    python bench/under_load.py --burn 2 -- python bench/vad_throughput.py --minutes 5
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time


def _spin(stop: multiprocessing.synchronize.Event) -> None:
    n = 0
    while not stop.is_set():
        for _ in range(100_000):
            n += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burn", type=int, default=2, help="busy processes beside the command")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before starting")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the bench command")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the bench command after --")
    stop = multiprocessing.get_context("spawn").Event()
    burners = [
        multiprocessing.get_context("spawn").Process(target=_spin, args=(stop,), daemon=True)
        for _ in range(args.burn)
    ]
    for burner in burners:
        burner.start()
    try:
        time.sleep(args.settle)
        print(
            f"under load: {args.burn} busy processes on {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.1f} before",
            flush=True,
        )
        code = subprocess.call(command)
        print(f"load average {os.getloadavg()[0]:.1f} after", flush=True)
    finally:
        stop.set()
        for burner in burners:
            burner.join(timeout=5)
            if burner.is_alive():
                burner.terminate()
    sys.exit(code)


if __name__ == "__main__":
    main()
