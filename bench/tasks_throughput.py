"""Throughput of ``voxbench tasks`` against a fake OpenAI-compatible endpoint.

A minimal endpoint (its own process, so its CPU is not the client's) answers every
``/chat/completions`` after L ms. At each (C, L) point the script runs, on the same records:

- a minimal client that keeps exactly C requests in flight (keep-alive httpx clients of 8
  connections each, C workers, one pre-built request body): what the endpoint allows at all;
- ``run_tasks`` with ``max_concurrency: C``: the whole path — manifest, audio hashing for the
  cache key, decoding, soxr resampling 22.05 → 16 kHz, WAV + base64 encoding, the cache,
  retries policy, WER scoring, records.jsonl, scores with bootstrap intervals, report.

It prints throughput / ideal (C / L) and throughput / the minimal client, and each client's
CPU time per record: on its event loop's thread (``time.thread_time``), and in all (``total``:
every thread of the process plus, for ours, the worker processes that prepare clips and score
replies; the endpoint's CPU is in neither). On a busy machine the throughputs follow the share
of the cores each run got, while the CPU per record still says where a CPU-bound client would
stand (``minimal cpu / ours cpu``). Figures, not assertions.

    python bench/tasks_throughput.py [--points 8:200,32:200,64:50,256:50] [--records N]
        [--pool auto,on,off]

``--records`` fixes N at every point (default: about ``--seconds`` of the ideal rate);
``--pool`` runs ours once per mode given: ``auto`` (the engine's own threshold,
``POOL_MIN_RECORDS``), ``on`` (worker processes whatever N) or ``off`` (none).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPLY = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "a b c d"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    }
).encode()


async def _serve(latency_s: float) -> None:
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                await asyncio.sleep(latency_s)
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: " + str(len(REPLY)).encode() + b"\r\n\r\n" + REPLY
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


def _make_dataset(folder: Path, records: int) -> None:
    import numpy as np

    from voxbench.audio.wav import Audio, write_wav

    folder.mkdir(parents=True, exist_ok=True)
    clips = 50
    for i in range(clips):
        t = np.arange(22050) / 22050
        write_wav(folder / f"c{i}.wav", Audio(0.1 * np.sin(2 * np.pi * (150 + 7 * i) * t), 22050))
    with (folder / "manifest.jsonl").open("w") as f:
        for i in range(records):
            f.write(
                json.dumps({"id": f"r{i}", "audio": f"c{i % clips}.wav", "reference": "a b c d e"})
                + "\n"
            )


async def _minimal(url: str, concurrency: int, records: int, wav: bytes) -> tuple[float, float]:
    import httpx

    body = json.dumps(
        {
            "model": "q",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Transcribe."},
                        {
                            "type": "input_audio",
                            "input_audio": {
                                "data": base64.b64encode(wav).decode(),
                                "format": "wav",
                            },
                        },
                    ],
                }
            ],
        }
    ).encode()
    # Keep-alive clients of 8 connections each: one httpx pool of C connections is O(C) per
    # request (see voxbench.tasks.engine.work_queue.client_shards); the baseline gets the same fix.
    per = 8
    limits = httpx.Limits(max_connections=per, max_keepalive_connections=per)
    clients = [httpx.AsyncClient(limits=limits, timeout=60) for _ in range(-(-concurrency // per))]
    remaining = records

    async def worker(slot: int) -> None:
        nonlocal remaining
        client = clients[slot // per]
        while remaining > 0:
            remaining -= 1
            response = await client.post(
                url + "/chat/completions",
                content=body,
                headers={"content-type": "application/json"},
            )
            response.json()

    started, cpu, total = time.perf_counter(), time.thread_time(), _cpu()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    rate = records / (time.perf_counter() - started)
    cpu_ms = 1000 * (time.thread_time() - cpu) / records
    total_ms = 1000 * (_cpu() - total) / records
    for client in clients:
        await client.aclose()
    return rate, cpu_ms, total_ms


def _cpu() -> float:
    """CPU seconds of this process (every thread) and of its children that have ended (the
    engine's worker processes, ended by the end of a run; the endpoint runs till later)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _ours(
    url: str, concurrency: int, root: Path, data: Path, pool: str = "auto"
) -> tuple[float, float, float, int]:
    from voxbench.tasks.config import parse_config
    from voxbench.tasks.engine import work_queue
    from voxbench.tasks.run import run_tasks

    default = getattr(work_queue, "_BENCH_POOL_DEFAULT", work_queue.POOL_MIN_RECORDS)
    work_queue._BENCH_POOL_DEFAULT = default  # type: ignore[attr-defined]
    work_queue.POOL_MIN_RECORDS = {"auto": default, "on": 0, "off": 10**12}[pool]

    tasks = root / "tasks" / "bench"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "bench_asr.yaml").write_text(
        f"dataset: {{path: {data}}}\nprompt: {{user: 'Transcribe clip {{id}}.'}}\nmetrics: [wer]\n"
    )
    text = (
        f"models: [{{name: q, model: openai-compatible/q, base_url: '{url}', max_concurrency: {concurrency}, retries: 0}}]\n"
        f"tasks: [bench_asr]\ntasks_dirs: ['{root / 'tasks'}']\noutput_dir: '{root / 'runs' / str(time.time_ns())}'\n"
    )
    started, cpu, total = time.perf_counter(), time.thread_time(), _cpu()
    result = run_tasks(parse_config(text, file=None), text)
    seconds = time.perf_counter() - started
    answered = max(1, result.scores["tasks"]["bench_asr"]["q"]["answered"])
    cpu_ms = 1000 * (time.thread_time() - cpu) / answered
    total_ms = 1000 * (_cpu() - total) / answered
    errors = result.scores["tasks"]["bench_asr"]["q"]["errors"]
    return answered / seconds, cpu_ms, total_ms, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="8:200,32:200,64:50,256:50", help="C:L_ms,...")
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="about how long each client runs"
    )
    parser.add_argument("--records", type=int, default=None, help="N at every point")
    parser.add_argument("--pool", default="auto", help="auto,on,off: worker-process modes to run")
    parser.add_argument("--serve", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(_serve(args.serve))
        return
    points = [tuple(int(x) for x in p.split(":")) for p in args.points.split(",")]
    print(
        f"{'C':>4} {'L ms':>5} {'N':>5} {'ideal/s':>8} {'minimal/s':>10} {'ours/s':>8} {'ours/ideal':>10} {'ours/minimal':>12}"
        f" {'min cpu ms':>10} {'our cpu ms':>10} {'cpu ratio':>9} {'min total':>9} {'our total':>9} {'ratio':>5} errors pool"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for concurrency, latency_ms in points:
            server = subprocess.Popen(
                [sys.executable, __file__, "--serve", str(latency_ms / 1000)],
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"  # type: ignore[union-attr]
                ideal = concurrency / (latency_ms / 1000)
                records = args.records or int(min(6000, max(200, ideal * args.seconds)))
                data = root / f"data_{concurrency}_{latency_ms}"
                _make_dataset(data, records)
                wav = (data / "c0.wav").read_bytes()
                minimal, minimal_cpu, minimal_total = asyncio.run(
                    _minimal(url, concurrency, records, wav)
                )
                for mode in args.pool.split(","):
                    ours, ours_cpu, ours_total, errors = _ours(url, concurrency, root, data, mode)
                    print(
                        f"{concurrency:>4} {latency_ms:>5} {records:>5} {ideal:>8.0f} {minimal:>10.1f} {ours:>8.1f} "
                        f"{ours / ideal:>10.2f} {ours / minimal:>12.2f} {minimal_cpu:>10.3f} {ours_cpu:>10.3f}"
                        f" {minimal_cpu / ours_cpu:>9.2f} {minimal_total:>9.3f} {ours_total:>9.3f}"
                        f" {minimal_total / ours_total:>5.2f} {errors:>6} {mode}",
                        flush=True,
                    )
            finally:
                server.terminate()
                server.wait()


if __name__ == "__main__":
    main()
