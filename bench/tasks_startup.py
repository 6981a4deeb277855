"""How soon does ``voxbench tasks run`` send its first request? (issue 33, item 2: ≤ 1 s)

Starts the fake OpenAI-compatible endpoint of ``bench/tasks_throughput.py`` (its own
process), writes a task on a local parquet dataset (the Hub's layout, 16 kHz WAV bytes
embedded) and an ``eval.yaml`` naming the endpoint, then runs ``voxbench tasks run eval.yaml``
in a fresh process several times and prints, per run and as median and fastest: the seconds
from launching the command to the fake's first request (imports, the task registry, opening
the dataset, the plan, run.json), and the CPU seconds the whole command used. Then the
slowest imports of one run (``python -X importtime``) and whether ``datasets`` was imported
(it is not needed for a local parquet or ``save_to_disk`` dataset). On a shared machine the
wall time includes waiting for a core: the fastest run is the closest to an idle machine.

    python bench/tasks_startup.py [--runs 5] [--records 200]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).parent
GOAL_S = 1.0


def _fake() -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, str(BENCH / "tasks_throughput.py"), "--serve", "0.01"],
        stdout=subprocess.PIPE,
        text=True,
    )
    return server, f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"  # type: ignore[union-attr]


def _stats(url: str) -> dict[str, float]:
    import urllib.request

    with urllib.request.urlopen(url.rsplit("/v1", 1)[0] + "/stats", timeout=10) as r:  # noqa: S310
        return dict(json.loads(r.read()))


def _setup(root: Path, url: str, records: int) -> Path:
    sys.path.insert(0, str(BENCH))
    from tasks_throughput import _make_dataset

    dataset, _ = _make_dataset(root / "data", records, "parquet-wav")
    (root / "tasks").mkdir()
    (root / "tasks" / "bench_asr.yaml").write_text(
        f"dataset: {dataset}\nprompt: {{user: 'Transcribe clip {{id}}.'}}\nmetrics: [wer]\n"
    )
    config = root / "eval.yaml"
    config.write_text(
        f"models: [{{name: q, model: openai-compatible/q, base_url: '{url}', max_concurrency: 8,"
        f" retries: 0}}]\ntasks: [bench_asr]\ntasks_dirs: ['{root / 'tasks'}']\n"
        f"output_dir: '{root / 'runs'}'\n"
    )
    return config


def _command(config: Path) -> list[str]:
    return [sys.executable, "-m", "voxbench.cli.main", "tasks", "run", str(config), "--no-cache"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--records", type=int, default=200)
    args = parser.parse_args()
    server, url = _fake()
    env = {**os.environ, "COLUMNS": "120"}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = _setup(Path(tmp), url, args.records)
            firsts, cpus = [], []
            print(f"{'run':>3} {'first request s':>15} {'cpu s':>6}")
            for run in range(args.runs):
                _stats(url)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                launched = time.time()
                subprocess.run(_command(config), env=env, capture_output=True, check=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                first = _stats(url)["first_wall"] - launched
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                firsts.append(first)
                cpus.append(cpu)
                print(f"{run + 1:>3} {first:>15.3f} {cpu:>6.2f}", flush=True)
            median = statistics.median(firsts)
            print(
                f"first request: median {median:.3f} s, fastest {min(firsts):.3f} s "
                f"(goal ≤ {GOAL_S:g} s: {'met' if min(firsts) <= GOAL_S else 'not met'}); "
                f"load {os.getloadavg()[0]:.1f}"
            )
            done = subprocess.run(
                [sys.executable, "-X", "importtime", *_command(config)[1:]],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            rows = []
            for line in done.stderr.splitlines():
                parts = line.removeprefix("import time:").split("|")
                if len(parts) == 3 and parts[1].strip().isdigit():
                    rows.append((int(parts[1]), parts[2].rstrip()))
            names = {name.strip() for _, name in rows}
            print(f"modules imported: {len(rows)}; datasets imported: {'datasets' in names}")
            print("slowest imports (cumulative ms):")
            for total, name in sorted(rows, reverse=True)[:12]:
                print(f"  {total / 1000:8.1f}  {name}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
