"""The engine: one work queue per model pool, exactly ``max_concurrency`` requests per endpoint.

Each endpoint of a pool runs ``max_concurrency`` workers (on kept-alive clients of at most
eight connections each) that take records from the pool's one queue, so an endpoint has
exactly that many requests in flight while work remains, and a slow endpoint simply takes
fewer records (work stealing, no static shards, no polling). A producer fills the bounded
queue and starts preparing each record's audio (decode, resample, cut, WAV, hash) as it
queues it, ``LOOKAHEAD`` records (or the pool's slots) ahead at most: the dataset streams, and a slot that frees
finds its next request ready. A clip seen before (the same source bytes, cut the same way)
is not prepared again: its base64 WAV and digest are kept by content (``tasks.engine.clips``)
and spliced into the record's body. A worker asks the cache, calls the endpoint with the shared
retry policy and hands the outcome to the scorer, which scores batches and appends them to
``records.jsonl``; judge metrics are graded in their own tasks at the judge's concurrency,
each row written once complete. A model answering aloud (``output_audio``) has its answer's
WAV kept under ``answers/<task>/<model>/<record>.wav`` in the run directory (the row's
``answer_audio``), its transcript as the prediction, and ``llm_judge_audio`` hears it. Large runs prepare and score in worker processes
(``tasks.engine.pool``) where the cores allow, small ones in a thread and on the loop.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import json
import logging
import re
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from voxbench.audio.wav import Audio, concatenate
from voxbench.core.errors import ConfigError, ErrorCategory, ProviderError, VoxbenchError
from voxbench.metrics.registry import METRICS, score_reply
from voxbench.providers.backoff import RetryPolicy
from voxbench.providers.completion import Body, ConversationTurn
from voxbench.providers.deadlines import deadline
from voxbench.tasks.config import EndpointConfig
from voxbench.tasks.datasets.readers import Record
from voxbench.tasks.engine.cache import ResponseCache, request_key
from voxbench.tasks.engine.chunking import Piece
from voxbench.tasks.engine.clips import ClipCache, EncodedClip
from voxbench.tasks.engine.models import (
    Asker,
    BodyEndpointClient,
    EndpointClient,
    Prompted,
    Spoken,
    make_endpoint,
    served_by,
)
from voxbench.tasks.engine.pool import PrepareError, WorkerLost, WorkerPool, default_workers
from voxbench.tasks.engine.prepare import (
    BodySpec,
    Cut,
    Prepared,
    audio_of_wav,
    decode_encoded,
    pass_through,
    prepare_clip,
    prepare_encoded,
    wav_bytes,
)
from voxbench.tasks.plan import Job, Plan

if TYPE_CHECKING:  # the judges' modules are imported when a run has a judge
    from voxbench.tasks.audio_judge_metric import AnswerJudge
    from voxbench.tasks.judge import TaskJudge

log = logging.getLogger(__name__)

CONNECTIONS_PER_CLIENT = 8
"""Connections per HTTP client (see ``client_shards``)."""
PAYLOAD_CACHE_BYTES = 32 * 1024 * 1024
"""Prepared records kept for the other models that send them (least recent dropped)."""
POOL_FIRST = False
"""Wait for the workers before the first record (tests: every record goes through them)."""
LOOKAHEAD = 64
"""Records of a model pool prepared ahead of the requests in flight, at most (or as many as
its slots, when it has more)."""
PREPARE_BATCH = 8
"""Records prepared per thread hop (fewer when the pool has fewer slots)."""
YOUNG_GENERATION = 50_000
"""Allocations between two passes of the garbage collector over young objects while a run's
requests are made (``Engine.run``; Python's default is 700)."""
POOL_MIN_RECORDS = 2000 if default_workers() >= 2 else sys.maxsize
"""A run sending at least this many clips to chat models prepares them and scores the replies
in worker processes (``tasks.engine.pool``); smaller runs are not worth starting them (a
worker's imports cost 1.4–1.8 s of CPU, and each clip then crosses two pipes). With one worker
(2 cores) never: ``bench/tasks_throughput.py --pool on,off`` at C=64, L=50 ms on 2 cores ran
1.3–1.7× faster without it at N=400, 1.8–2.4× at N=2000 and 1.7× at N=6000 (issue 34)."""


@dataclass
class Outcome:
    """What one record got: a reply or an error, and how long it took."""

    job: Job
    record: Record
    prediction: str | None
    error: dict[str, Any] | None
    latency_s: float
    attempts: int
    cached: bool
    key: str
    answer_wav: bytes | None = None
    """The spoken answer, when the model was asked to answer aloud and did."""
    answer_audio: str | None = None
    """Where the spoken answer is kept, relative to the run directory."""
    pieces: tuple[Piece, ...] = ()
    """Where the clip was cut (empty: sent whole)."""
    piece_replies: list[str] | None = None
    """Each piece's reply, when every piece was asked (not for a cached answer)."""
    turn_rows: list[dict[str, Any]] | None = None
    """A multi-turn record's turns as asked, each with its reply."""


@dataclass
class InferencePhase:
    """The requests of one pass of a run: ``run.json``'s ``inference`` (``as_info``)."""

    first_request: float | None = None
    """Wall-clock time (epoch seconds) the first request was sent."""
    last_answer: float | None = None
    """Wall-clock time the last request ended (answered or failed)."""
    retries: int = 0
    """Requests made again after a retryable failure."""
    in_flight: int = 0
    max_in_flight: int = 0
    """The most requests in flight at once (all models together)."""

    def as_info(self, requests: int, cached: int, records: int) -> dict[str, Any]:
        """The ``run.json`` entry (``core.results.TaskInference``)."""
        first, last = self.first_request, self.last_answer
        seconds = round(last - first, 3) if first is not None and last is not None else None
        return {
            "first_request": _stamp(first),
            "last_answer": _stamp(last),
            "seconds": seconds,
            "records": records,
            "requests": requests,
            "retries": self.retries,
            "cached": cached,
            "max_in_flight": self.max_in_flight,
            "requests_per_s": round(requests / seconds, 2) if seconds else None,
        }


def _stamp(when: float | None) -> str | None:
    if when is None:
        return None
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds")


Item = tuple[
    Job, Record, Prompted, "asyncio.Future[tuple[Prepared, list[Audio] | None]]", str | None
]
"""A record to answer: its request (rendered once), its payloads being prepared, and its
cache key when they were ready at once (looked up ahead: ``ResponseCache.prefetch``)."""

Progress = Callable[[Job, dict[str, Any]], None]
"""Called with each finished record's row."""


PayloadKey = tuple[int, Cut, bool, BodySpec | None]


def client_shards(endpoint: EndpointConfig) -> list[EndpointConfig]:
    """The endpoint's slots split over clients of at most ``CONNECTIONS_PER_CLIENT`` each.

    httpx's pool scans every connection (polling each idle socket) on each request, so one
    pool of C connections costs O(C) per request: at C=64 it caps a 2-core client near 85
    requests/s, where 8 pools of 8 reach ~560/s. The endpoint still has exactly
    ``max_concurrency`` requests in flight, all on kept-alive connections. (OpenAI-compatible
    chat endpoints send through ``providers.lean_http``, whose cost does not grow with its
    connections: the split changes nothing for them, and keeps httpx fast where it is used.)
    """
    total = endpoint.max_concurrency
    sizes = [CONNECTIONS_PER_CLIENT] * (total // CONNECTIONS_PER_CLIENT)
    if total % CONNECTIONS_PER_CLIENT:
        sizes.append(total % CONNECTIONS_PER_CLIENT)
    return [endpoint.model_copy(update={"max_concurrency": size}) for size in sizes]


def task_cut(job: Job) -> Cut:
    """How the job's task resamples and cuts a clip."""
    long_audio = job.spec.long_audio
    return Cut(
        job.spec.sample_rate,
        long_audio.policy,
        long_audio.max_seconds,
        long_audio.overlap_seconds,
        long_audio.silence_window,
    )


def _prepare_here(
    record: Record, cut: Cut, spec: BodySpec | None = None
) -> tuple[Prepared, list[Audio] | None]:
    """A record's payloads (and request bodies, with ``spec``), prepared in this process."""
    if record.turns:
        return _prepare_turns(record, cut), None
    encoded: Callable[[], tuple[bytes | None, str | None, str]] | None = getattr(
        record.audio, "encoded", None
    )  # none: a clip made on load (perturbed)
    if encoded is not None:
        prepared, pieces = prepare_encoded(*encoded(), cut)
    else:
        prepared, pieces = prepare_clip(record.load_audio(), cut)
    if spec is not None:
        prepared = spec.encoded(prepared)
    return prepared, pieces


def _passed_through(
    source: tuple[bytes | None, str | None, str],
    cut: Cut,
    spec: BodySpec | None,
    future: asyncio.Future[Any],
) -> bool:
    """Settle ``future`` with the payload of a clip (``source``: its ``encoded()``) when it
    is passed through as it is (``prepare.pass_through``); False when it must be decoded."""
    try:
        data, path, _ = source
        prepared = pass_through(data, path, cut)
        if prepared is None:
            return False
        if spec is not None:
            prepared = spec.encoded(prepared)
    except Exception as exc:  # noqa: BLE001 - the record's own failure
        future.set_exception(exc)
        return True
    future.set_result((prepared, None))
    return True


def _source_of(record: Record) -> tuple[bytes | None, str | None, str] | None:
    """The record's encoded clip (``encoded()``), a WAV file's bytes read (what is passed
    through, and what the clip cache compares); None for a clip made on load (perturbed) or
    a conversation's."""
    encoded = getattr(record.audio, "encoded", None)
    if encoded is None or record.turns:
        return None
    data, path, name = encoded()
    if data is None and path and path.lower().endswith(".wav"):
        with contextlib.suppress(OSError):  # decode_encoded names the file
            data = Path(path).read_bytes()
    return data, path, name


def _clip_payload(clip: EncodedClip, spec: BodySpec) -> tuple[Prepared, None]:
    """A record's payload made of a clip encoded before: its bodies spliced around the
    base64 (the bytes preparing the clip again would make)."""
    b64 = list(clip.b64)
    return Prepared([], list(clip.digests), spec.spliced(b64), clip.pieces, b64), None


async def _loaded(batch: list[tuple[Job, Record]]) -> None:
    """Wait (without blocking the loop) for the reads the batch's clips need: a parquet row
    group being read ahead (``ArrowAudio.loading``; a 256-row group of 20 s clips takes
    ~0.1-0.2 s to read, during which every connection's answer would wait)."""
    for _, record in batch:
        loading = getattr(record.audio, "loading", None)
        read = loading() if loading is not None else None
        if read is not None and not read.done():
            with contextlib.suppress(Exception):  # the record's own failure, when it is read
                await asyncio.wrap_future(read)


def _settle(futures: list[asyncio.Future[Any]], task: asyncio.Future[Any]) -> None:
    """Hand each record's future its part of a prepared batch (or the batch's failure)."""
    if task.cancelled():
        for future in futures:
            future.cancel()
        return
    failure = task.exception()
    results = [failure] * len(futures) if failure is not None else task.result()
    for future, result in zip(futures, results, strict=True):
        if future.done():
            continue
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)


def _prepare_batch(
    batch: list[tuple[Record, Cut, BodySpec | None]],
) -> list[tuple[Prepared, list[Audio] | None] | BaseException]:
    """``_prepare_here`` of each record (one thread hop for the batch); a record that fails
    gets its exception."""
    out: list[tuple[Prepared, list[Audio] | None] | BaseException] = []
    for record, cut, spec in batch:
        try:
            out.append(_prepare_here(record, cut, spec))
        except Exception as exc:  # noqa: BLE001 - handed to the record's future
            out.append(exc)
    return out


def _prepare_turns(record: Record, cut: Cut) -> Prepared:
    """The WAV of each user turn that has audio (each cut as the task says: truncated)."""
    wavs, digests = [], []
    for turn in record.turns:
        if turn.audio is not None:
            prepared, _ = prepare_clip(turn.audio.load(), cut)
            wavs += prepared.wavs
            digests += prepared.digests
    return Prepared(wavs, digests)


def join_chunks(
    texts: Iterable[str], overlapped: Sequence[bool] | None = None, max_overlap_words: int = 12
) -> str:
    """Join the replies of a clip's chunks, never fusing two words into one.

    ``overlapped[i]`` says whether chunk ``i + 1`` starts inside chunk ``i`` (a hard cut:
    ``Piece.cut == "hard"``); None means every chunk does. After an overlapping chunk, the
    longest run of words (case and punctuation aside) that ends one text and starts the next
    is said once; chunks cut in a silence repeat nothing and are joined with a space.
    """
    words: list[str] = []
    for index, text in enumerate(texts):
        new = text.split()
        best = 0
        if index and (overlapped is None or overlapped[index - 1]):
            key = [_bare(w) for w in new]
            tail = [_bare(w) for w in words[-max_overlap_words:]]
            for size in range(min(len(tail), len(key)), 0, -1):
                if tail[-size:] == key[:size]:
                    best = size
                    break
        words.extend(new[best:])
    return " ".join(words)


def _bare(word: str) -> str:
    return "".join(ch for ch in word.casefold() if ch.isalnum())


class Engine:
    """Runs a plan's jobs; ``run`` returns when every record has an outcome."""

    def __init__(
        self,
        plan: Plan,
        cache: ResponseCache,
        write_rows: Callable[[list[dict[str, Any]]], None],
        *,
        done: set[tuple[str, str, str]] | None = None,
        progress: Progress | None = None,
        endpoint_factory: Callable[..., EndpointClient] = make_endpoint,
        judge: TaskJudge | None = None,
        audio_judge: AnswerJudge | None = None,
        run_dir: Path | None = None,
    ) -> None:
        self.plan = plan
        self.cache = cache
        self.write_rows = write_rows
        """Appends finished records' rows (a batch at a time)."""
        self.done = done or set()
        """(task, model, record id) answered by an earlier pass of this run."""
        self.progress = progress
        self.endpoint_factory = endpoint_factory
        self.requests = 0
        """Calls made to endpoints (cache hits aside)."""
        self._in_flight: dict[str, asyncio.Event] = {}
        """Cache keys being asked right now: an identical request waits for that reply."""
        self.judge = judge
        """Grades the judge metrics (``llm_judge``); required when a job has one."""
        self.audio_judge = audio_judge
        """Hears spoken answers (``llm_judge_audio``); required when a job has that metric."""
        self.run_dir = run_dir
        """Where spoken answers are kept (``answers/``); required when a model answers aloud."""
        self._failure: BaseException | None = None
        """A judge failure that stops the run (a rejected key): workers stop taking records."""
        self._payloads: OrderedDict[PayloadKey, asyncio.Future[Any]] = OrderedDict()
        """Records prepared lately, by (record, how it is cut, in the workers or not, how
        its request bodies are encoded), least recently used first."""
        self._payload_bytes: dict[PayloadKey, int] = {}
        self._payload_total = 0
        self._share_payloads = len({job.model.name for job in plan.jobs}) > 1
        self._clips = ClipCache()
        """Clips encoded lately, by content (``tasks.engine.clips``)."""
        self._encoding: dict[tuple[Cut, int], tuple[bytes, asyncio.Future[EncodedClip]]] = {}
        """Clips being encoded, by ``ClipCache.key``: a record with the same source waits."""
        self._preparing: set[asyncio.Future[Any]] = set()
        """Batches being prepared in a thread (kept referenced till done)."""
        self.pool: WorkerPool | None = None
        """Worker processes preparing clips and scoring, for runs of ``POOL_MIN_RECORDS`` or more."""
        self._generations: dict[int, tuple[Any, dict[str, Any]]] = {}
        """Each job's generation params and their ``model_dump`` (the cache key hashes it)."""
        self._servers: dict[str, list[str]] = {
            job.model.name: served_by(job.model) for job in plan.jobs
        }
        """Each model's servers (base URLs), in its cache keys."""
        self.cached = 0
        """Records answered from the response cache (no request made)."""
        self.phase = InferencePhase()
        self.answered = 0
        """Records given an outcome by this pass (answered, cached or failed)."""
        """When the requests were made, how many, and how many at once (``run.json``)."""

    async def run(self) -> None:
        """Answer and score every record not already done.

        The objects alive when it starts (the plan and its records, modules) are left out of
        the garbage collector's passes meanwhile (``gc.freeze``): a full pass over them took
        40-100 ms, one or two a run. The young generation is collected every
        ``YOUNG_GENERATION`` allocations instead of 700: each record allocates hundreds of
        objects (its request, reply, row and the coroutines in between), nearly all freed by
        reference counting, and a pass every few records cost ~10% of the loop at 4,000
        records a second."""
        thresholds = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(max(thresholds[0], YOUNG_GENERATION), *thresholds[1:])
        try:
            await self._run()
        finally:
            gc.set_threshold(*thresholds)
            gc.unfreeze()

    async def _run(self) -> None:
        to_send = sum(len(job.records) for job in self.plan.jobs if job.api == "chat")
        starting = None
        if to_send - len(self.done) >= POOL_MIN_RECORDS:
            # Work goes to threads until the workers are ready (their imports take ~0.5 s).
            self.pool = WorkerPool()
            starting = asyncio.create_task(self._start_pool(self.pool))
            if POOL_FIRST:
                await starting
        results: asyncio.Queue[Outcome | None] = asyncio.Queue()
        scorer = asyncio.create_task(self._score(results))
        pools: dict[str, list[Job]] = {}
        for job in self.plan.jobs:
            pools.setdefault(job.model.name, []).append(job)
        interrupted = False
        try:
            await asyncio.gather(*(self._run_pool(jobs, results) for jobs in pools.values()))
        except (asyncio.CancelledError, KeyboardInterrupt):
            interrupted = True  # Ctrl-C: stop now; the answers not yet written are cached
            raise
        finally:
            await results.put(None)
            if interrupted:
                scorer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await scorer
            else:
                await scorer
            if self.judge is not None:
                await self.judge.aclose()
            if self.audio_judge is not None:
                await self.audio_judge.aclose()
            if starting is not None:
                # Not ready by now, the workers were never used: stop them, not wait for them.
                starting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await starting
            if self.pool is not None:
                await self.pool.aclose()

    async def _run_pool(self, jobs: list[Job], results: asyncio.Queue[Outcome | None]) -> None:
        model = jobs[0].model
        endpoints = [
            (self.endpoint_factory(model, shard, jobs[0].api), shard.max_concurrency)
            for endpoint in model.pool()
            for shard in client_shards(endpoint)
        ]
        width = sum(c for _, c in endpoints)
        # Clips are prepared ahead (as many as the slots, LOOKAHEAD at least), so a slot that
        # frees finds its next request ready: its connection never idles waiting for soxr,
        # and at C=256 all 256 start at once (64 ahead kept ~65–160 in flight).
        ahead = max(width, min(2 * width, LOOKAHEAD))
        queue: asyncio.Queue[Item | None] = asyncio.Queue(maxsize=ahead)

        async def produce() -> None:
            batch: list[tuple[Job, Record]] = []
            size = max(1, min(PREPARE_BATCH, width))
            for job in jobs:
                for record in job.records:
                    if (job.task.name, model.name, record.id) not in self.done:
                        batch.append((job, record))
                    if len(batch) >= size:
                        await _loaded(batch)
                        for item in self._prepare(batch, endpoints[0][0]):
                            await queue.put(item)
                        batch = []
            await _loaded(batch)
            for item in self._prepare(batch, endpoints[0][0]):
                await queue.put(item)
            for _ in range(width):
                await queue.put(None)

        async def work(client: EndpointClient) -> None:
            while (item := await queue.get()) is not None:
                if self._failure is not None:
                    raise self._failure
                await results.put(await self._answer(client, *item))

        try:
            await asyncio.gather(
                produce(), *(work(client) for client, c in endpoints for _ in range(c))
            )
        finally:
            for client, _ in endpoints:
                await client.aclose()

    def _prepare(self, batch: list[tuple[Job, Record]], client: EndpointClient) -> list[Item]:
        """The records with their payloads being prepared (one thread hop for those prepared
        here, the batch's): shared by every model that sends a record the same way (a
        multi-model run decodes and resamples each record's clip once)."""
        items: list[Item] = []
        here: list[tuple[Record, Cut, BodySpec | None, asyncio.Future[Any]]] = []
        loop = asyncio.get_running_loop()
        for job, record in batch:
            request = job.prompted(record)
            cut = task_cut(job)
            # Chat requests carry only the WAV: the workers prepare them, and the audio pieces
            # are read back from it. Other models get the pieces as cut (float samples).
            encoded = getattr(record.audio, "encoded", None)
            pooled = self._pool_ready and job.api == "chat" and encoded is not None
            pooled = pooled and not record.turns  # a conversation's clips are prepared here
            # The request bodies are encoded with the clip (off the loop), for a client that
            # takes them; per-chunk prompts differ from the template's: the client encodes
            # those bodies itself.
            own_prompts = job.spec.long_audio.chunk_prompt is not None or bool(record.turns)
            builder = getattr(client, "body_builder", None) if not own_prompts else None
            spec = (
                BodySpec(builder, client.request_of(b"", request))  # type: ignore[attr-defined]
                if builder is not None and job.api == "chat"
                else None
            )
            key = (id(record), cut, pooled, spec)  # the plan holds every record: ids stay unique
            found = self._payloads.get(key)
            if found is not None:
                self._payloads.move_to_end(key)
                items.append((job, record, request, found, None))
                continue
            source = _source_of(record)
            # A clip encoded before (or being encoded) is spliced into this record's bodies.
            kept = spec is not None and spec.splices and source is not None and source[0]
            if kept:
                assert spec is not None and source is not None and source[0] is not None
                future = self._from_clips(cut, source[0], spec)
                if future is not None:
                    items.append((job, record, request, future, None))
                    continue
            if pooled:
                assert source is not None
                future = asyncio.ensure_future(self._prepare_pooled(record, source, cut, spec))
            else:
                # A clip passed through (its source bytes are what is sent) is ready here at
                # once; one to decode goes to a thread with the batch's others. (Preparing
                # every clip in a thread made the loop wait for the GIL at each socket call.)
                future = loop.create_future()
                if source is None or not _passed_through(source, cut, spec, future):
                    here.append((record, cut, spec, future))
            items.append((job, record, request, future, None))
            if kept:
                assert source is not None and source[0] is not None
                self._clip_encoding(cut, source[0], future)
            if self._share_payloads:  # else one model: nobody else will send it
                self._payloads[key] = future
                self._payload_bytes[key] = 0
                future.add_done_callback(partial(self._count_payload, key))
        if here:
            work = [(r, c, s) for r, c, s, _ in here]
            task = asyncio.ensure_future(asyncio.to_thread(_prepare_batch, work))  # noqa: RUF006
            self._preparing.add(task)
            task.add_done_callback(self._preparing.discard)
            task.add_done_callback(lambda t: _settle([f for *_, f in here], t))
        return self._looked_ahead(items)

    def _looked_ahead(self, items: list[Item]) -> list[Item]:
        """``items`` with the cache key of each whose payload is ready (most are: passed
        through, or a clip encoded before), those keys looked up in one query."""
        out: list[Item] = []
        for job, record, request, ready, _ in items:
            key = None
            settled = ready.done() and not ready.cancelled() and ready.exception() is None
            if settled and not record.turns:
                key = self._record_key(job, record, request, ready.result()[0])
            out.append((job, record, request, ready, key))
        self.cache.prefetch([item[4] for item in out if item[4]])
        return out

    def _from_clips(
        self, cut: Cut, source: bytes, spec: BodySpec
    ) -> asyncio.Future[tuple[Prepared, list[Audio] | None]] | None:
        """The record's payload from the clip cache: ready at once when the clip was encoded
        before, when it is when it is being encoded (the same failure, if it fails); None
        when it is neither (the caller prepares it)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[Prepared, list[Audio] | None]] = loop.create_future()
        clip = self._clips.get(cut, source)
        if clip is not None:
            future.set_result(_clip_payload(clip, spec))
            return future
        encoding = self._encoding.get(self._clips.key(cut, source))
        if encoding is None or encoding[0] != source:
            return None

        def settle(done: asyncio.Future[EncodedClip]) -> None:
            if future.done():
                return
            if done.cancelled():
                future.cancel()
            elif (failure := done.exception()) is not None:
                future.set_exception(failure)
            else:
                future.set_result(_clip_payload(done.result(), spec))

        encoding[1].add_done_callback(settle)
        return future

    def _clip_encoding(
        self, cut: Cut, source: bytes, future: asyncio.Future[tuple[Prepared, Any]]
    ) -> None:
        """Note that ``source`` is being encoded (``_from_clips`` waits for it), and keep
        the clip it makes in the clip cache (a failure is not kept: asked again, it is
        prepared again)."""
        key = self._clips.key(cut, source)
        if key in self._encoding:
            return  # another source with this fingerprint is being encoded: not noted
        clip: asyncio.Future[EncodedClip] = asyncio.get_running_loop().create_future()
        self._encoding[key] = (source, clip)

        def kept(done: asyncio.Future[tuple[Prepared, Any]]) -> None:
            self._encoding.pop(key, None)
            if done.cancelled():
                clip.cancel()
                return
            if (failure := done.exception()) is not None:
                clip.set_exception(failure)
                clip.exception()  # retrieved: nobody may wait for it
                return
            prepared = done.result()[0]
            assert prepared.b64 is not None, "a splicing BodySpec encodes the base64"
            encoded = EncodedClip(
                source, tuple(prepared.b64), tuple(prepared.digests), prepared.pieces
            )
            self._clips.put(cut, encoded)
            clip.set_result(encoded)

        if future.done():
            kept(future)  # passed through at once: kept before the next record asks
        else:
            future.add_done_callback(kept)

    async def _start_pool(self, pool: WorkerPool) -> None:
        try:
            await pool.start()
        except (OSError, asyncio.IncompleteReadError) as exc:  # no workers: threads do it all
            log.warning("worker processes did not start (%s): preparing clips in threads", exc)
            await pool.aclose()
            self.pool = None

    @property
    def _pool_ready(self) -> bool:
        return self.pool is not None and self.pool.ready

    def _count_payload(self, key: PayloadKey, future: asyncio.Future[Any]) -> None:
        if future.cancelled() or future.exception() is not None or key not in self._payloads:
            self._payloads.pop(key, None)  # a clip that failed is tried again, if asked again
            self._payload_total -= self._payload_bytes.pop(key, 0)
            return
        prepared, pieces = future.result()
        size = sum(len(w) for w in prepared.wavs) + sum(p.samples.nbytes for p in pieces or ())
        size += sum(
            len(b) if isinstance(b, bytes) else sum(len(p) for p in b)
            for b in prepared.bodies or ()
        )
        self._payload_bytes[key] = size
        self._payload_total += size
        while self._payload_total > PAYLOAD_CACHE_BYTES and len(self._payloads) > 1:
            oldest = next(iter(self._payloads))
            self._payloads.pop(oldest)
            self._payload_total -= self._payload_bytes.pop(oldest)

    async def _prepare_pooled(
        self,
        record: Record,
        source: tuple[bytes | None, str | None, str],
        cut: Cut,
        spec: BodySpec | None,
    ) -> tuple[Prepared, list[Audio] | None]:
        assert self.pool is not None
        try:
            prepared = await self.pool.prepare(*source, cut, spec)
            return prepared, None  # read back from the WAVs for clients that want samples
        except WorkerLost:
            pass  # the worker is gone: prepared here, as a small run's clips are
        # Decoding, soxr and hashing release the GIL: in a thread they use another core.
        return await asyncio.to_thread(_prepare_here, record, cut, spec)

    def _key(
        self,
        job: Job,
        request: Prompted,
        digests: list[str],
        chunk_prompts: list[str] | None = None,
    ) -> str:
        """The request's content address: model, api, prompt, generation and the audio sent
        (and each chunk's prompt, where the task gives chunks their own)."""
        if job.api == "oracle":
            return ""
        chat = job.api == "chat"  # a transcription request carries no prompt
        generation = request.generation
        dumped = self._generations.get(id(generation))
        if dumped is None or dumped[0] is not generation:  # each job's, dumped once
            dumped = self._generations[id(generation)] = (generation, generation.model_dump())
        return request_key(
            {
                "model": job.model.model,
                "api": job.api,
                "servers": self._servers[job.model.name],
                "prompt": request.prompt if chat else "",
                "system": request.system if chat else "",
                "generation": dumped[1] if chat else {},
                "audio": digests,
                **({"voice": request.voice} if chat and request.voice else {}),
                **({"chunk_prompts": chunk_prompts} if chat and chunk_prompts else {}),
            }
        )

    def _record_key(self, job: Job, record: Record, request: Prompted, prepared: Prepared) -> str:
        """The cache key of a record's request (``_key``), its payload prepared."""
        count = len(prepared.wavs or prepared.digests)
        prompts = job.chunk_prompts(record, count) if job.api == "chat" else None
        return self._key(job, request, prepared.digests, prompts)

    async def _answer(
        self,
        client: EndpointClient,
        job: Job,
        record: Record,
        request: Prompted,
        ready: asyncio.Future[tuple[Prepared, list[Audio] | None]],
        key: str | None,
    ) -> Outcome:
        if record.turns:
            return await self._answer_turns(client, job, record, request, ready)
        started = time.perf_counter()
        attempts = [0]
        try:
            pieces: Sequence[Audio | None] | None  # each piece's samples (None: not decoded)
            prepared, pieces = await ready
            if pieces is None and not getattr(client, "wav_only", False):
                pieces = [audio_of_wav(w, task_cut(job).sample_rate) for w in prepared.wavs]
            wavs = prepared.wavs or [b""] * len(prepared.digests)  # the bodies hold the audio
            prompts = job.chunk_prompts(record, len(wavs)) if job.api == "chat" else None
            if key is None:
                key = self._key(job, request, prepared.digests, prompts)
            # The same request in flight (one clip transcribed for two tasks): wait for its reply.
            while key in self._in_flight:
                await self._in_flight[key].wait()
            cached = self.cache.get(key) if key else None
            if cached is not None:
                self.cached += 1
                prediction, answer_wav = _cached_answer(cached, request)
                found = Outcome(
                    job, record, prediction, None, 0.0, 0, True, key, pieces=prepared.pieces
                )
                return self._spoken_outcome(found, answer_wav)
            if key:
                self._in_flight[key] = asyncio.Event()
            try:
                replies = []
                bodies: Sequence[Body | None] = prepared.bodies or [None] * len(wavs)
                asks = [replace(request, prompt=p) for p in prompts] if prompts else None
                for wav, piece, body, ask in zip(
                    wavs, pieces or [None] * len(wavs), bodies, asks or [request] * len(wavs),
                    strict=True,
                ):  # fmt: skip
                    replies.append(
                        await self._call(client, piece, wav, body, ask, job.model, attempts)
                    )
                    if job.api == "oracle":
                        break
                texts = [r.text if isinstance(r, Spoken) else r for r in replies]
                overlapped = [p.cut == "hard" for p in prepared.pieces]
                prediction = join_chunks(texts, overlapped) if len(texts) > 1 else texts[0]
                answer_wav = _joined_speech(replies, record.id) if request.voice else None
                if key:
                    self.cache.put(
                        key, job.model.model, _cache_value(prediction, answer_wav, request)
                    )
            finally:
                if key:
                    self._in_flight.pop(key).set()
            outcome = Outcome(
                job,
                record,
                prediction,
                None,
                time.perf_counter() - started,
                attempts[0],
                False,
                key,
                pieces=prepared.pieces,
                piece_replies=texts if len(texts) == len(prepared.pieces) else None,
            )
            return self._spoken_outcome(outcome, answer_wav)
        except ProviderError as exc:
            error = {"category": str(exc.category), "message": str(exc), "status": exc.status}
        except VoxbenchError as exc:  # an unreadable clip, a missing prerequisite
            category = exc.category if isinstance(exc, PrepareError) else type(exc).__name__
            error = {"category": category, "message": str(exc), "status": None}
        return Outcome(
            job, record, None, error, time.perf_counter() - started, attempts[0], False, ""
        )

    async def _answer_turns(
        self,
        client: EndpointClient,
        job: Job,
        record: Record,
        request: Prompted,
        ready: asyncio.Future[tuple[Prepared, list[Audio] | None]],
    ) -> Outcome:
        """A multi-turn record: its user turns asked in order, each request carrying the
        conversation so far (``turns.history`` says whose assistant replies); each turn's
        reply is cached under that conversation. The last reply is the prediction."""
        started = time.perf_counter()
        attempts = [0]
        assert job.spec.turns is not None
        own_history = job.spec.turns.history == "model"
        rows: list[dict[str, Any]] = []
        key, all_cached = "", True
        try:
            prepared, _ = await ready
            clips = iter(zip(prepared.wavs, prepared.digests, strict=True))
            history: list[ConversationTurn] = []
            said: list[dict[str, Any]] = []  # the conversation as its cache key sees it
            for index, turn in enumerate(record.turns):
                wav, digest = next(clips) if turn.audio is not None else (None, None)
                text = turn.text or (request.prompt if wav is not None else "")
                history.append(ConversationTurn("user", text, wav))
                said.append({"user": text, "audio": digest})
                key = self._conversation_key(job, request, said)
                reply = self.cache.get(key) if key else None
                row: dict[str, Any] = {
                    "text": text,
                    "audio": turn.audio.name if turn.audio is not None else None,
                    "cached": reply is not None,
                }
                if reply is None:
                    all_cached = False
                    last = index == len(record.turns) - 1
                    # The oracle says the reference: the record's for the last turn.
                    asked = replace(
                        request, reference=record.reference if last else turn.reply or ""
                    )
                    asker = _ConversationAsker(client, tuple(history), job.model.model)
                    reply = str(
                        await self._call(asker, None, b"", None, asked, job.model, attempts)
                    )
                    if key:
                        self.cache.put(key, job.model.model, reply)
                rows.append({**row, "reply": reply, "reference": turn.reply})
                answer = reply if own_history else turn.reply or ""
                history.append(ConversationTurn("assistant", answer))
                said.append({"assistant": answer})
            elapsed = 0.0 if all_cached else time.perf_counter() - started
            self.cached += all_cached
            return Outcome(
                job, record, rows[-1]["reply"], None, elapsed, attempts[0], all_cached, key,
                turn_rows=rows,
            )  # fmt: skip
        except ProviderError as exc:
            error = {"category": str(exc.category), "message": str(exc), "status": exc.status}
        except VoxbenchError as exc:
            error = {"category": type(exc).__name__, "message": str(exc), "status": None}
        return Outcome(
            job, record, None, error, time.perf_counter() - started, attempts[0], False, "",
            turn_rows=rows or None,
        )  # fmt: skip

    def _conversation_key(self, job: Job, request: Prompted, said: list[dict[str, Any]]) -> str:
        """A turn's content address: model, instructions, generation and the conversation
        up to that turn (each user turn's text and audio digest, each assistant reply)."""
        if job.api == "oracle":
            return ""
        return request_key(
            {
                "model": job.model.model,
                "api": job.api,
                "servers": self._servers[job.model.name],
                "system": request.system,
                "generation": request.generation.model_dump(),
                "conversation": said,
            }
        )

    def _spoken_outcome(self, outcome: Outcome, answer_wav: bytes | None) -> Outcome:
        """``outcome`` with its spoken answer kept under ``answers/`` in the run directory."""
        if answer_wav is None:
            return outcome
        assert self.run_dir is not None, "a model answering aloud needs the run directory"
        job = outcome.job
        relative = Path(
            "answers", _file_part(job.task.name), _file_part(job.model.name),
            _file_part(outcome.record.id) + ".wav",
        )  # fmt: skip
        path = self.run_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(answer_wav)
        outcome.answer_wav = answer_wav
        outcome.answer_audio = relative.as_posix()
        return outcome

    async def _call(
        self,
        client: Asker,
        audio: Audio | None,
        wav: bytes,
        body: Body | None,
        request: Prompted,
        model: Any,
        attempts: list[int],
    ) -> str | Spoken:
        """One piece's reply, retrying retryable failures by the shared policy
        (``providers.backoff.RetryPolicy``: ``retries`` retries, ``backoff_base_s`` first wait).

        ``attempts[0]`` counts the calls made (across the pieces of a record).
        """

        tries = [0]

        async def once() -> str | Spoken:
            attempts[0] += 1
            tries[0] += 1
            self.requests += 1
            phase = self.phase
            phase.first_request = phase.first_request or time.time()
            phase.in_flight += 1
            phase.max_in_flight = max(phase.max_in_flight, phase.in_flight)
            try:
                async with deadline(model.timeout_s):
                    if body is None:
                        return await client.answer(audio, wav, request)
                    # a body is made only for a client with a ``body_builder``
                    return await cast(BodyEndpointClient, client).answer(audio, wav, request, body)
            except TimeoutError:
                raise ProviderError(
                    f"{model.model}: no reply within timeout_s={model.timeout_s:g}",
                    category=ErrorCategory.TIMEOUT,
                    retryable=True,
                ) from None
            finally:
                phase.in_flight -= 1
                phase.last_answer = time.time()

        policy = RetryPolicy(attempts=model.retries + 1, base=model.backoff_base_s)
        try:
            return await policy.call(once)
        finally:
            self.phase.retries += max(0, tries[0] - 1)

    async def _score(self, results: asyncio.Queue[Outcome | None]) -> None:
        """Score outcomes as they come and append their rows; judge metrics are graded in
        their own tasks (the judge's concurrency), each row written once it is complete."""
        judging: set[asyncio.Task[None]] = set()
        finished = False
        while not finished:
            batch: list[Outcome] = []
            item = await results.get()
            while item is not None:
                batch.append(item)
                if results.empty() or len(batch) >= 512:
                    break
                item = results.get_nowait()
            finished = item is None
            self.answered += len(batch)
            if batch:
                ready: list[tuple[Outcome, dict[str, Any]]] = []
                for outcome, scores in zip(batch, await self._scores(batch), strict=True):
                    row = record_row(outcome, scores)
                    if outcome.prediction is not None and outcome.job.every_turn:
                        turn_scores(outcome.job, outcome.record, row["turns"])
                    if outcome.prediction is not None and outcome.job.judged_metrics:
                        task = asyncio.create_task(self._judge_then_write(outcome, row))
                        judging.add(task)
                        task.add_done_callback(judging.discard)
                    else:
                        ready.append((outcome, row))
                self._write(ready)
                self.cache.checkpoint()
        await asyncio.gather(*judging, return_exceptions=True)
        self.cache.commit()
        if self._failure is not None:
            raise self._failure

    async def _scores(self, batch: list[Outcome]) -> list[dict[str, Any]]:
        """Each outcome's metric statistics: in the workers when the run has them, else here
        (a scoring thread would make every socket call of the loop wait for the GIL)."""
        if self._pool_ready:
            assert self.pool is not None
            try:
                scored = iter(
                    await self.pool.score(
                        [
                            (o.job.metrics, o.prediction, o.job.context(o.record))
                            for o in batch
                            if o.prediction is not None
                        ]
                    )
                )
                return [next(scored) if o.prediction is not None else {} for o in batch]
            except WorkerLost:
                pass  # a worker is gone: scored here (the pool is no longer used)
        return [
            score_prediction(o.job, o.record, o.prediction) if o.prediction is not None else {}
            for o in batch
        ]  # errors: {}

    def _write(self, finished: list[tuple[Outcome, dict[str, Any]]]) -> None:
        if not finished:
            return
        self.write_rows([row for _, row in finished])
        if self.progress is not None:
            for outcome, row in finished:
                self.progress(outcome.job, row)

    async def _judge_then_write(self, outcome: Outcome, row: dict[str, Any]) -> None:
        """Grade the record's judge metrics, then append its row."""
        assert outcome.prediction is not None
        job = outcome.job
        try:
            for metric in job.judged_metrics:
                hear = METRICS[metric].hear
                if hear is not None:  # scored here, on the spoken answer (DNSMOS)
                    row["scores"][metric] = await asyncio.to_thread(
                        hear, self._spoken_answer(outcome)
                    )
                    continue
                if METRICS[metric].hears_audio:
                    row["scores"][metric] = await self._hear(outcome)
                    continue
                assert self.judge is not None, "a job with judge metrics needs the engine's judge"
                material = job.judge_material(outcome.record, outcome.prediction)
                row["scores"][metric] = await self.judge.grade(material, metric)
        except Exception as exc:  # an aborting judge failure: the run stops with it
            self._failure = self._failure or exc
            raise
        self._write([(outcome, row)])

    async def _hear(self, outcome: Outcome) -> dict[str, Any]:
        """The audio judge's statistics of the record's spoken answer."""
        assert self.audio_judge is not None, "llm_judge_audio needs the engine's audio judge"
        rubric = outcome.job.spec.audio_judge
        assert rubric is not None, "the plan checks that a task using llm_judge_audio has one"
        label = f"{outcome.job.task.name}/{outcome.job.model.name}/{outcome.record.id}"
        return await self.audio_judge.grade(
            rubric, self._spoken_answer(outcome), outcome.prediction or "", label
        )

    @staticmethod
    def _spoken_answer(outcome: Outcome) -> Audio | None:
        """The record's spoken answer, decoded (None when the model answered in text)."""
        if outcome.answer_wav is None:
            return None
        return decode_encoded(outcome.answer_wav, None, outcome.answer_audio or "answer")


@dataclass(frozen=True)
class _ConversationAsker:
    """An endpoint asked about a conversation where ``Engine._call`` asks about one clip (so
    a turn is retried by the same policy)."""

    client: EndpointClient
    turns: tuple[ConversationTurn, ...]
    model: str

    async def answer(self, audio: Audio | None, wav: bytes, request: Prompted) -> str:
        converse = getattr(self.client, "converse", None)
        if converse is None:
            raise ConfigError(
                f"{self.model} cannot take a multi-turn conversation",
                expected="a chat model (api: chat) or local/oracle for a task with turns",
            )
        return str(await converse(self.turns, request))


def _file_part(name: str) -> str:
    """``name`` as one safe file-name part (path separators and the like become ``_``)."""
    safe = re.sub(r"[^\w.-]", "_", name).strip(".")
    return safe or "_"


def _joined_speech(replies: list[str | Spoken], record_id: str) -> bytes | None:
    """The spoken answer of a record (its chunks' audio one after the other), or None when
    the model returned no audio."""
    wavs = [r.wav for r in replies if isinstance(r, Spoken) and r.wav]
    if len(wavs) <= 1:
        return wavs[0] if wavs else None
    parts = [decode_encoded(w, None, f"{record_id} answer") for w in wavs]
    return wav_bytes(concatenate(parts))


def _cache_value(prediction: str, answer_wav: bytes | None, request: Prompted) -> str:
    """What the response cache keeps: the text, or for a spoken answer text and audio."""
    if request.voice is None:
        return prediction
    audio = base64.b64encode(answer_wav).decode("ascii") if answer_wav else None
    return json.dumps({"text": prediction, "audio_wav_base64": audio})


def _cached_answer(value: str, request: Prompted) -> tuple[str, bytes | None]:
    """``_cache_value`` read back."""
    if request.voice is None:
        return value, None
    data = json.loads(value)
    audio = data.get("audio_wav_base64")
    return data["text"], base64.b64decode(audio) if audio else None


def score_prediction(job: Job, record: Record, prediction: str) -> dict[str, Any]:
    """Each metric's statistics of one reply (judge metrics: not judged, until the judge is)."""
    return score_reply(job.metrics, prediction, job.context(record))


def turn_scores(job: Job, record: Record, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each scored turn's metric statistics (``turns.score: every``), kept in its turn row:
    those already there when they cover the job's metrics, else scored now."""
    contexts = job.turn_contexts(record, [t.get("reference") for t in turns])
    out = []
    for turn, context in zip(turns, contexts, strict=True):
        if context is None:
            continue
        if not all(m in (turn.get("scores") or {}) for m in job.metrics):
            turn["scores"] = score_reply(job.metrics, turn.get("reply") or "", context)
        out.append(turn["scores"])
    return out


def record_row(outcome: Outcome, scores: dict[str, Any]) -> dict[str, Any]:
    """The ``records.jsonl`` line of one outcome, with its metric statistics."""
    job, record = outcome.job, outcome.record
    return {
        "task": job.task.name,
        "model": job.model.name,
        "id": record.id,
        "audio": record.audio.name,
        "language": record.language,
        "reference": record.reference,
        "prediction": outcome.prediction,
        "scores": scores,
        "error": outcome.error,
        **({"answer_audio": outcome.answer_audio} if outcome.job.model.output_audio else {}),
        **({"pieces": _piece_rows(outcome)} if outcome.pieces else {}),
        **({"turns": outcome.turn_rows} if outcome.turn_rows else {}),
        "latency_s": round(outcome.latency_s, 4),
        "attempts": outcome.attempts,
        "cached": outcome.cached,
        "key": outcome.key,
    }


def _piece_rows(outcome: Outcome) -> list[dict[str, Any]]:
    """Where the record's clip was cut, with each piece's own reply when known."""
    replies: Sequence[str | None] = outcome.piece_replies or [None] * len(outcome.pieces)
    return [
        {**piece.row(), **({"reply": reply} if reply is not None else {})}
        for piece, reply in zip(outcome.pieces, replies, strict=True)
    ]
