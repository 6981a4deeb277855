"""Multi-turn audio tasks: each turn one request carrying the conversation so far, over real
HTTP against the fake OpenAI-compatible server, cached per turn, the last reply scored."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from voxbench.core.errors import ConfigError
from voxbench.tasks.config import parse_config
from voxbench.tasks.datasets.suite import DATA_DIR, ensure_builtin_dataset
from voxbench.tasks.engine.prepare import Cut, prepare_clip
from voxbench.tasks.run import TaskRunResult, run_tasks
from voxbench.tasks.spec import TaskRegistry
from voxbench.testing import FakeGeminiServer, FakeOpenAIServer
from voxbench.testing.scripts import ListScript, Reply, Script, ScriptMessage

from .test_http import serving

SYSTEM = TaskRegistry().get("builtin_spoken_followups").spec.prompt.system
ASK = "Reply to the message in this audio."


class Followups(Script):
    """Says "Noted." to a first message and "green" to any later one."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        users = [m for m in conversation if m.role == "user"]
        return Reply(text="Noted." if len(users) == 1 else "It is green.")


def _run(text: str, tmp_path: Path) -> TaskRunResult:
    return run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)


def _clip(path: Path) -> str:
    """The base64 WAV a turn's clip is sent as (16 kHz, as the task sends it)."""
    from voxbench.audio.wav import read_wav

    prepared, _ = prepare_clip(read_wav(path), Cut(16_000, "truncate", 30.0, 1.0))
    return base64.b64encode(prepared.wavs[0]).decode("ascii")


def _user(text: str, audio: str | None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if audio is not None:
        parts.append({"type": "input_audio", "input_audio": {"data": audio, "format": "wav"}})
    return {"role": "user", "content": parts}


def test_each_turn_carries_the_whole_conversation(tmp_path: Path) -> None:
    folder = ensure_builtin_dataset("spoken_followups")
    items = [json.loads(line) for line in (DATA_DIR / "spoken_followups" / "items.jsonl").open()]

    def config(url: str) -> str:
        return (
            f"models: [{{name: q, model: vllm/qwen2-audio, base_url: '{url}'}}]\n"
            "tasks: [builtin_spoken_followups]\n"
        )

    with serving(FakeOpenAIServer(Followups())) as server:
        result = _run(config(server.url), tmp_path)
        bodies = [r.json() for r in server.requests]
        port = server.port
    assert len(bodies) == 2 * len(items)  # two turns a record, one request each
    expected = []
    for item in items:
        first, second = item["spoken_turns"]
        user1 = _user(
            item["turn_text"][0] or ASK,
            _clip(folder / f"{item['id']}_1.wav") if first else None,
        )
        user2 = _user(ASK, _clip(folder / f"{item['id']}_2.wav"))
        system = {"role": "system", "content": SYSTEM}
        expected.append([system, user1])
        expected.append([system, user1, {"role": "assistant", "content": "Noted."}, user2])
    key = json.dumps  # requests of different records interleave: compare as sets
    assert sorted(key(b["messages"]) for b in bodies) == sorted(key(m) for m in expected)
    assert all(b["temperature"] == 0 and b["max_tokens"] == 16 for b in bodies)
    # The last reply is the prediction; every turn's reply is kept.
    rows = {r["id"]: r for r in result.run.rows()}
    assert rows["f0"]["prediction"] == "It is green."
    assert [t["reply"] for t in rows["f4"]["turns"]] == ["Noted.", "It is green."]
    assert rows["f4"]["turns"][0]["text"] == "Remember this number: nine."
    assert rows["f4"]["turns"][0]["audio"] is None
    assert [t["reference"] for t in rows["f1"]["turns"]] == ["Noted.", "seven"]
    scores = result.scores["tasks"]["builtin_spoken_followups"]["q"]["metrics"]
    assert scores["accuracy"]["value"] == 20.0  # only f0's answer is green

    # Each turn is cached under the conversation so far: a rerun (same server) asks nothing.
    with serving(FakeOpenAIServer(Followups(), port=port)) as server:
        again = _run(config(server.url), tmp_path)
        assert server.requests == []
    assert again.requests == 0 and all(r["cached"] for r in again.run.rows())
    assert {r["id"]: r["prediction"] for r in again.run.rows()} == {
        i: r["prediction"] for i, r in rows.items()
    }


def test_gemini_takes_each_turn_as_a_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-0123456789abcdef0123456789ab")
    folder = ensure_builtin_dataset("spoken_followups")
    items = [json.loads(line) for line in (DATA_DIR / "spoken_followups" / "items.jsonl").open()]
    with serving(FakeGeminiServer(Followups())) as server:
        text = (
            f"models: [{{name: g, model: gemini/gemini-2.5-flash, base_url: '{server.url}'}}]\n"
            "tasks: [builtin_spoken_followups]\n"
        )
        result = _run(text, tmp_path)
        bodies = [r.json() for r in server.requests]
    assert len(bodies) == 2 * len(items)

    def user(text: str, audio: str | None) -> dict[str, Any]:
        parts: list[dict[str, Any]] = [{"text": text}] if text else []
        if audio is not None:
            parts.append({"inline_data": {"mime_type": "audio/wav", "data": audio}})
        return {"role": "user", "parts": parts}

    expected = []
    for item in items:
        first, _ = item["spoken_turns"]
        user1 = user(
            item["turn_text"][0] or ASK, _clip(folder / f"{item['id']}_1.wav") if first else None
        )
        user2 = user(ASK, _clip(folder / f"{item['id']}_2.wav"))
        expected.append([user1])
        expected.append([user1, {"role": "model", "parts": [{"text": "Noted."}]}, user2])
    key = json.dumps  # requests of different records interleave: compare as sets
    assert sorted(key(b["contents"]) for b in bodies) == sorted(key(c) for c in expected)
    assert all(b["systemInstruction"] == {"parts": [{"text": SYSTEM}]} for b in bodies)
    assert all(b["generationConfig"] == {"temperature": 0, "maxOutputTokens": 16} for b in bodies)
    rows = {r["id"]: r for r in result.run.rows()}
    assert [t["reply"] for t in rows["f4"]["turns"]] == ["Noted.", "It is green."]
    scores = result.scores["tasks"]["builtin_spoken_followups"]["g"]["metrics"]
    assert scores["accuracy"]["value"] == 20.0  # only f0's answer is green


def _user_task(tmp_path: Path, history: str) -> None:
    task = tmp_path / "mytasks" / "mt"
    task.mkdir(parents=True)
    (task / "mt.yaml").write_text(
        f"extends: builtin_spoken_followups\nturns: {{history: {history}}}\n"
    )


def test_reference_history_sends_the_reference_replies(tmp_path: Path) -> None:
    _user_task(tmp_path, "reference")

    class Wrong(Script):
        def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
            return Reply(text="blue")

    with serving(FakeOpenAIServer(Wrong())) as server:
        text = (
            f"models: [{{name: q, model: vllm/q, base_url: '{server.url}'}}]\n"
            "tasks: [mt]\ntasks_dirs: [mytasks]\n"
        )
        _run(text, tmp_path)
        bodies = [r.json() for r in server.requests]
    later = [b["messages"] for b in bodies if len(b["messages"]) == 4]
    assert len(later) == 5
    # The model said "blue" to the first turns; the later requests carry the reference.
    assert {m[2]["content"] for m in later} == {"Noted."}


def test_the_oracle_and_the_models_that_cannot_converse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "models: [{name: o, model: local/oracle}]\ntasks: [builtin_spoken_followups]\n"
    result = _run(text, tmp_path)
    scores = result.scores["tasks"]["builtin_spoken_followups"]["o"]["metrics"]
    assert scores["accuracy"]["value"] == 100.0
    rows = result.run.rows()
    assert all(
        [t["reply"] for t in r["turns"]] == [t["reference"] for t in r["turns"]] for r in rows
    )
    # A transcription model hears no conversation: it transcribes each turn's audio.
    tasks = "tasks: [builtin_spoken_followups]\n"
    with serving(FakeOpenAIServer(ListScript([], transcripts=["heard"] * 20))) as server:
        asr = f"models: [{{name: w, model: openai/whisper-1, base_url: '{server.url}', api_key: sk-x}}]\n"
        rows = _run(asr + tasks, tmp_path).run.rows()
        paths = [r.path for r in server.requests]
    assert set(paths) == {"/v1/audio/transcriptions"} and len(paths) == 9  # f4 opens with text
    f4 = next(r for r in rows if r["id"] == "f4")
    assert [t["reply"] for t in f4["turns"]] == ["", "heard"] and f4["error"] is None
    # A chat provider without multi-turn support (a plug-in keeping the base class's
    # default, played here by Gemini without its own): each record fails, saying so.
    from voxbench.providers.completion import AudioCompletionClient
    from voxbench.providers.gemini import GeminiAudioCompletion

    monkeypatch.setattr(
        GeminiAudioCompletion,
        "complete_conversation",
        AudioCompletionClient.complete_conversation,
    )
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-0123456789abcdef0123456789ab")
    gemini = "models: [{name: g, model: gemini/gemini-2.5-flash, base_url: 'http://127.0.0.1:9'}]\n"
    rows = _run(gemini + tasks, tmp_path).run.rows()
    assert len(rows) == 5 and all(r["error"]["category"] == "ConfigError" for r in rows)
    assert "cannot take a multi-turn audio conversation" in rows[0]["error"]["message"]
    spoken = (
        "models: [{name: v, model: vllm/q, base_url: 'http://x', output_audio: {voice: alloy}}]\n"
    )
    with pytest.raises(ConfigError, match="multi-turn"):
        _run(spoken + tasks, tmp_path)


def test_bad_turn_columns_name_the_record_and_column(tmp_path: Path) -> None:
    data = tmp_path / "mytasks" / "mt" / "data"
    data.mkdir(parents=True)
    (data / "manifest.jsonl").write_text(
        json.dumps({"id": "x", "reference": "r", "t": "not a list"}) + "\n"
    )
    (data.parent / "mt.yaml").write_text(
        "dataset: {path: data}\nturns: {text: t}\nmetrics: [wer]\n"
    )
    text = "models: [{name: o, model: local/oracle}]\ntasks: [mt]\ntasks_dirs: [mytasks]\n"
    with pytest.raises(ConfigError, match=r"record 1: column t \(turns.text\) is not a list"):
        _run(text, tmp_path)
    with pytest.raises(ConfigError, match="history: reference needs the replies column"):
        (data.parent / "mt.yaml").write_text(
            "dataset: {path: data}\nturns: {text: t, history: reference}\nmetrics: [wer]\n"
        )
        _run(text, tmp_path)


def test_every_turn_scored_pools_over_turns(tmp_path: Path) -> None:
    task = tmp_path / "mytasks" / "mt"
    task.mkdir(parents=True)
    (task / "mt.yaml").write_text(
        "extends: builtin_spoken_followups\nturns: {score: every}\nanswer: text\nmetrics: [wer]\n"
    )

    def config(url: str, metrics: str = "") -> str:
        return (
            f"models: [{{name: q, model: vllm/q, base_url: '{url}'}}]\n"
            f"tasks: [{{name: mt{metrics}}}]\ntasks_dirs: [mytasks]\n"
        )

    with serving(FakeOpenAIServer(Followups())) as server:
        result = _run(config(server.url), tmp_path)
        port = server.port
    # Turn 1: "Noted." against "Noted." (5 × 0 of 1 word); turn 2: "It is green." against
    # one word: 2 errors for f0, 3 for the others. Pooled over the 10 turns: 14 / 10.
    wer = result.scores["tasks"]["mt"]["q"]["metrics"]["wer"]
    assert wer["value"] == 140.0 and wer["n"] == 10
    row = next(r for r in result.run.rows() if r["id"] == "f0")
    assert [t["scores"]["wer"]["errors"] for t in row["turns"]] == [0, 2]
    # Other metrics later: the turns are scored again from their kept replies, asking nothing.
    with serving(FakeOpenAIServer(Followups(), port=port)) as server:  # the same server
        again = _run(config(server.url, ", metrics: [cer]"), tmp_path)
        assert server.requests == []
    assert again.scores["tasks"]["mt"]["q"]["metrics"]["cer"]["n"] == 10
    judged = (
        config("http://x", ", metrics: [llm_judge]")
        + "judge: {model: openai/gpt-4o-mini, api_key: sk-x}\n"
    )
    with pytest.raises(ConfigError, match="grades only a record's last reply"):
        _run(judged, tmp_path)
