"""Seconds to render ``report.html`` of a 75-turn audio run (target: under 2 s on 2 cores).

Records the full ``conference`` benchmark in audio mode with the oracle (virtual clock, no ASR
of the agent; about a minute the first time, its run directory is then reused), judges it, and
renders its page: with players linked to ``conversation.wav`` (the default) and with every
turn's audio embedded. Each figure is the best of ``--repeat`` renders in this process (the
first also counts template compilation and imports) plus the first render on its own.

Usage: python bench/report_html.py [--runs-dir DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path


def _audio_run(runs_dir: Path) -> Path:
    from voxbench.core.rundir import RunDirectory
    from voxbench.evaluation import evaluate_run
    from voxbench.runner.config import RunConfig
    from voxbench.runner.launch import run_conversation

    for found in sorted(runs_dir.glob("conference/*/run.json")):
        run = RunDirectory(found.parent)
        if run.info().status == "success" and len(run.turns()) == 75 and run.has_recording:
            return run.path
    config = RunConfig(
        benchmark="conference",
        target="local/oracle",
        mode="audio",
        heard_asr="none",
        tags="track",
        runs_dir=runs_dir,
    )
    began = time.perf_counter()
    path = asyncio.run(run_conversation(config))
    evaluate_run(path)
    print(f"recorded and judged the 75-turn run in {time.perf_counter() - began:.1f} s: {path}")
    return path


def _timed(render, repeat: int) -> tuple[float, float, int]:
    first = None
    times = []
    size = 0
    for _ in range(repeat):
        began = time.perf_counter()
        size = len(render())
        times.append(time.perf_counter() - began)
        first = times[0] if first is None else first
    return first or 0.0, min(times), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-dir", type=Path, default=None, help="reuse or keep the run here")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs_dir = args.runs_dir or Path(tmp) / "runs"
        path = _audio_run(runs_dir)
        from voxbench.report.html import render_run_html

        for label, embed in (
            ("players linked to conversation.wav", False),
            ("audio embedded", True),
        ):
            first, best, size = _timed(
                lambda e=embed: render_run_html(path, embed_audio=e), args.repeat
            )
            print(
                f"report.html, 75-turn audio run, {label}: first {first:.2f} s, best {best:.2f} s "
                f"(target < 2 s), {size / 1e6:.1f} MB, {os.cpu_count()} CPUs"
            )


if __name__ == "__main__":
    main()
