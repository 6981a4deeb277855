"""Worker processes prepare clips and score replies exactly as the engine's own process does."""

from __future__ import annotations

import json
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

    def counting(record: Any, cut: Any) -> Any:
        prepared.append(record.id)
        return real(record, cut)

    monkeypatch.setattr(engine_module, "_prepare_here", counting)
    config = (
        "models: [{name: m, model: vllm/q}, {name: n, model: vllm/r, max_concurrency: 1}]\n"
        "tasks: [tiny]\ntasks_dirs: [mytasks]\n"
    )
    fakes = FakeEndpoints()
    run_yaml(config, tmp_path, fakes)
    assert sorted(prepared) == ["a", "b", "c", "d", "e", "f"]
    assert len(fakes.calls) == 12  # each model asked about each record


def test_workers_encode_the_request_bodies_the_client_would_send(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real OpenAI-compatible client, spoken to over an in-process transport: with the
    workers encoding each request body, the server gets the very bytes (and headers) the
    client encodes itself, and the records are the same."""
    _tasks(tasks_dir)
    bodies_built: list[int] = []
    real_bodies = BodySpec.bodies

    def counting(self: BodySpec, wavs: list[bytes]) -> list[bytes]:
        bodies_built.append(len(wavs))  # counts calls in this process only
        return real_bodies(self, wavs)

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

    monkeypatch.setattr(BodySpec, "bodies", counting)
    here_rows, here_sent, here_prepared = runs("here", False)
    there_rows, there_sent, there_prepared = runs("there", True)
    assert here_rows == there_rows and here_sent == there_sent
    assert len(there_sent) > 13  # chunked clips: several requests for some records
    assert not any(here_prepared) and all(there_prepared)
    assert bodies_built == []  # the encoding happened in the worker processes, not here
