"""What does judging a run cost? Print times, calls and prompt sizes.

Runs the smoke benchmark with the oracle (and the baseline, whose failures cascade), then
judges it:

- deterministically (realignment and cascade replay included), several times, for the
  per-run time of the judge that always runs;
- with an LLM judge behind the fake OpenAI-compatible server, cold (every turn asked) and
  warm (everything from the cache), for the calls made and the time spent outside the
  model;
- the judge's prompt sizes per turn (characters and a rough token count), the figure that
  sets the real cost of an LLM judge (the system part, identical for every turn, is what
  provider prompt caching discounts).

Usage: python bench/judging_cost.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.rundir import RunDirectory
from voxbench.judging import llm_judge
from voxbench.judging.deterministic import judge_deterministic
from voxbench.judging.run import JudgeOptions, judge_run
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.testing import FakeOpenAIServer, Reply, Script


class PassEverything(Script):
    """A fake judge that passes every asked dimension (the cost is what is measured)."""

    def __init__(self) -> None:
        self.prompt_chars: list[int] = []

    def reply(self, conversation):
        import json
        import re

        text = conversation[-1].text
        self.prompt_chars.append(len(text))
        block = re.search(r"<turn_under_review>\n(.*)\n</turn_under_review>", text, re.S)
        dims = json.loads(block.group(1))["grade"] if block else []
        verdicts = [
            {"dimension": d, "passed": True, "reasoning": "ok", "evidence": [], "cause": None}
            for d in dims
        ]
        return Reply(
            text=json.dumps(
                {"verdicts": verdicts, "missing_call_cause": None, "missing_call_reasoning": ""}
            )
        )


async def main(repeat: int) -> None:
    llm_judge.BACKOFF_BASE = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["VOXBENCH_CACHE_DIR"] = str(Path(tmp) / "cache")
        benchmark = load_benchmark("smoke")
        path = await run_conversation(
            RunConfig(benchmark="smoke", target="local/oracle", runs_dir=Path(tmp) / "runs")
        )
        records = RunDirectory.open_existing(path).turns()

        baseline = await run_conversation(
            RunConfig(benchmark="smoke", target="local/baseline", runs_dir=Path(tmp) / "runs")
        )
        for label, run in (("oracle", path), ("baseline, with cascades", baseline)):
            turns = RunDirectory.open_existing(run).turns()
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                result = judge_deterministic(benchmark, turns)
                times.append(time.perf_counter() - start)
            print(
                f"deterministic judge ({label}), {len(turns)} turns, "
                f"{result.totals.state_failures_absorbed} state failures absorbed: median "
                f"{statistics.median(times) * 1000:.1f} ms per run ({repeat} runs)"
            )

        script = PassEverything()
        async with FakeOpenAIServer(script) as server:
            options = JudgeOptions(judge="openai-compatible/fake", base_url=server.url)
            for label in ("cold", "warm"):
                before = len(server.requests)
                start = time.perf_counter()
                judged = await judge_run(benchmark, records, options=options)
                elapsed = time.perf_counter() - start
                print(
                    f"LLM judge ({label} cache): {len(server.requests) - before} calls, "
                    f"{judged.llm.from_cache} turns from cache, {elapsed * 1000:.0f} ms"
                )
        system_chars = len(benchmark.render_system_prompt())
        chars = script.prompt_chars
        print(
            f"judge prompt: system part {system_chars} chars (~{system_chars // 4} tokens, "
            f"identical every turn); per-turn part min/median/max "
            f"{min(chars)}/{int(statistics.median(chars))}/{max(chars)} chars "
            f"(~{int(statistics.median(chars)) // 4} tokens median)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    asyncio.run(main(parser.parse_args().repeat))
