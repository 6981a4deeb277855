"""Throughput of ``voxbench tasks`` against a fake OpenAI-compatible endpoint.

A minimal endpoint (its own process, so its CPU is not the client's) answers every
``/chat/completions`` after L ms and reports (``GET /stats``) the most requests it had in
flight at once and its idle share: the part of its C slots left empty between the first
request and the last answer. At each (C, L) point and dataset shape the script runs, on the
same records (50 distinct 16 kHz clips, varied references):

- the minimal client (``min``), the issue 33 anchor: what a user writes to keep C requests
  in flight, httpx keep-alive clients (of 8 connections each: one pool of C costs O(C) a
  request) posting one pre-built body (the first clip) and parsing each reply; its rates
  match the issue's minimal-client figures (~1,000/s at C=256, L=50 ms). ``--no-minimal``
  skips it (at high C it is the slowest run);
- the leanest client, a floor stricter than any real client: C kept-alive HTTP/1.1
  connections on raw asyncio streams, the same pre-built body, the reply read by its
  content-length — what the endpoint allows at all; and that client sending the dataset's own
  clips (``own``: the 50 distinct clips' bodies, built before its clock starts, record i
  carrying clip i % 50 as in the dataset: for 20 s clips 42 MB of bodies, not one), a
  client doing no work per record on the real data;
- ``run_tasks`` with ``max_concurrency: C``: the whole path — opening the dataset, reading
  each clip, its WAV (passed through when the source already is 16 kHz mono PCM16, else
  decoded, resampled and encoded), hashing for the cache key, the request body, the cache,
  retries policy, WER scoring, records.jsonl, scores with intervals, report.

The shapes (``--shapes``) are those users have: ``parquet-wav`` and ``parquet-flac`` (the
Hub's layout, audio bytes embedded), ``hf-disk`` (``save_to_disk``; needs ``datasets`` to
write it), ``wav`` (a manifest beside WAV files), ``long`` (20 s clips in parquet) and
``wav22k`` (1 s 22.05 kHz files, resampled: the older synthetic set).

It prints each rate, ours ÷ min, ours ÷ lean and ours ÷ own (the whole run: opening the dataset and
planning before the first request, and after the last answer the rows read back, scores,
report and store index), each client's peak in flight and idle share at the fake,
``infer/lean`` (ours from its first request to its last answer, ``run.json``'s
``inference.requests_per_s``, ÷ lean), and each client's CPU time per record (ms): on its
event loop's thread (``time.thread_time``), and in all (``tot``: every thread of the process
plus, for ours, the worker processes), and the engine's fixed costs: ``start s`` from calling
``run_tasks`` to its first request (config, plan, dataset listing, run directory) and ``tail
s`` from its last answer to its return. ``lean fake`` and ``our fake`` are the endpoint's own
CPU per request (ms) while each client ran, and ``lean cores`` / ``our cores`` the share of the
machine's cores that client and the endpoint kept busy together ((client + endpoint CPU per
record) × rate ÷ cores): near 1 the machine, not a client's waiting, set the rate, and the
ratio is about (lean tot + lean fake) ÷ (our tot + our fake): what each record costs in CPU.
A small unprinted run first imports what any run imports, once per process, as the lean
client's imports come before its clock too (the CLI's start is ``bench/tasks_startup.py``'s
figure). On a busy machine the throughputs follow the
share of the cores each run got: compare the ratio measured in one run. Figures, not
assertions.

    python bench/tasks_throughput.py [--points 8:200,64:50,256:50] [--records N]
        [--shapes parquet-wav,...] [--pool auto,on,off] [--no-minimal]

``--records`` fixes N at every point (default: about ``--seconds`` of the ideal rate, at most
``MOST_RECORDS``);
``--pool`` runs ours once per mode given: ``auto`` (the engine's own threshold,
``POOL_MIN_RECORDS``), ``on`` (worker processes whatever N) or ``off`` (none).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime
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
    stats: dict[str, float] = {"in_flight": 0, "peak": 0, "requests": 0}
    clock = {"first": 0.0, "last": 0.0, "busy": 0.0, "at": 0.0, "first_wall": 0.0}
    loop = asyncio.get_running_loop()

    def moved(step: int) -> None:
        """Integrate in-flight requests over time (request-seconds) as the count moves."""
        now = loop.time()
        if stats["requests"] == 1 and step > 0 and not clock["first"]:
            clock.update(first=now, at=now, busy=0.0, first_wall=time.time())
        clock["busy"] += stats["in_flight"] * (now - clock["at"])
        clock["at"] = clock["last"] = now
        stats["in_flight"] += step

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if head.startswith(b"GET /stats"):  # the most in flight since the last read
                    seconds = clock["last"] - clock["first"]
                    body = json.dumps(
                        {**stats, "busy": clock["busy"], "seconds": seconds,
                         "first_wall": clock.get("first_wall", 0.0),
                         "cpu_s": time.process_time()}
                    ).encode()  # fmt: skip
                    stats.update(peak=0, requests=0)
                    clock.update(first=0.0, busy=0.0)
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
                moved(+1)
                stats["peak"] = max(stats["peak"], stats["in_flight"])
                await asyncio.sleep(latency_s)
                moved(-1)
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


SHAPES = {
    "parquet-wav": ("parquet", "WAV", 16000, 1.5),
    "parquet-flac": ("parquet", "FLAC", 16000, 1.5),
    "hf-disk": ("hf_disk", "WAV", 16000, 1.5),
    "wav": ("manifest", "WAV", 16000, 1.5),
    "long": ("parquet", "WAV", 16000, 20.0),
    "wav22k": ("manifest", "WAV", 22050, 1.0),
}
"""Dataset shapes: (format, audio encoding, sample rate, seconds a clip). ``long`` clips are
sent whole (under a task's 30 s); ``wav22k`` is resampled to 16 kHz (the older synthetic set)."""


MOST_RECORDS = 20_000
"""N at most by default (a run of ``--seconds`` at the ideal rate, 15,360 at (256, 50 ms)): ~1 GB
of parquet; the run's fixed start and tail (printed) weigh less the longer it runs."""
MOST_RECORDS_LONG = 6_000
"""N at most of 20 s clips by default: 3.8 GB of parquet."""


def _make_dataset(folder: Path, records: int, shape: str = "wav") -> tuple[str, list[bytes]]:
    """A dataset of ``records`` rows (50 distinct clips, record i has clip i % 50, varied
    references) in ``shape``: the task file's ``dataset:`` value and the 50 clips as the model
    gets them (16 kHz WAVs)."""
    import io

    import numpy as np
    import soundfile as sf

    from voxbench.audio.wav import Audio
    from voxbench.tasks.engine.prepare import wav_bytes

    kind, encoding, rate, seconds = SHAPES[shape]
    folder.mkdir(parents=True, exist_ok=True)
    clips = []
    for i in range(50):
        t = np.arange(int(rate * seconds)) / rate
        samples = (0.1 * np.sin(2 * np.pi * (150 + 7 * i) * t)).astype(np.float32)
        buffer = io.BytesIO()
        sf.write(buffer, samples, rate, format=encoding, subtype="PCM_16")
        clips.append(buffer.getvalue())
    sent = [
        wav_bytes(Audio(sf.read(io.BytesIO(clip), dtype="float32")[0], rate).resampled(16000))
        for clip in clips
    ]
    references = [
        " ".join(WORDS[(i * 7 + k * 13) % len(WORDS)] for k in range(5 + i % 4))
        for i in range(records)
    ]  # varied references: none is normalised from a cache
    if kind == "manifest":
        for i, clip in enumerate(clips):
            (folder / f"c{i}.wav").write_bytes(clip)
        with (folder / "manifest.jsonl").open("w") as f:
            for i in range(records):
                row = {"id": f"r{i}", "audio": f"c{i % 50}.wav", "reference": references[i]}
                f.write(json.dumps(row) + "\n")
        return f"{{path: '{folder}'}}", sent
    import pyarrow as pa

    table = pa.table(
        {
            "id": [f"r{i}" for i in range(records)],
            "audio": [{"bytes": clips[i % 50], "path": f"c{i % 50}.x"} for i in range(records)],
            "reference": references,
        }
    )
    if kind == "parquet":
        import pyarrow.parquet as pq

        (folder / "data").mkdir(exist_ok=True)
        pq.write_table(table, folder / "data" / "test-00000-of-00001.parquet", row_group_size=256)
    else:  # save_to_disk's layout, as ``datasets`` writes it
        import datasets

        datasets.disable_progress_bars()  # the table stays readable
        features = datasets.Features(
            {
                "id": datasets.Value("string"),
                "audio": datasets.Audio(decode=False),
                "reference": datasets.Value("string"),
            }
        )
        datasets.Dataset(table).cast(features).save_to_disk(str(folder))
    return f"{{path: '{folder}', format: {kind}}}", sent


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


def _stats(url: str) -> dict[str, float]:
    """The fake's counters since the last read (the most requests it had in flight at once),
    and its process's CPU seconds so far (``cpu_s``)."""
    import urllib.request

    origin = url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(origin + "/stats", timeout=10) as response:  # noqa: S310
        return dict(json.loads(response.read()))


def _fake_ms(before: dict[str, float], after: dict[str, float], records: int) -> float:
    """The fake's CPU per request (ms) between two ``_stats`` reads."""
    return 1000 * (after["cpu_s"] - before["cpu_s"]) / max(1, records)


def _bound(client_ms: float, fake_ms: float, rate: float) -> float:
    """The share of the machine's cores a client and the fake kept busy together: near 1,
    the run was bound by CPU, and the clients' rates by their CPU per record."""
    return (client_ms + fake_ms) * rate / 1000 / (os.cpu_count() or 1)


async def _lean(
    url: str, concurrency: int, records: int, bodies: list[bytes]
) -> tuple[float, float, float]:
    """The leanest client: C kept-alive HTTP/1.1 connections on asyncio streams, each sending
    pre-built requests (record i the body ``i % len(bodies)``) and reading the reply by its
    content-length."""
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.split(":")
    path = "/" + url.split("//", 1)[1].split("/", 1)[1] + "/chat/completions"
    requests = [
        (
            f"POST {path} HTTP/1.1\r\nhost: {host_port}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode()
        + body
        for body in bodies
    ]
    remaining = records

    async def worker() -> None:
        nonlocal remaining
        reader, writer = await asyncio.open_connection(host, int(port))
        while remaining > 0:
            remaining -= 1
            writer.write(requests[remaining % len(requests)])
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


def _rate(rate: float | None, width: int) -> str:
    return "" if rate is None else f" {rate:>{width}.1f}"


def _ratio(ours: float, anchor: float | None, width: int) -> str:
    return "" if anchor is None else f" {ours / anchor:>{width}.2f}"


def _cpu() -> float:
    """CPU seconds of this process (every thread) and of its children that have ended (the
    engine's worker processes, ended by the end of a run; the endpoint runs till later)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _ours(
    url: str, concurrency: int, root: Path, dataset: str, pool: str = "auto"
) -> tuple[float, float, float, int, float, float, float]:
    from voxbench.tasks.config import parse_config
    from voxbench.tasks.engine import work_queue
    from voxbench.tasks.run import run_tasks

    default = getattr(work_queue, "_BENCH_POOL_DEFAULT", work_queue.POOL_MIN_RECORDS)
    work_queue._BENCH_POOL_DEFAULT = default  # type: ignore[attr-defined]
    work_queue.POOL_MIN_RECORDS = {"auto": default, "on": 0, "off": 10**12}[pool]

    tasks = root / "tasks" / "bench"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "bench_asr.yaml").write_text(
        f"dataset: {dataset}\nprompt: {{user: 'Transcribe clip {{id}}.'}}\nmetrics: [wer]\n"
    )
    text = (
        f"models: [{{name: q, model: openai-compatible/q, base_url: '{url}', max_concurrency: {concurrency}, retries: 0}}]\n"
        f"tasks: [bench_asr]\ntasks_dirs: ['{root / 'tasks'}']\noutput_dir: '{root / 'runs' / str(time.time_ns())}'\n"
    )
    started, cpu, total, wall = time.perf_counter(), time.thread_time(), _cpu(), time.time()
    result = run_tasks(parse_config(text, file=None), text)
    seconds = time.perf_counter() - started
    ended = time.time()
    answered = max(1, result.scores["tasks"]["bench_asr"]["q"]["answered"])
    cpu_ms = 1000 * (time.thread_time() - cpu) / answered
    total_ms = 1000 * (_cpu() - total) / answered
    errors = result.scores["tasks"]["bench_asr"]["q"]["errors"]
    requests_per_s = result.inference.get("requests_per_s") or float("nan")
    first, last = (result.inference.get(k) for k in ("first_request", "last_answer"))
    start_s = datetime.fromisoformat(first).timestamp() - wall if first else float("nan")
    tail_s = ended - datetime.fromisoformat(last).timestamp() if last else float("nan")
    return answered / seconds, cpu_ms, total_ms, errors, requests_per_s, start_s, tail_s


def _idle(stats: dict[str, float], concurrency: int) -> float:
    """The share of the fake's C slots left empty while the client ran (first request to
    last answer): 0 when C requests were in flight all the time."""
    seconds = stats.get("seconds") or 0.0
    return 1 - stats["busy"] / (concurrency * seconds) if seconds > 0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="8:200,64:50,256:50", help="C:L_ms,...")
    parser.add_argument(
        "--shapes", default="parquet-wav,parquet-flac,hf-disk,wav,long", help=",".join(SHAPES)
    )
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="about how long each client runs"
    )
    parser.add_argument("--records", type=int, default=None, help="N at every point")
    parser.add_argument(
        "--no-minimal", action="store_true", help="skip the minimal httpx client (the slowest)"
    )
    parser.add_argument("--pool", default="auto", help="auto,on,off: worker-process modes to run")
    parser.add_argument("--serve", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(_serve(args.serve))
        return
    points = [tuple(int(x) for x in p.split(":")) for p in args.points.split(",")]
    minimal = not args.no_minimal
    print(
        f"{'shape':<12} {'C':>4} {'L ms':>5} {'N':>5} {'ideal/s':>8} {'lean/s':>7}"
        f"{' min/s' if minimal else ''} {'own/s':>7} {'ours/s':>7}"
        f"{' ours/min' if minimal else ''} {'ours/lean':>9}"
        f" {'ours/own':>8} {'peak lean':>9}"
        f" {'peak ours':>9} {'idle lean':>9} {'idle ours':>9} {'lean cpu':>8} {'our cpu':>8}"
        f" {'lean tot':>8} {'our tot':>8} {'errors':>6} {'infer/lean':>10} {'start s':>7}"
        f" {'tail s':>6} {'lean fake':>9} {'our fake':>8} {'lean cores':>10} {'our cores':>9} pool"
    )
    warmed = False
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
                if not warmed:  # a run's one-time imports (the CLI's start: tasks_startup.py)
                    warm = root / "warm"
                    _ours(url, 8, root, _make_dataset(warm, 16, args.shapes.split(",")[0])[0])
                    _stats(url)
                    warmed = True
                ideal = concurrency / (latency_ms / 1000)
                for shape in args.shapes.split(","):
                    most = MOST_RECORDS_LONG if shape == "long" else MOST_RECORDS
                    records = args.records or int(min(most, max(200, ideal * args.seconds)))
                    data = root / f"data_{shape}_{records}"
                    dataset, clips = _make_dataset(data, records, shape)
                    body = _body(clips[0])
                    before = _stats(url)
                    lean, lean_cpu, lean_total = asyncio.run(
                        _lean(url, concurrency, records, [body])
                    )
                    seen = _stats(url)
                    lean_peak, lean_idle = seen["peak"], _idle(seen, concurrency)
                    lean_fake = _fake_ms(before, seen, records)
                    own = asyncio.run(_lean(url, concurrency, records, [_body(c) for c in clips]))
                    _stats(url)
                    least = None
                    if minimal:
                        least = asyncio.run(_minimal(url, concurrency, records, body))[0]
                        _stats(url)
                    for mode in args.pool.split(","):
                        before = _stats(url)
                        ours, ours_cpu, ours_total, errors, inferred, start_s, tail_s = _ours(
                            url, concurrency, root, dataset, mode
                        )
                        seen = _stats(url)
                        our_fake = _fake_ms(before, seen, records)
                        cores = (
                            f" {lean_fake:>9.3f} {our_fake:>8.3f}"
                            f" {_bound(lean_total, lean_fake, lean):>10.2f}"
                            f" {_bound(ours_total, our_fake, ours):>9.2f}"
                        )
                        print(
                            f"{shape:<12} {concurrency:>4} {latency_ms:>5} {records:>5}"
                            f" {ideal:>8.0f} {lean:>7.1f}{_rate(least, 6)} {own[0]:>7.1f}"
                            f" {ours:>7.1f}{_ratio(ours, least, 8)}"
                            f" {ours / lean:>9.2f} {ours / own[0]:>8.2f}"
                            f" {lean_peak:>9} {seen['peak']:>9}"
                            f" {lean_idle:>9.2f} {_idle(seen, concurrency):>9.2f}"
                            f" {lean_cpu:>8.3f} {ours_cpu:>8.3f} {lean_total:>8.3f}"
                            f" {ours_total:>8.3f} {errors:>6} {inferred / lean:>10.2f}"
                            f" {start_s:>7.3f} {tail_s:>6.3f}{cores} {mode}",
                            flush=True,
                        )
            finally:
                server.terminate()
                server.wait()


if __name__ == "__main__":
    main()
