"""How exactly does an audio run measure latency? Print the error distributions.

Runs the smoke benchmark in audio mode, in real time, against the fake OpenAI Realtime
server with injected time-to-first-audio values, and compares:

- first-audio latency from the runner's stamps (``analysis.json``'s ``first_audio_latency``) with
  the latency the fake server injected (target: within 5 ms);
- voice-to-voice latency measured on ``conversation.wav`` (``voxbench analyze``) with the
  expected value: trailing silence of the user's clip after its speech + the injected latency
  (the fake speaks with eSpeak NG, whose audio starts with its speech; target: within 20 ms).

Usage: python bench/audio_latency_accuracy.py [--latencies 200,600] [--turns 0-4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

from _errors import describe_errors

from voxbench.analysis import analyse_run
from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.rundir import RunDirectory
from voxbench.providers.speech import get_tts
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.scripts import GoldenScript


def espeak_voice(text: str, sample_rate: int) -> bytes:
    """The fake answers in real speech, so VAD hears its onset as a listener would."""
    return get_tts("local/espeak").synthesize(text).resampled(sample_rate).to_pcm16()


async def measure(latency_ms: float, turns: str, root: Path) -> tuple[list[float], list[float]]:
    bench = load_benchmark("smoke")
    fake = FakeOpenAIRealtimeServer(GoldenScript(bench), ttfb_ms=latency_ms, voice=espeak_voice)
    async with fake as server:
        config = RunConfig(
            benchmark="smoke",
            target="openai-realtime/gpt-realtime",
            base_url=server.url,
            mode="audio",
            clock="real",
            heard_asr="none",
            only_turns=turns,
            inter_turn_gap=0.3,
            runs_dir=root / f"{latency_ms:g}",
        )
        path = await run_conversation(config)
        server_side = list(server.first_audio_delays)  # one per turn: each answers once in audio
    records = RunDirectory.open_existing(path).turns()
    report = await asyncio.to_thread(analyse_run, path)
    first_audio_errors = [
        (m.first_audio_latency - latency_ms / 1000) * 1000
        for r, m in zip(records, report.turns, strict=True)
        if m.first_audio_latency is not None and not r.tool_calls
    ]
    own = [
        (m.first_audio_latency - delay) * 1000
        for r, m, delay in zip(records, report.turns, server_side, strict=False)
        if m.first_audio_latency is not None and not r.tool_calls
    ]
    print(
        f"injected {latency_ms:g} ms · runner's own share (vs the fake's measured delay): "
        + describe_errors(own)
    )
    v2v_errors = []
    for rec, timing in zip(records, report.turns, strict=True):
        user_end = rec.timings.user_end
        if (
            rec.tool_calls
            or timing.voice_to_voice is None
            or user_end is None
            or timing.user_speech_end is None
        ):
            continue  # a tool round adds the runner's own time; compare plain answers
        # The fake answers ``latency`` after the commit at the end of the clip, and its speech
        # starts within a few ms of its first sample. So the agent should be heard (clip's
        # trailing silence + latency) after the user's speech ended.
        expected = (user_end - timing.user_speech_end) + latency_ms / 1000
        v2v_errors.append((timing.voice_to_voice - expected) * 1000)
    return first_audio_errors, v2v_errors


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latencies", default="200,600")
    parser.add_argument("--turns", default="0,3,7,8")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "fake-key-for-the-fake-server")
    all_fa: list[float] = []
    all_v2v: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for latency in (float(x) for x in args.latencies.split(",")):
            fa, v2v = await measure(latency, args.turns, Path(tmp))
            print(f"injected {latency:g} ms · first-audio latency error: {describe_errors(fa)}")
            print(f"injected {latency:g} ms · WAV voice-to-voice error: {describe_errors(v2v, 20)}")
            all_fa += fa
            all_v2v += v2v
    print(f"all · first-audio latency error: {describe_errors(all_fa)}")
    print(f"all · WAV voice-to-voice error: {describe_errors(all_v2v, 20)}")


if __name__ == "__main__":
    asyncio.run(main())
