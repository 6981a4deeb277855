"""Worker processes prepare clips and score replies exactly as the engine's own process does."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pickle
import signal
import struct
import threading
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from voxbench.providers.completion import AudioCompletionRequest
from voxbench.tasks.config import EndpointConfig, ModelConfig, parse_config
from voxbench.tasks.engine import work_queue as engine_module
from voxbench.tasks.engine.models import ChatEndpoint
from voxbench.tasks.engine.pool import WorkerPool
from voxbench.tasks.engine.prepare import BodySpec
from voxbench.tasks.run import run_tasks

from .conftest import FakeEndpoints, run_yaml

CONFIG = (
    "models: [{name: m, model: vllm/q, max_concurrency: 3}]\n"
    "tasks: [tiny, long, broken]\ntasks_dirs: [mytasks]\n"
)


def _tasks(tasks_dir: Path) -> None:
    mine = tasks_dir / "mine"
    (mine / "long.yaml").write_text(
        "extends: tiny\nmetrics: [wer, cer, bleu, exact_match]\nsample_rate: 8000\n"
        "long_audio: {policy: chunk, max_seconds: 1, overlap_seconds: 0.25}\n"
    )
    lines = (mine / "data" / "manifest.jsonl").read_text().splitlines()
    (mine / "data" / "broken.jsonl").write_text(
        lines[0] + "\n" + lines[1].replace('"b.wav"', '"missing.wav"') + "\n"
    )
    (mine / "broken.yaml").write_text(
        "extends: tiny\ndataset: {path: data, manifest: broken.jsonl}\n"
    )


class _CountingPool(WorkerPool):
    asked: ClassVar[list[str]] = []
    """One entry per clip prepared and per reply scored (``score`` sends them in batches)."""

    def _submit(self, kind: str, *args: Any) -> Any:
        self.asked.extend([kind] * (len(args[0]) if kind == "score" else 1))
        return super()._submit(kind, *args)


def _run(
    tmp_path: Path, name: str, pool: bool, monkeypatch: pytest.MonkeyPatch, first: bool = True
) -> Any:
    monkeypatch.setattr(engine_module, "POOL_MIN_RECORDS", 0 if pool else 10**9)
    monkeypatch.setattr(engine_module, "POOL_FIRST", first)
    monkeypatch.setattr(engine_module, "WorkerPool", _CountingPool)
    _CountingPool.asked.clear()
    fakes = FakeEndpoints(reply=lambda r: r.reference.upper() + " extra")
    result = run_yaml(CONFIG + f"output_dir: {name}\n", tmp_path, fakes)
    rows = sorted(
        json.dumps({k: v for k, v in row.items() if k != "latency_s"}, sort_keys=True)
        for row in result.run.rows()
    )
    calls = sorted(json.dumps(c, sort_keys=True) for c in fakes.calls)
    if first:  # every record prepared (14) and every reply scored (13: a clip is missing)
        assert _CountingPool.asked.count("prepare") == (14 if pool else 0)
        assert _CountingPool.asked.count("score") == (13 if pool else 0)
    return result, rows, calls


def test_the_pool_gives_the_same_bytes(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tasks(tasks_dir)
    here, here_rows, here_calls = _run(tmp_path, "here", False, monkeypatch)
    there, there_rows, there_calls = _run(tmp_path, "there", True, monkeypatch)
    assert _timeless(here.scores) == _timeless(there.scores)
    assert here_rows == there_rows and here_calls == there_calls
    errors = [json.loads(r)["error"] for r in there_rows if json.loads(r)["error"]]
    assert [e["category"] for e in errors] == ["AudioError"]
    assert "missing.wav" in errors[0]["message"]
    long_calls = [json.loads(c) for c in there_calls if json.loads(c)["rate"] == 8000]
    assert len(long_calls) > 6  # chunked clips: several pieces per record


def _timeless(scores: dict[str, Any]) -> dict[str, Any]:
    """Scores without the latency medians (the only figures timing moves)."""
    return {
        **scores,
        "tasks": {
            task: {
                model: {k: v for k, v in entry.items() if k != "median_latency_s"}
                for model, entry in by_model.items()
            }
            for task, by_model in scores["tasks"].items()
        },
    }


def test_threads_work_while_the_workers_start_and_when_they_cannot(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tasks(tasks_dir)
    here, here_rows, _ = _run(tmp_path, "here", False, monkeypatch)
    mixed, mixed_rows, _ = _run(tmp_path, "mixed", True, monkeypatch, first=False)
    assert here_rows == mixed_rows and _timeless(here.scores) == _timeless(mixed.scores)

    async def no_workers(self: WorkerPool) -> None:
        raise OSError("no processes here")

    monkeypatch.setattr(WorkerPool, "start", no_workers)
    alone, alone_rows, _ = _run(tmp_path, "alone", True, monkeypatch, first=False)
    assert here_rows == alone_rows and _CountingPool.asked == []


def test_models_share_each_record_prepared_once(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared: list[str] = []
    real = engine_module._prepare_here

    passing = engine_module._passed_through

    def counting(record: Any, cut: Any, spec: Any = None) -> Any:
        prepared.append(record.audio.name)
        return real(record, cut, spec)

    def counting_passed(source: Any, *args: Any) -> bool:
        passed = passing(source, *args)
        if passed:
            prepared.append(source[2])  # the clip's name
        return passed

    monkeypatch.setattr(engine_module, "_prepare_here", counting)
    monkeypatch.setattr(engine_module, "_passed_through", counting_passed)
    config = (
        "models: [{name: m, model: vllm/q}, {name: n, model: vllm/r, max_concurrency: 1}]\n"
        "tasks: [tiny]\ntasks_dirs: [mytasks]\n"
    )
    fakes = FakeEndpoints()
    result = run_yaml(config, tmp_path, fakes)
    clips = {row["audio"] for row in result.run.rows()}
    assert sorted(prepared) == sorted(clips) and len(clips) == 6
    assert len(fakes.calls) == 12  # each model asked about each record


def test_workers_encode_the_request_bodies_the_client_would_send(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real OpenAI-compatible client, spoken to over an in-process transport: with the
    workers encoding each request body, the server gets the very bytes (and headers) the
    client encodes itself, and the records are the same."""
    _tasks(tasks_dir)
    bodies_built: list[int] = []
    real_encoded = BodySpec.encoded

    def counting(self: BodySpec, prepared: Any) -> Any:
        bodies_built.append(len(prepared.wavs))  # counts clips encoded in this process only
        return real_encoded(self, prepared)

    def runs(name: str, pool: bool) -> tuple[list[str], list[bytes], list[Any]]:
        monkeypatch.setattr(engine_module, "POOL_MIN_RECORDS", 0 if pool else 10**9)
        monkeypatch.setattr(engine_module, "POOL_FIRST", True)
        monkeypatch.setattr(engine_module, "WorkerPool", _CountingPool)
        _CountingPool.asked.clear()
        sent: list[bytes] = []
        prepared: list[Any] = []

        def handle(request: httpx.Request) -> httpx.Response:
            sent.append(request.content)
            assert request.headers["content-type"] == "application/json"
            assert request.headers["authorization"] == "Bearer sk-test-bodies-0123"
            body = json.loads(request.content)
            prompt = body["messages"][-1]["content"][0]["text"]
            reply = {"role": "assistant", "content": f"said {len(prompt)} {len(request.content)}"}
            return httpx.Response(200, json={"choices": [{"index": 0, "message": reply}]})

        def factory(model: ModelConfig, endpoint: EndpointConfig, api: str) -> Any:
            client = ChatEndpoint(model, endpoint, transport=httpx.MockTransport(handle))
            real = client.client.complete_audio

            async def complete_audio(request: AudioCompletionRequest) -> Any:
                prepared.append(request.prepared_body is not None)
                return await real(request)

            client.client.complete_audio = complete_audio  # type: ignore[method-assign]
            return client

        text = CONFIG.replace("model: vllm/q", "model: vllm/q, api_key: sk-test-bodies-0123")
        path = tmp_path / f"{name}.yaml"
        text += f"output_dir: {name}\n"
        path.write_text(text)
        config = parse_config(text, file=path)
        result = run_tasks(config, text, config_file=path, endpoint_factory=factory)
        rows = sorted(
            json.dumps({k: v for k, v in row.items() if k != "latency_s"}, sort_keys=True)
            for row in result.run.rows()
        )
        return rows, sorted(sent), prepared

    monkeypatch.setattr(BodySpec, "encoded", counting)
    here_rows, here_sent, here_prepared = runs("here", False)
    built_here = len(bodies_built)  # without workers: encoded with the clip, off the client
    there_rows, there_sent, there_prepared = runs("there", True)
    assert here_rows == there_rows and here_sent == there_sent
    assert len(there_sent) > 13  # chunked clips: several requests for some records
    assert all(here_prepared) and all(there_prepared) and built_here > 0
    assert len(bodies_built) == built_here  # with them: encoded in the workers, not here


class _Trouble(_CountingPool):
    """Does ``trouble(pid)`` to the worker of the ``at``-th clip it is asked to prepare."""

    at: ClassVar[int] = 4
    trouble: ClassVar[Any] = None

    def _submit(self, kind: str, *args: Any) -> Any:
        future = super()._submit(kind, *args)
        if kind == "prepare" and self.asked.count("prepare") == self.at:
            for worker in self._workers:
                type(self).trouble(worker.process.pid)
        return future


def _troubled_run(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, trouble: Any
) -> tuple[Any, list[str]]:
    monkeypatch.setattr(engine_module, "POOL_MIN_RECORDS", 0)
    monkeypatch.setattr(engine_module, "POOL_FIRST", True)
    monkeypatch.setattr(engine_module, "WorkerPool", _Trouble)
    monkeypatch.setattr(_Trouble, "trouble", staticmethod(trouble))
    _CountingPool.asked.clear()
    fakes = FakeEndpoints(reply=lambda r: r.reference.upper() + " extra")
    result = run_yaml(CONFIG + f"output_dir: {name}\n", tmp_path, fakes)
    rows = sorted(
        json.dumps({k: v for k, v in row.items() if k != "latency_s"}, sort_keys=True)
        for row in result.run.rows()
    )
    return result, rows


def test_a_worker_that_dies_mid_run_costs_nothing(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed while it holds requests: they are done in the engine's process, and so is the
    rest of the run (the records are those of a run without workers)."""
    _tasks(tasks_dir)
    _, here_rows, _ = _run(tmp_path, "here", False, monkeypatch)
    result, rows = _troubled_run(
        tmp_path, "killed", monkeypatch, lambda pid: os.kill(pid, signal.SIGKILL)
    )
    assert rows == here_rows and result.run.info()["status"] == "finished"


def test_a_worker_stopped_and_continued_mid_run(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-Z then ``fg`` (SIGSTOP, SIGCONT): the run completes with the same records."""
    _tasks(tasks_dir)
    _, here_rows, _ = _run(tmp_path, "here", False, monkeypatch)

    def stop_then_continue(pid: int) -> None:
        os.kill(pid, signal.SIGSTOP)
        threading.Timer(0.3, os.kill, (pid, signal.SIGCONT)).start()

    result, rows = _troubled_run(tmp_path, "stopped", monkeypatch, stop_then_continue)
    assert rows == here_rows and result.run.info()["status"] == "finished"


class _Dribble(io.RawIOBase):
    """A pipe end that writes or reads at most ``step`` bytes a call (a stopped and continued
    process's pipe write returns short)."""

    def __init__(self, data: bytes = b"", step: int = 1000) -> None:
        self.data, self.out, self.step = data, bytearray(), step

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def write(self, chunk: Any) -> int:
        part = bytes(chunk[: self.step])
        self.out += part
        return len(part)

    def readinto(self, buffer: Any) -> int:
        size = min(self.step, len(buffer))
        part, self.data = self.data[:size], self.data[size:]
        buffer[: len(part)] = part
        return len(part)


def test_a_worker_writes_and_reads_whole_frames_through_short_writes(tasks_dir: Path) -> None:
    from voxbench.metrics.registry import ScoringContext
    from voxbench.tasks.engine import pool as pool_module

    context = ScoringContext("one two three", "en", "", "")
    requests = b"".join(
        _frame(pickle.dumps(("score", i, [(["wer"], "one two " + "x" * 3000 * i, context)])))
        for i in range(3)
    )
    source, sink = _Dribble(requests, step=700), _Dribble(step=1000)
    pool_module._serve(source, sink)  # type: ignore[arg-type]
    stream = io.BytesIO(bytes(sink.out))
    assert stream.read(4) == _frame(b"")  # ready
    answers = []
    while head := stream.read(4):
        (size,) = struct.unpack(">I", head)
        answers.append(pickle.loads(stream.read(size)))
    assert [a[0] for a in answers] == [0, 1, 2] and all(a[1] for a in answers)


def _frame(message: bytes) -> bytes:
    return struct.pack(">I", len(message)) + message


def test_torn_answers_drop_the_worker_instead_of_hanging() -> None:
    """Garbage on a worker's output: its requests fail with WorkerLost (the engine redoes
    them), the pool is no longer ready, and closing it does not wait forever."""
    from voxbench.metrics.registry import ScoringContext
    from voxbench.tasks.engine.pool import WorkerLost

    async def main() -> None:
        pool = WorkerPool(1)
        await pool.start()
        try:
            (worker,) = pool._workers
            assert worker.process.stdout is not None
            os.kill(worker.process.pid, signal.SIGSTOP)  # its answer cannot come first
            future = pool._submit("score", [(["wer"], "a", ScoringContext("a", "en", "", ""))])
            worker.process.stdout.feed_data(_frame(b"\x80\x05 not a pickle"))
            with pytest.raises(WorkerLost):
                await asyncio.wait_for(future, 5)
            assert not pool.ready and pool.lost == 1
            with pytest.raises(WorkerLost):
                await asyncio.wait_for(pool._submit("score", []), 5)
        finally:
            await asyncio.wait_for(pool.aclose(), 10)

    asyncio.run(main())


def test_the_first_ctrl_c_stops_a_run_whose_worker_is_stuck(
    tmp_path: Path, tasks_dir: Path
) -> None:
    """A worker stopped for good holds requests: one SIGINT ends the run (exit 130, the run
    marked interrupted), and ``--resume`` finishes it."""
    import subprocess
    import sys
    import time

    _tasks(tasks_dir)
    script = tmp_path / "stuck.py"
    script.write_text(
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent.parent.parent)!r})\n"
        "from pathlib import Path\n"
        "from tests.tasks.conftest import FakeEndpoints, run_yaml\n"
        "from voxbench.tasks.engine import work_queue as engine\n"
        "from voxbench.tasks.engine.pool import WorkerPool\n"
        "class Stuck(WorkerPool):\n"
        "    def _submit(self, kind, *args):\n"
        "        future = super()._submit(kind, *args)\n"
        "        for worker in self._workers:\n"
        "            os.kill(worker.process.pid, signal.SIGSTOP)\n"
        "        Path(sys.argv[1], 'stuck').touch()\n"
        "        return future\n"
        "engine.POOL_MIN_RECORDS, engine.POOL_FIRST, engine.WorkerPool = 0, True, Stuck\n"
        f"text = {CONFIG!r}\n"
        "try:\n"
        "    run_yaml(text, Path(sys.argv[1]), FakeEndpoints())\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(130)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen([sys.executable, str(script), str(tmp_path)], cwd=tmp_path, env=env)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "stuck").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        os.kill(process.pid, signal.SIGINT)
        assert process.wait(timeout=30) == 130
    finally:
        if process.poll() is None:
            process.kill()
    (run_json,) = (tmp_path / "runs" / "tasks").glob("*/run.json")
    assert json.loads(run_json.read_text())["status"] == "interrupted"
    fakes = FakeEndpoints(reply=lambda r: r.reference.upper() + " extra")
    result = run_tasks(None, "", resume=run_json.parent, endpoint_factory=fakes.factory)
    assert result.run.info()["status"] == "finished"
    assert len(result.run.rows()) == 14


def test_a_run_done_before_its_workers_are_ready_does_not_wait_for_them(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers still starting when the last record is written were never used: the run
    stops them instead of waiting for their imports."""
    _tasks(tasks_dir)
    _, here_rows, _ = _run(tmp_path, "here", False, monkeypatch)

    async def never_ready(self: WorkerPool) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(WorkerPool, "start", never_ready)
    outcome: list[Any] = []
    thread = threading.Thread(
        target=lambda: outcome.append(_run(tmp_path, "early", True, monkeypatch, first=False)),
        daemon=True,
    )
    thread.start()
    thread.join(60)
    assert outcome, "the run waited for workers it never used"
    assert outcome[0][1] == here_rows
