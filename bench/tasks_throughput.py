"""Throughput of ``voxbench tasks`` against a fake OpenAI-compatible endpoint.

A minimal endpoint (its own process, so its CPU is not the client's) answers every
``/chat/completions`` after L ms and counts the most requests it had in flight at once
(``GET /stats``). At each (C, L) point the script runs, on the same records (1 s 22.05 kHz
clips, varied references):

- the leanest client: C kept-alive HTTP/1.1 connections on asyncio streams, one pre-built
  request body, the reply read by its content-length — what the endpoint allows at all
  (``--httpx`` adds the older baseline: keep-alive httpx clients of 8 connections each);
- ``run_tasks`` with ``max_concurrency: C``: the whole path — manifest, audio hashing for the
  cache key, decoding, soxr resampling 22.05 → 16 kHz, WAV + base64 encoding, the cache,
  retries policy, WER scoring, records.jsonl, scores with intervals, report.

It prints each rate, ours ÷ lean, the fake's peak in flight for each, and each client's CPU
time per record (ms): on its event loop's thread (``time.thread_time``), and in all (``tot``:
every thread of the process plus, for ours, the worker processes that prepare clips and score
replies; the endpoint's CPU is in neither). On a busy machine the throughputs follow the share
of the cores each run got, while the CPU per record still says where a CPU-bound client would
stand. Figures, not assertions.

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
    stats = {"in_flight": 0, "peak": 0, "requests": 0}

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if head.startswith(b"GET /stats"):  # the most in flight since the last read
                    body = json.dumps(stats).encode()
                    stats.update(peak=0, requests=0)
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-length: "
                        + str(len(body)).encode()
                        + b"\r\n\r\n"
                        + body
                    )
                    await writer.drain()
                    continue
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                stats["requests"] += 1
                stats["in_flight"] += 1
                stats["peak"] = max(stats["peak"], stats["in_flight"])
                await asyncio.sleep(latency_s)
                stats["in_flight"] -= 1
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
        for i in range(records):  # varied references: none is normalised from a cache
            words = " ".join(WORDS[(i * 7 + k * 13) % len(WORDS)] for k in range(5 + i % 4))
            f.write(
                json.dumps({"id": f"r{i}", "audio": f"c{i % clips}.wav", "reference": words}) + "\n"
            )


WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "seven",
    "bright",
    "stars",
    "shine",
    "above",
    "quiet",
    "harbour",
    "towns",
    "where",
    "fishermen",
    "mend",
    "their",
    "nets",
    "before",
    "dawn",
]


def _stats(url: str) -> dict[str, int]:
    """The fake's counters since the last read (the most requests it had in flight at once)."""
    import urllib.request

    origin = url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(origin + "/stats", timeout=10) as response:  # noqa: S310
        return dict(json.loads(response.read()))


async def _lean(
    url: str, concurrency: int, records: int, body: bytes
) -> tuple[float, float, float]:
    """The leanest client: C kept-alive HTTP/1.1 connections on asyncio streams, each sending
    a pre-built request and reading the reply by its content-length."""
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.split(":")
    path = "/" + url.split("//", 1)[1].split("/", 1)[1] + "/chat/completions"
    request = (
        f"POST {path} HTTP/1.1\r\nhost: {host_port}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body
    remaining = records

    async def worker() -> None:
        nonlocal remaining
        reader, writer = await asyncio.open_connection(host, int(port))
        while remaining > 0:
            remaining -= 1
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            size = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
            json.loads(await reader.readexactly(size))
        writer.close()

    started, cpu, total = time.perf_counter(), time.thread_time(), _cpu()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    rate = records / (time.perf_counter() - started)
    return (
        rate,
        1000 * (time.thread_time() - cpu) / records,
        1000 * (_cpu() - total) / records,
    )


def _body(wav: bytes) -> bytes:
    """One pre-built request body (the baselines send it for every record)."""
    return json.dumps(
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


async def _minimal(
    url: str, concurrency: int, records: int, body: bytes
) -> tuple[float, float, float]:
    """A minimal httpx client keeping C requests in flight."""
    import httpx

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
    parser.add_argument("--httpx", action="store_true", help="also run the httpx baseline")
    parser.add_argument("--pool", default="auto", help="auto,on,off: worker-process modes to run")
    parser.add_argument("--serve", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(_serve(args.serve))
        return
    points = [tuple(int(x) for x in p.split(":")) for p in args.points.split(",")]
    print(
        f"{'C':>4} {'L ms':>5} {'N':>5} {'ideal/s':>8} {'lean/s':>7} {'httpx/s':>8} {'ours/s':>7}"
        f" {'ours/lean':>9} {'peak lean':>9} {'peak ours':>9} {'lean cpu':>8} {'our cpu':>8}"
        f" {'lean tot':>8} {'our tot':>8} {'errors':>6} pool"
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
                body = _body((data / "c0.wav").read_bytes())
                _stats(url)
                lean, lean_cpu, lean_total = asyncio.run(_lean(url, concurrency, records, body))
                lean_peak = _stats(url)["peak"]
                httpx_rate = 0.0
                if args.httpx:
                    httpx_rate = asyncio.run(_minimal(url, concurrency, records, body))[0]
                    _stats(url)
                for mode in args.pool.split(","):
                    ours, ours_cpu, ours_total, errors = _ours(url, concurrency, root, data, mode)
                    peak = _stats(url)["peak"]
                    print(
                        f"{concurrency:>4} {latency_ms:>5} {records:>5} {ideal:>8.0f} {lean:>7.1f}"
                        f" {httpx_rate:>8.1f} {ours:>7.1f} {ours / lean:>9.2f} {lean_peak:>9}"
                        f" {peak:>9} {lean_cpu:>8.3f} {ours_cpu:>8.3f} {lean_total:>8.3f}"
                        f" {ours_total:>8.3f} {errors:>6} {mode}",
                        flush=True,
                    )
            finally:
                server.terminate()
                server.wait()


if __name__ == "__main__":
    main()
