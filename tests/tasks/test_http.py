"""Task runs over real HTTP against the fake OpenAI-compatible and Gemini servers."""

from __future__ import annotations

import asyncio
import base64
import io
import threading
import wave
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from voxbench.tasks.config import parse_config
from voxbench.tasks.run import run_tasks
from voxbench.testing import FakeGeminiServer, FakeOpenAIServer
from voxbench.testing.scripts import Reply, Script, ScriptMessage


class SayScript(Script):
    """Repeats what the prompt asks to be said (``say: …`` up to the audio part)."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        text = conversation[-1].text
        return Reply(text=text.split("say: ", 1)[1].split("[audio", 1)[0].strip())


@contextmanager
def serving(server: Any) -> Iterator[Any]:
    """Run a fake server on its own event loop in a thread (``run_tasks`` owns another loop)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def _say_task(tasks_dir: Path) -> None:
    (tasks_dir / "mine" / "say.yaml").write_text(
        "extends: tiny\nprompt: {user: 'say: {reference}', system: 'Speaker {speaker}.'}\n"
        "generation: {temperature: 0.2, max_tokens: 32}\nsample_rate: 8000\n"
    )


def test_openai_compatible_chat_with_input_audio_and_retry_after(
    tmp_path: Path, tasks_dir: Path
) -> None:
    _say_task(tasks_dir)
    with serving(FakeOpenAIServer(SayScript(), faults=["429@1:retry_after=0"])) as server:
        text = (
            f"models: [{{name: q, model: vllm/qwen2-audio, base_url: '{server.url}', max_concurrency: 2,"
            " retries: 1, backoff_base_s: 0}]\n"
            "tasks: [say]\ntasks_dirs: [mytasks]\n"
        )
        result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
        bodies = [r.json() for r in server.requests]
    entry = result.scores["tasks"]["say"]["q"]
    assert entry["errors"] == 0 and entry["metrics"]["wer"]["value"] == 0.0
    assert len(bodies) == 7  # one 429, retried
    body = bodies[-1]
    assert (
        body["model"] == "qwen2-audio" and body["temperature"] == 0.2 and body["max_tokens"] == 32
    )
    assert body["messages"][0] == {"role": "system", "content": body["messages"][0]["content"]}
    assert body["messages"][0]["content"].startswith("Speaker s")
    audio_part = body["messages"][1]["content"][1]["input_audio"]
    with wave.open(io.BytesIO(base64.b64decode(audio_part["data"]))) as clip:
        assert clip.getframerate() == 8000 and clip.getnchannels() == 1


def test_gemini_inline_audio(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-0123456789abcdef0123456789ab")
    _say_task(tasks_dir)
    with serving(FakeGeminiServer(SayScript())) as server:
        text = (
            f"models: [{{name: g, model: gemini/gemini-2.5-flash, base_url: '{server.url}'}}]\n"
            "tasks: [say]\ntasks_dirs: [mytasks]\n"
        )
        result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
        body = server.requests[0].json()
    assert result.scores["tasks"]["say"]["g"]["metrics"]["wer"]["value"] == 0.0
    assert body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 32}
    assert "inline_data" in body["contents"][0]["parts"][1]


def test_openai_transcription_api(tmp_path: Path, tasks_dir: Path) -> None:
    from voxbench.testing.scripts import ListScript

    script = ListScript([], transcripts=["hello"])
    with serving(FakeOpenAIServer(script)) as server:
        text = (
            f"models: [{{name: w, model: openai/whisper-1, base_url: '{server.url}', api_key: sk-x}}]\n"
            "tasks: [tiny]\ntasks_dirs: [mytasks]\n"
        )
        result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
        paths = {r.path for r in server.requests}
    assert paths == {"/v1/audio/transcriptions"}
    assert {r["prediction"] for r in result.run.rows()} == {"hello"}
    assert result.run.info()["models"][0]["api"] == "transcription"


@pytest.mark.parametrize("pooled", [False, True], ids=["threads", "workers"])
def test_records_are_the_same_through_the_lean_client_and_httpx(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch, pooled: bool
) -> None:
    from voxbench.providers import openai_compat
    from voxbench.tasks.engine import work_queue as engine_module

    monkeypatch.setattr(engine_module, "POOL_MIN_RECORDS", 0 if pooled else 10**9)
    monkeypatch.setattr(engine_module, "POOL_FIRST", True)
    _say_task(tasks_dir)
    runs, chosen = [], []

    def applies(url: str) -> bool:
        chosen.append(lean)
        return lean

    monkeypatch.setattr(openai_compat, "lean_http_applies", applies)
    with serving(FakeOpenAIServer(SayScript())) as server:
        for lean in (True, False):
            text = (
                f"models: [{{name: q, model: vllm/qwen2-audio, base_url: '{server.url}',"
                " max_concurrency: 3}]\n"
                f"tasks: [say]\ntasks_dirs: [mytasks]\noutput_dir: runs-{lean}\n"
            )
            result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
            assert result.requests == 6  # separate caches: each run asks every record
            runs.append((result.run.path / "records.jsonl").read_text().splitlines())
        bodies = [r.body for r in server.requests]
    assert set(chosen) == {True, False}  # one run on each client
    assert len(runs[0]) == 6 and not any('"error": {' in line for line in runs[0])
    untimed = [
        sorted(line.replace(line.split('"latency_s": ')[1].split(",")[0], "_") for line in run)
        for run in runs
    ]
    assert untimed[0] == untimed[1]
    assert sorted(bodies[:6]) == sorted(bodies[6:])  # the same bytes sent, too


def test_transcription_models_keep_max_concurrency_in_flight(
    tmp_path: Path, tasks_dir: Path
) -> None:
    """Awaited on the event loop (not the default thread pool, whose cores + 4 threads
    capped them at 6 on 2 cores): the server sees max_concurrency requests at once."""
    from voxbench.testing.scripts import ListScript

    from .fake_judge import TrackingServer

    for rate in (8000, 11025, 12000, 22050):  # four WAVs of each clip: 30 distinct requests
        (tasks_dir / "mine" / f"tiny_{rate}.yaml").write_text(
            f"extends: tiny\nsample_rate: {rate}\n"
        )
    server = TrackingServer(ListScript([], transcripts=["hello"]), ttfb_ms=150)
    with serving(server):
        text = (
            f"models: [{{name: w, model: openai/whisper-1, base_url: '{server.url}', "
            "api_key: sk-x, max_concurrency: 16}]\ntasks: [mine]\ntasks_dirs: [mytasks]\n"
        )
        result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
    assert result.requests == 30 and server.peak == 16
    assert result.run.run_info().inference.max_in_flight == 16  # type: ignore[union-attr]
