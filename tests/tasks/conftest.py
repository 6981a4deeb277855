"""Fixtures of the audio-task tests: a tiny local dataset, recording fake endpoints."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voxbench.audio.wav import Audio, write_wav
from voxbench.core.errors import ProviderError
from voxbench.tasks.config import EndpointConfig, ModelConfig, parse_config
from voxbench.tasks.run import TaskRunResult, run_tasks

TINY_ROWS = [
    # id, seconds, language, speaker, reference
    ("a", 0.5, "en", "s1", "one two three"),
    ("b", 1.0, "en", "s2", "four five six"),
    ("c", 1.5, "fr", "s1", "sept huit neuf"),
    ("d", 2.0, "fr", "s2", "dix onze douze"),
    ("e", 2.5, "en", "s1", "thirteen fourteen"),
    ("f", 3.0, "en", "s2", "fifteen sixteen"),
]


@pytest.fixture(scope="session")
def suite_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One synthesized built-in suite for the whole session."""
    return tmp_path_factory.mktemp("suite-cache")


@pytest.fixture(autouse=True)
def shared_suite_cache(
    hermetic_env: None, suite_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOXBENCH_CACHE_DIR", str(suite_cache))


def write_tiny_dataset(folder: Path, manifest: str = "manifest.jsonl") -> Path:
    """Six tone clips of 0.5–3 s with a JSONL (or CSV) manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (rid, seconds, language, speaker, reference) in enumerate(TINY_ROWS):
        t = np.arange(int(16000 * seconds)) / 16000
        write_wav(folder / f"{rid}.wav", Audio(0.2 * np.sin(2 * np.pi * (200 + 50 * i) * t), 16000))
        rows.append(
            {
                "id": rid,
                "audio": f"{rid}.wav",
                "reference": reference,
                "language": language,
                "speaker": speaker,
            }
        )
    for i, row in enumerate(rows):  # extra columns the schema-effect tests point at
        row.update({"alt_audio": rows[-1 - i]["audio"], "opts": ["s1", "s2"], "tl": "zh"})
    if manifest.endswith(".csv"):
        lines = ["id,audio,reference,language,speaker"] + [
            ",".join(str(r[k]) for k in ("id", "audio", "reference", "language", "speaker"))
            for r in rows
        ]
        (folder / manifest).write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        (folder / manifest).write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
    return folder


TINY_TASK = """\
description: tiny tones
dataset: {path: data}
prompt: {user: "Transcribe {speaker}.", system: "You transcribe."}
metrics: [wer]
"""


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    """A user registry folder with the task ``tiny`` (family ``mine``) on the tiny dataset."""
    root = tmp_path / "mytasks"
    write_tiny_dataset(root / "mine" / "data")
    (root / "mine" / "tiny.yaml").write_text(TINY_TASK, encoding="utf-8")
    return root


@dataclass
class FakeEndpoints:
    """Endpoints that answer each record's reference after ``latency`` seconds, and record calls."""

    latency: dict[str, float] = field(default_factory=dict)
    """base_url → seconds per request (default ``default_latency``)."""
    default_latency: float = 0.0
    fail_first: int = 0
    """Each record's first N calls fail with a retryable 503."""
    fatal: set[str] = field(default_factory=set)
    """References whose calls fail with a non-retryable 400."""
    reply: Callable[[Any], str] | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    in_flight: dict[str, int] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)

    def factory(self, model: ModelConfig, endpoint: EndpointConfig, api: str) -> Any:
        return _Endpoint(self, model, endpoint, api)


class _Endpoint:
    def __init__(
        self, owner: FakeEndpoints, model: ModelConfig, endpoint: EndpointConfig, api: str
    ):
        self.owner, self.model, self.endpoint, self.api = owner, model, endpoint, api

    async def answer(self, audio: Audio, wav: bytes, request: Any) -> str:
        owner, url = self.owner, self.endpoint.base_url
        owner.calls.append(
            {
                "model": self.model.name,
                "api": self.api,
                "base_url": url,
                "api_key": self.endpoint.api_key,
                "prompt": request.prompt,
                "system": request.system,
                "temperature": request.generation.temperature,
                "max_tokens": request.generation.max_tokens,
                "seconds": audio.duration,
                "rate": audio.sample_rate,
                "reference": request.reference,
                "voice": request.voice,
            }
        )
        owner.in_flight[url] = owner.in_flight.get(url, 0) + 1
        owner.peak[url] = max(owner.peak.get(url, 0), owner.in_flight[url])
        try:
            await asyncio.sleep(owner.latency.get(url, owner.default_latency))
            if request.reference in owner.fatal:
                raise ProviderError(
                    "HTTP 400: bad audio", category="bad_request", retryable=False, status=400
                )
            seen = owner.attempts.get(request.reference, 0) + 1
            owner.attempts[request.reference] = seen
            if seen <= owner.fail_first:
                raise ProviderError("HTTP 503: busy", category="server", retryable=True, status=503)
            return owner.reply(request) if owner.reply else request.reference
        finally:
            owner.in_flight[url] -= 1

    async def converse(self, turns: tuple[Any, ...], request: Any) -> str:
        """A multi-turn request: recorded with its conversation (role, text, WAV bytes)."""
        self.owner.calls.append(
            {
                "model": self.model.name,
                "api": self.api,
                "system": request.system,
                "reference": request.reference,
                "turns": tuple(
                    (t.role, t.text, len(t.audio_wav) if t.audio_wav else 0) for t in turns
                ),
            }
        )
        return self.owner.reply(request) if self.owner.reply else request.reference

    async def aclose(self) -> None:
        return None


def run_yaml(
    text: str, tmp_path: Path, fakes: FakeEndpoints | None = None, **kwargs: Any
) -> TaskRunResult:
    """Run a config text (written to ``tmp_path/eval.yaml``) with fake endpoints."""
    path = tmp_path / "eval.yaml"
    path.write_text(text, encoding="utf-8")
    config = parse_config(text, file=path)
    factory = (fakes or FakeEndpoints()).factory
    return run_tasks(config, text, config_file=path, endpoint_factory=factory, **kwargs)
