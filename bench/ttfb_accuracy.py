"""How exactly does a run measure time to first token through a text chat adapter?

For a few injected latencies, runs ~20 turns of the smoke benchmark through each HTTP
adapter against its fake server, whose first content chunk is held back by exactly that
latency, and prints the distribution of ``ttft - injected`` (analysis.json) (the
measurement's overhead and error). Target: within 5 ms.

    python bench/ttfb_accuracy.py [--latencies 0,20,50,100,250] [--runs 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

from _errors import describe_errors

from voxbench.analysis import analyse_run
from voxbench.runner import launch
from voxbench.runner.config import RunConfig
from voxbench.testing import (
    FakeAnthropicServer,
    FakeGeminiServer,
    FakeOpenAIServer,
    ListScript,
    Reply,
)

TARGETS = {
    "openai/gpt-4o-mini": (FakeOpenAIServer, "OPENAI_API_KEY"),
    "anthropic/claude-sonnet-4-5": (FakeAnthropicServer, "ANTHROPIC_API_KEY"),
    "gemini/gemini-2.5-flash": (FakeGeminiServer, "GEMINI_API_KEY"),
}
REPLY = Reply(text="Doors open at 8:30 in the morning, at the Lighthouse Lobby.")


async def measure(target: str, latency_ms: float, runs: int, root: Path) -> list[float]:
    """``ttft - latency`` in ms for every turn of ``runs`` smoke runs."""
    server_cls, key_var = TARGETS[target]
    os.environ.setdefault(key_var, "bench-dummy-key")
    errors: list[float] = []
    for i in range(runs):
        # Text-only replies: one request per turn, so the first token waits exactly once.
        script = ListScript([REPLY] * 10)
        async with server_cls(script, ttfb_ms=latency_ms, chunk_ms=2) as server:
            config = RunConfig(
                benchmark="smoke",
                target=target,
                base_url=server.url,
                runs_dir=root / f"{target.replace('/', '_')}_{latency_ms}_{i}",
            )
            path = await launch.run_conversation(config)
        for turn in analyse_run(path).turns:
            if turn.ttft is not None:
                errors.append(turn.ttft * 1000 - latency_ms)
    return errors


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies", default="0,20,50,100,250")
    parser.add_argument("--runs", type=int, default=2, help="smoke runs (10 turns each) per cell")
    args = parser.parse_args()
    latencies = [float(x) for x in args.latencies.split(",")]
    print("TTFT measured through the adapter minus the latency the fake server injected (ms)")
    with tempfile.TemporaryDirectory(prefix="voxbench-ttfb-") as tmp:
        for target in TARGETS:
            everything: list[float] = []
            for latency in latencies:
                errors = await measure(target, latency, args.runs, Path(tmp))
                everything += errors
                print(f"{target:30s} injected {latency:6.1f} ms  {describe_errors(errors)}")
            print(f"{target:30s} all latencies        {describe_errors(everything)}")


if __name__ == "__main__":
    asyncio.run(main())
