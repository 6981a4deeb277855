"""How exactly does a run measure first-audio latency through a realtime adapter?

For a few injected latencies, runs the smoke benchmark's turns through each realtime
adapter (OpenAI Realtime, Gemini Live, Ultravox) against its fake websocket server, which
holds back the first audio chunk of every answer by exactly that latency after the
response's trigger (``response.create``, ``clientContent``, ``user_text_message``). Prints
the distribution of ``first_audio_latency - injected`` (analysis.json) in ms (what the
measurement adds: loopback transport, JSON and base64 decoding, the runner's stamping), and
the same against the server's own trigger-to-first-chunk time. Target: within 5 ms.

    python bench/realtime_latency.py [--latencies 0,50,150,300,600] [--runs 2]
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
from voxbench.testing.gemini_live import FakeGeminiLiveServer
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.scripts import ListScript, Reply
from voxbench.testing.ultravox import FakeUltravoxServer

TARGETS = {
    "openai-realtime/gpt-realtime": (FakeOpenAIRealtimeServer, "OPENAI_API_KEY"),
    "gemini-live/gemini-3.1-flash-live-preview": (FakeGeminiLiveServer, "GEMINI_API_KEY"),
    "ultravox/ultravox-v0.7": (FakeUltravoxServer, "ULTRAVOX_API_KEY"),
}
REPLY = Reply(text="Doors open at 8:30 in the morning, at the Lighthouse Lobby.")


async def measure(
    target: str, latency_ms: float, runs: int, root: Path
) -> tuple[list[float], list[float]]:
    """Per turn: measured − injected, and measured − the server's own delay (ms)."""
    server_cls, key_var = TARGETS[target]
    os.environ.setdefault(key_var, "bench-dummy-key")
    vs_injected: list[float] = []
    vs_server: list[float] = []
    for i in range(runs):
        # Spoken answers only: one response per turn, so first audio waits exactly once.
        script = ListScript([REPLY] * 10)
        async with server_cls(script, ttfb_ms=latency_ms, chunk_ms=1) as server:
            config = RunConfig(
                benchmark="smoke",
                target=target,
                base_url=server.url,
                runs_dir=root / f"{target.replace('/', '_')}_{latency_ms}_{i}",
            )
            path = await launch.run_conversation(config)
            server_delays = list(server.first_audio_delays)
        turns = analyse_run(path).turns
        for turn, served in zip(turns, server_delays, strict=False):
            measured = turn.first_audio_latency
            if measured is not None:
                vs_injected.append(measured * 1000 - latency_ms)
                vs_server.append((measured - served) * 1000)
    return vs_injected, vs_server


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies", default="0,50,150,300,600")
    parser.add_argument("--runs", type=int, default=2, help="smoke runs (10 turns each) per cell")
    args = parser.parse_args()
    latencies = [float(x) for x in args.latencies.split(",")]
    print("first-audio latency measured through the adapter minus the injected latency (ms)")
    with tempfile.TemporaryDirectory(prefix="voxbench-rt-latency-") as tmp:
        for target in TARGETS:
            everything: list[float] = []
            against_server: list[float] = []
            for latency in latencies:
                errors, served = await measure(target, latency, args.runs, Path(tmp))
                everything += errors
                against_server += served
                print(f"{target:42s} injected {latency:6.1f} ms  {describe_errors(errors)}")
            print(f"{target:42s} all latencies        {describe_errors(everything)}")
            print(f"{target:42s} vs server's own delay {describe_errors(against_server)}")


if __name__ == "__main__":
    asyncio.run(main())
