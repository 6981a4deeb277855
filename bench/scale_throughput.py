"""Repeats of ``smoke`` against a fake endpoint with injected latency: executors vs the ideal.

The fake OpenAI server (``voxbench fake-server openai --script golden:smoke``, its own process,
so its CPU is not the runners') answers every request after L ms. K repeats of ``smoke`` with
the target ``openai/gpt-4o-mini`` run with C cells in flight, once with the local executor
and once with Ray (a local Ray on this machine's cores). A run is a chain of R requests
(one per turn, plus one per tool-call round), so the ideal is C / (R × L) runs per second.
It prints runs/s and the ratio to the ideal for each executor; then CPU-bound cells (audio
runs with local speech) with the local executor's process pool and with Ray, where Ray can
only win once the cluster has more cores than this machine; then Ray's overhead per task:
the same finished cell through a Ray task (scheduling, argument and result transfer) against
calling it in process.

    python bench/scale_throughput.py [--repeats 8] [--concurrency 1,4,8] [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_fake(latency_ms: float) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "voxbench.cli.main", "fake-server", "openai", "--port", str(port),
         "--script", "golden:smoke", "--ttfb-ms", str(latency_ms)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"http://127.0.0.1:{port}/v1"
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the fake server did not start")


def _requests_per_run(run: Path) -> int:
    from voxbench.core.rundir import RunDirectory

    return sum(1 + (1 if r.tool_calls else 0) for r in RunDirectory(run).turns())


def _measure(executor, repeats: int, concurrency: int, base_url: str, root: Path):
    from voxbench.runner.config import build_config
    from voxbench.scale.limits import Limits
    from voxbench.scale.repeats import plan_group, run_group

    config = build_config(
        {"benchmark": "smoke", "target": "openai/gpt-4o-mini", "base_url": base_url,
         "runs_dir": root}
    )  # fmt: skip
    path = Path(tempfile.mkdtemp(dir=root))
    group = plan_group(config, repeats, path, executor.name)
    start = time.perf_counter()
    done = run_group(path, group, executor, Limits(max_concurrency=concurrency))
    elapsed = time.perf_counter() - start
    if done.status != "success":
        raise SystemExit(f"runs failed: {done.errors}")
    return elapsed, _requests_per_run(path / done.runs[0])


def _measure_cpu_bound(executor, repeats: int, root: Path, heard_asr: str) -> float:
    """Wall seconds for ``repeats`` audio runs of the oracle (local speech on this CPU)."""
    from voxbench.runner.config import build_config
    from voxbench.scale.limits import Limits
    from voxbench.scale.repeats import plan_group, run_group

    config = build_config(
        {"benchmark": "smoke", "target": "local/oracle", "mode": "audio", "heard_asr": heard_asr,
         "runs_dir": root}
    )  # fmt: skip
    path = Path(tempfile.mkdtemp(dir=root))
    group = plan_group(config, repeats, path, executor.name)
    start = time.perf_counter()
    done = run_group(path, group, executor, Limits(max_concurrency=os.cpu_count() or 2))
    if done.status != "success":
        raise SystemExit(f"runs failed: {done.errors}")
    return time.perf_counter() - start


def _ray_overhead(tries: int, root: Path) -> tuple[float, float]:
    """Seconds per call of one finished cell: in process, and through a Ray task."""
    import ray

    from voxbench.runner.config import build_config
    from voxbench.scale.cells import Cell, run_cell
    from voxbench.scale.ray_executor import ray_cell

    config = build_config({"benchmark": "smoke", "target": "local/oracle"})
    cell = Cell(config=config, path=root / "overhead-cell")
    run_cell(cell)  # now finished: every later call only finds it done
    start = time.perf_counter()
    for _ in range(tries):
        run_cell(cell)
    local = (time.perf_counter() - start) / tries
    task = ray.remote(ray_cell)
    ray.get(task.remote(cell, None, {}, False))  # warm a worker
    start = time.perf_counter()
    for _ in range(tries):
        ray.get(task.remote(cell, None, {}, False))
    remote = (time.perf_counter() - start) / tries
    return local, remote


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--concurrency", default="1,4,8")
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--overhead-tries", type=int, default=20)
    parser.add_argument(
        "--cpu-bound",
        default="1,2,4",
        help="Audio runs (local eSpeak + Whisper) per point for the CPU-bound comparison; "
        "empty to skip",
    )
    parser.add_argument("--heard-asr", default="local/whisper-tiny.en")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-fake")
    import ray

    from voxbench.scale.executors import LocalExecutor
    from voxbench.scale.ray_executor import RayExecutor

    proc, base_url = _start_fake(args.latency_ms)
    latency = args.latency_ms / 1000
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            ray.init(num_cpus=os.cpu_count() or 2, include_dashboard=False, log_to_driver=False)
            executors = [LocalExecutor(), RayExecutor()]
            print(f"smoke × {args.repeats} repeats, fake endpoint latency {args.latency_ms:g} ms, "
                  f"{os.cpu_count()} cores")  # fmt: skip
            print(f"{'C':>3} {'executor':>8} {'wall s':>7} {'runs/s':>7} {'ideal':>7} {'ratio':>6}")
            for c in (int(x) for x in args.concurrency.split(",")):
                # Ray twice: the second pass can find worker processes the first started.
                for executor, label in ((executors[0], "local"), (executors[1], "ray"),
                                        (executors[1], "ray again")):  # fmt: skip
                    elapsed, requests = _measure(executor, args.repeats, c, base_url, root)
                    ideal = min(c, args.repeats) / (requests * latency)
                    rate = args.repeats / elapsed
                    print(f"{c:>3} {label:>8} {elapsed:>7.2f} {rate:>7.3f} "
                          f"{ideal:>7.3f} {rate / ideal:>6.2f}")  # fmt: skip
            if args.cpu_bound:
                print("CPU-bound cells: audio runs of the oracle on smoke (eSpeak NG user, "
                      f"{args.heard_asr} on the agent channel), wall s")  # fmt: skip
                print(f"{'runs':>4} {'local':>7} {'ray':>7} {'ray/local':>9}")
                for k in (int(x) for x in args.cpu_bound.split(",")):
                    t_local = _measure_cpu_bound(executors[0], k, root, args.heard_asr)
                    t_ray = _measure_cpu_bound(executors[1], k, root, args.heard_asr)
                    print(f"{k:>4} {t_local:>7.2f} {t_ray:>7.2f} {t_ray / t_local:>9.2f}")
            local, remote = _ray_overhead(args.overhead_tries, root)
            print(f"one finished cell in process: {local * 1000:.1f} ms; as a Ray task: "
                  f"{remote * 1000:.1f} ms; overhead per task: {(remote - local) * 1000:.1f} ms")  # fmt: skip
            ray.shutdown()
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
