"""How exactly does a run measure an agent's time to first byte over ``websocket/<url>``?

For a few injected latencies, runs the smoke benchmark's turns through the voxbench agent
protocol against the fake agent (``voxbench.testing.agent_ws``), which holds back the first
message of every answer by exactly that latency after its trigger (``user.turn_end`` or the
last ``tool.result``). Prints the distribution of ``first_event - user_end`` (the run's own
stamps) minus the injected latency, in ms, for the first response of each turn — what the
measurement adds: loopback transport, JSON decoding, the runner's stamping. Target: within
5 ms.

    python bench/agent_latency.py [--latencies 0,50,150,300,600] [--runs 2]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from _errors import describe_errors

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.rundir import RunDirectory
from voxbench.runner import launch
from voxbench.runner.config import RunConfig
from voxbench.testing.agent_ws import FakeAgentServer
from voxbench.testing.scripts import GoldenScript


async def measure(latency_ms: float, runs: int, root: Path) -> list[float]:
    """Per turn: measured time to first byte − injected (ms)."""
    errors: list[float] = []
    smoke = load_benchmark("smoke")
    for i in range(runs):
        async with FakeAgentServer(GoldenScript(smoke), ttfb_ms=latency_ms) as server:
            config = RunConfig(
                benchmark="smoke",
                target=f"websocket/{server.url}",
                runs_dir=root / f"{latency_ms}_{i}",
            )
            path = await launch.run_conversation(config)
        for record in RunDirectory.open_existing(path).turns():
            timings = record.timings
            if timings.first_event is not None and timings.user_end is not None:
                errors.append((timings.first_event - timings.user_end) * 1000 - latency_ms)
    return errors


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies", default="0,50,150,300,600")
    parser.add_argument("--runs", type=int, default=2, help="smoke runs (10 turns each) per cell")
    args = parser.parse_args()
    print("time to first byte through websocket/<url> minus the injected latency (ms)")
    everything: list[float] = []
    with tempfile.TemporaryDirectory(prefix="voxbench-agent-latency-") as tmp:
        for latency in (float(x) for x in args.latencies.split(",")):
            errors = await measure(latency, args.runs, Path(tmp))
            everything += errors
            print(f"injected {latency:6.1f} ms  {describe_errors(errors)}")
    print(f"all latencies        {describe_errors(everything)}")


if __name__ == "__main__":
    asyncio.run(main())
