"""Worker processes for a run's CPU work: preparing clips and scoring replies.

Decoding, soxr, WAV encoding and hashing take ~0.3 ms a clip and WER normalisation ~0.1 ms
a reply. In a thread of the engine's process that CPU fights the event loop for the GIL
(every socket call then waits for it); in worker processes it runs on other cores and the
loop only moves bytes. The workers (``python -m voxbench.tasks.engine.pool``) read
length-prefixed pickled requests on stdin and answer on stdout; the event loop itself writes
and reads the pipes (no thread in the engine's process). A worker runs the same functions the
engine runs in-process (``prepare_encoded``, each metric's ``score``, the client's
``body_builder``), so results are the same bytes. The base64 of a clip's WAV is made here
(~50 µs for 1.5 s); a splicing builder's JSON around it is made by the engine (it keeps the
base64 by content, ``tasks.engine.clips``, and the prompt differs from record to record).

A worker writes and reads whole frames (a pipe write of more than the pipe's 64 kB can
return short when the process is stopped and continued: Ctrl-Z then ``fg``, a debugger).
A worker whose answers cannot be read (it died, or its framing broke) is dropped: its
pending requests fail with ``WorkerLost`` and the engine does that work in its own process,
so the run goes on; the pool is then no longer ``ready`` and the engine stops using it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import pickle
import select
import signal
import struct
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

from voxbench.core.errors import VoxbenchError
from voxbench.metrics.registry import ScoringContext, score_reply
from voxbench.tasks.engine.prepare import BodySpec, Cut, Prepared, prepare_encoded

log = logging.getLogger(__name__)

_FRAME = struct.Struct(">I")
_MAX_FRAME = 1 << 30
"""A frame longer than this is a torn one (a clip's answer is ~100 kB)."""
_READ_BUFFER = 4 << 20
"""Bytes a worker's answers may queue in the engine's reader before the pipe is paused: an
answer (a clip's WAVs or request bodies) is ~50–100 kB, past asyncio's 64 kB default, which
would pause and resume reading around every one."""
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])
"""Where ``voxbench`` is imported from: put on the workers' path."""


CLOSE_WAIT_S = 2.0
"""How long ``aclose`` waits for a worker to exit once its input is closed, before killing it
(a stopped worker never would)."""


class WorkerLost(Exception):
    """A worker process ended or its answers could not be read: do the work here instead."""


class PrepareError(VoxbenchError):
    """A clip a worker could not prepare; ``category`` is the original error's class name."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category


def default_workers() -> int:
    """Worker processes: the cores beside the event loop's, at least one, at most four."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.reader: asyncio.Task[None] | None = None
        self.lost = False


class WorkerPool:
    """Worker processes (``start`` them first); each request goes to the least busy one."""

    def __init__(self, workers: int | None = None) -> None:
        self.size = workers or default_workers()
        self._workers: list[_Worker] = []
        self._starting: list[asyncio.subprocess.Process] = []
        self._ids = itertools.count()
        self._closing = False

    async def prepare(
        self,
        data: bytes | None,
        path: str | None,
        name: str,
        cut: Cut,
        spec: BodySpec | None = None,
    ) -> Prepared:
        """One clip's payloads, and its request bodies when ``spec`` says how to encode them
        (``PrepareError`` when it cannot be decoded)."""
        prepared = Prepared(*await self._submit("prepare", data, path, name, cut, spec))
        if spec is not None and prepared.b64 is not None:
            return replace(prepared, bodies=spec.spliced(prepared.b64))
        return prepared

    async def score(
        self, replies: list[tuple[list[str], str, ScoringContext]]
    ) -> list[dict[str, Any]]:
        """Each reply's metric statistics (``score_reply(metrics, prediction, context)``), in
        the workers: the batch split evenly among them, one message each (a message per reply
        would cost the event loop and the workers more than the scoring of a short one)."""
        if not replies:
            return []
        parts = max(1, min(len(self._workers) - self.lost, len(replies)))
        size = -(-len(replies) // parts)
        chunks = [replies[i : i + size] for i in range(0, len(replies), size)]
        scored = await asyncio.gather(
            *(self._submit("score", chunk) for chunk in chunks), return_exceptions=True
        )
        for outcome in scored:
            if isinstance(outcome, BaseException):
                raise outcome
        return [stats for chunk in scored for stats in chunk]  # type: ignore[union-attr]

    def _submit(self, kind: str, *args: Any) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        alive = [w for w in self._workers if not w.lost]
        if not alive:
            future.set_exception(WorkerLost("no voxbench worker process is left"))
            return future
        worker = min(alive, key=lambda w: len(w.pending))
        ident = next(self._ids)
        worker.pending[ident] = future
        message = pickle.dumps((kind, ident, *args), protocol=pickle.HIGHEST_PROTOCOL)
        stdin = worker.process.stdin
        assert stdin is not None
        try:
            stdin.write(_FRAME.pack(len(message)) + message)  # whole: the transport buffers it
        except (ConnectionError, RuntimeError) as exc:  # its input is closed: it has ended
            self._lose(worker, f"its input is closed ({exc})")
        return future

    @property
    def ready(self) -> bool:
        """Started, every worker ready for requests (none of them lost)."""
        return len(self._workers) == self.size and not any(w.lost for w in self._workers)

    @property
    def lost(self) -> int:
        """Workers dropped because they ended or their answers could not be read."""
        return sum(w.lost for w in self._workers)

    def _lose(self, worker: _Worker, why: str) -> None:
        """Drop ``worker``: fail its pending requests with ``WorkerLost`` (the engine redoes
        them in its own process) and end the process."""
        if not worker.lost:
            log.warning("voxbench worker process %d lost (%s)", worker.process.pid, why)
        worker.lost = True
        failure = WorkerLost(f"voxbench worker process {worker.process.pid} lost: {why}")
        pending, worker.pending = worker.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(failure)
        if worker.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                worker.process.kill()

    async def start(self) -> None:
        """Start the worker processes; return when they are ready."""
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": _PACKAGE_ROOT + (os.pathsep + path if path else "")}
        for _ in range(self.size):
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "voxbench.tasks.engine.pool",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=env,
                limit=_READ_BUFFER,
            )
            self._starting.append(process)
            assert process.stdout is not None
            await process.stdout.readexactly(_FRAME.size)  # ready: its imports are done
            self._starting.remove(process)
            worker = _Worker(process)
            worker.reader = asyncio.create_task(self._read(worker))
            self._workers.append(worker)

    async def _read(self, worker: _Worker) -> None:
        stream = worker.process.stdout
        assert stream is not None
        try:
            while True:
                (size,) = _FRAME.unpack(await stream.readexactly(_FRAME.size))
                if size > _MAX_FRAME:
                    raise ValueError(f"a frame of {size} bytes: the framing is broken")
                ident, ok, *rest = pickle.loads(await stream.readexactly(size))
                future = worker.pending.pop(ident)
                if future.done():
                    continue
                if ok:
                    future.set_result(rest[0])
                elif rest[0] == "prepare":
                    future.set_exception(PrepareError(*rest[1:]))
                else:
                    future.set_exception(RuntimeError(f"scoring failed in a worker: {rest[2]}"))
        except asyncio.CancelledError:
            worker.lost = True  # closed: nothing pending is answered now
            for future in worker.pending.values():
                future.cancel()
            raise
        except (asyncio.IncompleteReadError, ConnectionError):
            if self._closing and not worker.pending:
                return  # it exited as asked: its input was closed
            self._lose(worker, "it ended")
        except Exception as exc:  # a torn frame: unpickling garbage raises almost anything
            self._lose(worker, f"its answers cannot be read: {type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        """Stop the workers: each exits when its input closes; one that has not within
        ``CLOSE_WAIT_S`` (stopped, stuck) is killed."""
        self._closing = True
        for process in self._starting:  # still importing: it has done no work
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        processes = [*self._starting, *(w.process for w in self._workers)]
        for process in processes:
            if process.returncode is None and process.stdin is not None:
                process.stdin.close()
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), CLOSE_WAIT_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        self._starting.clear()
        for worker in self._workers:
            if worker.reader is not None:
                worker.reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await worker.reader
        self._workers.clear()


def _handle(kind: str, args: tuple[Any, ...]) -> Any:
    if kind == "prepare":
        data, path, name, cut, spec = args
        prepared, _ = prepare_encoded(data, path, name, cut)
        if spec is None:
            return prepared.wavs, prepared.digests, None, prepared.pieces
        # The bodies carry the audio: the WAVs need not cross the pipe too. Spliced ones
        # cross as the base64 alone (``WorkerPool.prepare`` splices them: half the bytes).
        encoded = spec.encoded(prepared)
        bodies = None if encoded.b64 is not None else encoded.bodies
        return [], encoded.digests, bodies, encoded.pieces, encoded.b64
    (replies,) = args
    return [score_reply(*reply) for reply in replies]


def _read_exactly(source: BinaryIO, size: int) -> bytes:
    """``size`` bytes of ``source`` (fewer only at its end): a read may return short."""
    parts = []
    while size:
        part = source.read(size)
        if not part:
            break
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _write_all(sink: BinaryIO, data: bytes) -> None:
    """Write all of ``data``: an unbuffered write (``PYTHONUNBUFFERED``) may write part of it,
    as a pipe write does when the process is stopped and continued."""
    view = memoryview(data)
    while view:
        written = sink.write(view)
        if written is None:  # a non-blocking sink that would block: wait for it
            select.select([], [sink], [])
            continue
        view = view[written:]
    sink.flush()


def _serve(source: BinaryIO, sink: BinaryIO) -> None:
    """A worker's loop: say it is ready, then read a request, do it, write the answer;
    until its input closes."""
    _write_all(sink, _FRAME.pack(0))
    while len(head := _read_exactly(source, _FRAME.size)) == _FRAME.size:
        (size,) = _FRAME.unpack(head)
        kind, ident, *args = pickle.loads(_read_exactly(source, size))
        try:
            answer: tuple[Any, ...] = (ident, True, _handle(kind, tuple(args)))
        except VoxbenchError as exc:
            answer = (ident, False, kind, type(exc).__name__, str(exc))
        except Exception as exc:  # a scoring bug: reported to the engine, which stops
            answer = (ident, False, kind, type(exc).__name__, f"{type(exc).__name__}: {exc}")
        message = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        _write_all(sink, _FRAME.pack(len(message)) + message)


if __name__ == "__main__":
    # Ctrl-C reaches the whole process group: the engine stops, and its workers end when it
    # closes their input, without a traceback each.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _serve(sys.stdin.buffer, sys.stdout.buffer)
