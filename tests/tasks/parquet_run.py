"""One task over a local parquet dataset, run through a mock chat endpoint: the rows it
wrote and the request bodies it sent (for tests that compare two ways of running it)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import soundfile as sf

from voxbench.tasks.config import EndpointConfig, ModelConfig, parse_config
from voxbench.tasks.engine.models import ChatEndpoint
from voxbench.tasks.run import run_tasks


def sine_clip(seconds: float, hz: float, fmt: str, rate: int) -> bytes:
    """A PCM16 ``fmt`` ("WAV", "FLAC") file of a 0.2-amplitude sine."""
    t = np.arange(int(rate * seconds)) / rate
    buffer = io.BytesIO()
    sf.write(buffer, (0.2 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate,
             format=fmt, subtype="PCM_16")  # fmt: skip
    return buffer.getvalue()


def run_parquet_task(
    tmp_path: Path,
    name: str,
    answer: Callable[[bytes], str],
    *,
    task_extra: str = "",
    concurrency: int = 2,
) -> tuple[list[str], list[bytes]]:
    """Run the task ``pq`` over ``tmp_path/data`` (WER against ``reference``) into
    ``tmp_path/name``; ``answer`` gives the model's reply to each request body. Returns the
    rows (as sorted JSON, latency left out) and the sorted bodies sent."""
    sent: list[bytes] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        reply = {"role": "assistant", "content": answer(request.content)}
        return httpx.Response(200, json={"choices": [{"index": 0, "message": reply}]})

    def factory(model: ModelConfig, endpoint: EndpointConfig, api: str) -> Any:
        return ChatEndpoint(model, endpoint, transport=httpx.MockTransport(handle))

    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "pq.yaml").write_text(
        f"dataset: {{path: '{tmp_path / 'data'}', format: parquet}}\n"
        "prompt: {user: 'Transcribe {id}.'}\nmetrics: [wer]\n" + task_extra
    )
    text = (
        "models: [{name: m, model: vllm/q, api_key: sk-test-parquet-0123, "
        f"max_concurrency: {concurrency}}}]\n"
        f"tasks: [pq]\ntasks_dirs: ['{tasks}']\noutput_dir: '{tmp_path / name}'\n"
    )
    result = run_tasks(parse_config(text, file=None), text, endpoint_factory=factory)
    rows = sorted(
        json.dumps({k: v for k, v in row.items() if k != "latency_s"}, sort_keys=True)
        for row in result.run.rows()
    )
    return rows, sorted(sent)
