"""Repeats of ``smoke`` against a fake endpoint with injected latency: executors vs the ideal.

The fake OpenAI server (``voxbench fake-server openai --script golden:smoke``, its own process,
so its CPU is not the runners') answers every request after L ms. K repeats of ``smoke`` with
the target ``openai/gpt-4o-mini`` run with C cells in flight, once with the local executor
and once with Ray (a local Ray on this machine's cores). A run is a chain of R requests
(one per turn, plus one per tool-call round), so the ideal is C / (R × L) runs per second.

Ray's start-up is reported apart from its steady state, and both are figures users see:

- cold: what ``voxbench run --repeats K --executor ray`` without ``--ray-address`` pays, the
  executor starting a local Ray, its warm runners, the runs, and stopping Ray again, all in
  the wall time (against the local executor at the largest C);
- start-up: ``ray.init`` and the runners' first start on their own;
- steady state (the table): a Ray that is up with warm runners, as a driver's later runs and
  any run on a running cluster (``--ray-address auto``) find it; ``ray ÷ local`` is the ratio
  of runs/s measured in the same run.

Then CPU-bound cells (audio runs with local speech) with the local executor's spawned process
pool and with Ray tasks of one CPU; then Ray's overhead per cell: the same finished cell
through a Ray task and through a warm runner against calling it in process.

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


def _ray_overhead(tries: int, root: Path) -> tuple[float, float, float]:
    """Seconds per call of one finished cell: in process, as a Ray task, on a warm runner."""
    import ray

    from voxbench.runner.config import build_config
    from voxbench.scale.cells import Cell, run_cell
    from voxbench.scale.ray_runners import ray_cell, warm_runners

    config = build_config({"benchmark": "smoke", "target": "local/oracle"})
    cell = Cell(config=config, path=root / "overhead-cell")
    run_cell(cell)  # now finished: every later call only finds it done
    task, runner = ray.remote(ray_cell), warm_runners(ray)[0]
    calls = (
        lambda: run_cell(cell),
        lambda: ray.get(task.remote(cell, None, {}, False)),
        lambda: ray.get(runner.run.remote(cell, False, None, {})),
    )
    out = []
    for call in calls:
        call()  # warm: a worker started, the cell's modules imported
        start = time.perf_counter()
        for _ in range(tries):
            call()
        out.append((time.perf_counter() - start) / tries)
    return out[0], out[1], out[2]


def _cold(
    repeats: int, concurrency: int, base_url: str, root: Path, artifacts: str
) -> tuple[float, float]:
    """Wall seconds of the local executor and of a Ray executor that starts and stops its
    own Ray (no Ray may be running yet)."""
    from voxbench.scale.executors import LocalExecutor
    from voxbench.scale.ray_executor import RayExecutor

    local, _ = _measure(LocalExecutor(), repeats, concurrency, base_url, root)
    ray = RayExecutor(num_cpus=os.cpu_count() or 2, artifacts=artifacts)
    cold, _ = _measure(ray, repeats, concurrency, base_url, root)
    return local, cold


def _start_ray() -> tuple[float, float]:
    """Seconds to start a local Ray, then its warm runners (each answering once)."""
    import ray

    from voxbench.scale.ray_executor import local_ray_options
    from voxbench.scale.ray_runners import warm_runners

    start = time.perf_counter()
    ray.init(**local_ray_options(os.cpu_count() or 2))  # as the executor starts its own
    init = time.perf_counter() - start
    start = time.perf_counter()
    ray.get([r.__ray_ready__.remote() for r in warm_runners(ray)])
    return init, time.perf_counter() - start


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


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
    parser.add_argument(
        "--ray-artifacts",
        default="shared",
        help="shared (workers write the run directories) or return (the driver writes the "
        "files each cell returns)",
    )
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-fake")
    import ray

    from voxbench.scale.executors import LocalExecutor
    from voxbench.scale.ray_executor import RayExecutor

    concurrency = [int(x) for x in args.concurrency.split(",")]
    proc, base_url = _start_fake(args.latency_ms)
    latency = args.latency_ms / 1000
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            print(f"smoke × {args.repeats} repeats, fake endpoint latency {args.latency_ms:g} ms, "
                  f"{os.cpu_count()} cores, Ray artifacts {args.ray_artifacts}; {_load()}")  # fmt: skip
            c = max(concurrency)
            t_local, t_cold = _cold(args.repeats, c, base_url, root, args.ray_artifacts)
            print(f"cold, C={c} (Ray started and stopped by the executor, in the wall): local "
                  f"{t_local:.2f} s, ray {t_cold:.2f} s, ray ÷ local {t_local / t_cold:.2f} "
                  f"(runs/s); {_load()}")  # fmt: skip
            init, warm = _start_ray()
            print(f"start-up: ray.init {init:.2f} s, warm runners {warm:.2f} s")
            local, remote = LocalExecutor(), RayExecutor(artifacts=args.ray_artifacts)
            print(f"steady state (Ray up, runners warm):\n{'C':>3} {'executor':>8} {'wall s':>7} "
                  f"{'runs/s':>7} {'ideal':>7} {'ratio':>6} {'ray÷local':>9}  load")  # fmt: skip
            for c in concurrency:
                rates = {}
                for executor in (local, remote):
                    elapsed, requests = _measure(executor, args.repeats, c, base_url, root)
                    ideal = min(c, args.repeats) / (requests * latency)
                    rates[executor.name] = rate = args.repeats / elapsed
                    versus = f"{rate / rates['local']:>9.2f}" if executor is remote else " " * 9
                    print(f"{c:>3} {executor.name:>8} {elapsed:>7.2f} {rate:>7.3f} "
                          f"{ideal:>7.3f} {rate / ideal:>6.2f} {versus}  {_load()}")  # fmt: skip
            if args.cpu_bound:
                print("CPU-bound cells: audio runs of the oracle on smoke (eSpeak NG user, "
                      f"{args.heard_asr} on the agent channel), wall s")  # fmt: skip
                print(f"{'runs':>4} {'local':>7} {'ray':>7} {'ray/local':>9}  load")
                for k in (int(x) for x in args.cpu_bound.split(",")):
                    t_local = _measure_cpu_bound(local, k, root, args.heard_asr)
                    t_ray = _measure_cpu_bound(remote, k, root, args.heard_asr)
                    print(f"{k:>4} {t_local:>7.2f} {t_ray:>7.2f} {t_ray / t_local:>9.2f}  "
                          f"{_load()}")  # fmt: skip
            here, task, runner = _ray_overhead(args.overhead_tries, root)
            print(f"one finished cell in process: {here * 1000:.1f} ms; as a Ray task: "
                  f"{task * 1000:.1f} ms; on a warm runner: {runner * 1000:.1f} ms")  # fmt: skip
            ray.shutdown()
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
