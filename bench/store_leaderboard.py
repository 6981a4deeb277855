"""How fast does the leaderboard answer over 1 000 indexed runs from SQLite? Print ms.

Makes one real judged run (the oracle on ``smoke``), copies it into ``--runs`` run
directories spread over 25 targets and 8 benchmarks with different scores and start
times, indexes them into a fresh SQLite store, then times ``Store.leaderboard()`` (all
runs; filtered to one mode; best instead of latest), ``Store.runs()`` and the viewer's
leaderboard page over HTTP. Target: the leaderboard under 200 ms.

Usage: python bench/store_leaderboard.py [--runs 1000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import evaluate_run
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.store import RunFilters, open_store


def make_runs(root: Path, count: int) -> None:
    """``count`` run directories cloned from one real judged run."""
    os.environ["VOXBENCH_STORE"] = "off"
    template = asyncio.run(
        run_conversation(RunConfig(benchmark="smoke", target="local/oracle", runs_dir=root / "t"))
    )
    evaluate_run(template)
    info = json.loads((template / RunDirectory.RUN).read_text())
    card = json.loads((template / RunDirectory.SCORECARD).read_text())
    for i in range(count):
        benchmark, target = f"bench-{i % 8}", f"vendor/model-{i % 25}"
        run_id = f"20260101T{i // 3600 % 24:02d}{i // 60 % 60:02d}{i % 60:02d}Z_{i:05d}"
        path = root / benchmark / run_id
        shutil.copytree(template, path)
        (path / RunDirectory.RUN).write_text(
            json.dumps(
                info
                | {
                    "run_id": run_id,
                    "benchmark": benchmark,
                    "target": {"name": target, "args": {}},
                    "mode": "audio" if i % 2 else "text",
                    "started_at": f"2026-01-{1 + i % 28:02d}T00:00:00+00:00",
                }
            )
        )
        rate = (i * 37 % 101) / 100
        strict = card["strict_pass"] | {"rate": rate}
        (path / RunDirectory.SCORECARD).write_text(
            json.dumps(
                card
                | {
                    "run_id": run_id,
                    "benchmark": benchmark,
                    "target": target,
                    "strict_pass": strict,
                }
            )
        )
    shutil.rmtree(root / "t")


def timed(call, repeat: int) -> tuple[float, float]:
    """Median and fastest milliseconds of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        times.append(1000 * (time.perf_counter() - began))
    return statistics.median(times), min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        began = time.perf_counter()
        make_runs(root, args.runs)
        print(f"made {args.runs} run directories in {time.perf_counter() - began:.1f} s")
        with open_store(str(Path(tmp) / "voxbench.db"), root) as store:
            began = time.perf_counter()
            report = store.index_tree(root)
            print(
                f"indexed {len(report.indexed)} runs in {1000 * (time.perf_counter() - began):.0f} ms; "
                f"re-index of unchanged runs: {timed(lambda: store.index_tree(root), 1)[0]:.0f} ms"
            )
            cells = len(store.leaderboard())
            for label, call in (
                ("leaderboard (latest)", lambda: store.leaderboard()),
                ("leaderboard (best)", lambda: store.leaderboard(pick="best")),
                ("leaderboard, mode=audio", lambda: store.leaderboard(RunFilters(mode="audio"))),
                ("runs, one target", lambda: store.runs(RunFilters(target="vendor/model-3"))),
            ):
                median, fastest = timed(call, args.repeat)
                print(f"{label:26s} median {median:7.1f} ms  fastest {fastest:7.1f} ms")
            from starlette.testclient import TestClient

            from voxbench.viewer.app import REINDEX_EVERY_S, create_app

            with TestClient(create_app(root, store), base_url="http://127.0.0.1") as http:
                median, fastest = timed(lambda: http.get("/").raise_for_status(), args.repeat)
            print(
                f"{'viewer page / (HTTP)':26s} median {median:7.1f} ms  fastest {fastest:7.1f} ms"
                f"  (plus a re-index at most every {REINDEX_EVERY_S:g} s)"
            )
            print(f"({cells} leaderboard cells over {args.runs} runs; target: under 200 ms)")


if __name__ == "__main__":
    main()
