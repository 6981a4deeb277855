"""Worker processes for a run's CPU work: preparing clips and scoring replies.

Decoding, soxr, WAV encoding and hashing take ~0.3 ms a clip and WER normalisation ~0.1 ms
a reply. In a thread of the engine's process that CPU fights the event loop for the GIL
(every socket call then waits for it); in worker processes it runs on other cores and the
loop only moves bytes. The workers (``python -m voxbench.tasks.engine.pool``) read
length-prefixed pickled requests on stdin and answer on stdout; the event loop itself writes
and reads the pipes (no thread in the engine's process). A worker runs the same functions the
engine runs in-process (``prepare_clip``, each metric's ``score``, the client's
``body_builder``), so results are the same bytes. Building the request bodies here (base64
and JSON, ~0.1 ms a clip) leaves the event loop only sending them.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import pickle
import signal
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

from voxbench.core.errors import VoxbenchError
from voxbench.metrics.registry import ScoringContext, score_reply
from voxbench.tasks.engine.prepare import BodySpec, Cut, Prepared, decode_encoded, prepare_clip

_FRAME = struct.Struct(">I")
_READ_BUFFER = 4 << 20
"""Bytes a worker's answers may queue in the engine's reader before the pipe is paused: an
answer (a clip's WAVs or request bodies) is ~50–100 kB, past asyncio's 64 kB default, which
would pause and resume reading around every one."""
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])
"""Where ``voxbench`` is imported from: put on the workers' path."""


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


class WorkerPool:
    """Worker processes (``start`` them first); each request goes to the least busy one."""

    def __init__(self, workers: int | None = None) -> None:
        self.size = workers or default_workers()
        self._workers: list[_Worker] = []
        self._starting: list[asyncio.subprocess.Process] = []
        self._ids = itertools.count()

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
        return Prepared(*await self._submit("prepare", data, path, name, cut, spec))

    async def score(
        self, replies: list[tuple[list[str], str, ScoringContext]]
    ) -> list[dict[str, Any]]:
        """Each reply's metric statistics (``score_reply(metrics, prediction, context)``), in
        the workers: the batch split evenly among them, one message each (a message per reply
        would cost the event loop and the workers more than the scoring of a short one)."""
        if not replies:
            return []
        parts = min(len(self._workers), len(replies))
        size = -(-len(replies) // parts)
        chunks = [replies[i : i + size] for i in range(0, len(replies), size)]
        scored = await asyncio.gather(*(self._submit("score", chunk) for chunk in chunks))
        return [stats for chunk in scored for stats in chunk]

    def _submit(self, kind: str, *args: Any) -> asyncio.Future[Any]:
        assert self._workers, "start the pool first"
        worker = min(self._workers, key=lambda w: len(w.pending))
        ident = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        worker.pending[ident] = future
        message = pickle.dumps((kind, ident, *args), protocol=pickle.HIGHEST_PROTOCOL)
        stdin = worker.process.stdin
        assert stdin is not None
        stdin.write(_FRAME.pack(len(message)) + message)
        return future

    @property
    def ready(self) -> bool:
        """Started, every worker ready for requests."""
        return len(self._workers) == self.size

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
        except (asyncio.IncompleteReadError, ConnectionError):
            failure = RuntimeError("a voxbench worker process ended unexpectedly")
            for future in worker.pending.values():
                if not future.done():
                    future.set_exception(failure)
            worker.pending.clear()

    async def aclose(self) -> None:
        """Stop the workers (each exits when its input closes)."""
        for process in self._starting:
            if process.returncode is None and process.stdin is not None:
                process.stdin.close()
            await process.wait()
        self._starting.clear()
        for worker in self._workers:
            if worker.process.stdin is not None:
                worker.process.stdin.close()
        for worker in self._workers:
            await worker.process.wait()
            if worker.reader is not None:
                await worker.reader
        self._workers.clear()


def _handle(kind: str, args: tuple[Any, ...]) -> Any:
    if kind == "prepare":
        data, path, name, cut, spec = args
        prepared, _ = prepare_clip(decode_encoded(data, path, name), cut)
        if spec is None:
            return prepared.wavs, prepared.digests, None, prepared.pieces
        # The bodies carry the audio: the WAVs need not cross the pipe too.
        return [], prepared.digests, spec.bodies(prepared.wavs), prepared.pieces
    (replies,) = args
    return [score_reply(*reply) for reply in replies]


def _serve(source: BinaryIO, sink: BinaryIO) -> None:
    """A worker's loop: say it is ready, then read a request, do it, write the answer;
    until its input closes."""
    sink.write(_FRAME.pack(0))
    sink.flush()
    while head := source.read(_FRAME.size):
        (size,) = _FRAME.unpack(head)
        kind, ident, *args = pickle.loads(source.read(size))
        try:
            answer: tuple[Any, ...] = (ident, True, _handle(kind, tuple(args)))
        except VoxbenchError as exc:
            answer = (ident, False, kind, type(exc).__name__, str(exc))
        except Exception as exc:  # a scoring bug: reported to the engine, which stops
            answer = (ident, False, kind, type(exc).__name__, f"{type(exc).__name__}: {exc}")
        message = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        sink.write(_FRAME.pack(len(message)) + message)
        sink.flush()


if __name__ == "__main__":
    # Ctrl-C reaches the whole process group: the engine stops, and its workers end when it
    # closes their input, without a traceback each.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _serve(sys.stdin.buffer, sys.stdout.buffer)
