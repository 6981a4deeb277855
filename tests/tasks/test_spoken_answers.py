"""Models that answer aloud, graded by ear: ``output_audio`` and ``llm_judge_audio`` end to end.

The model under test is the fake OpenAI-compatible server asked for ``modalities: ["text",
"audio"]`` (it speaks its reply with eSpeak NG); the judge is the same fake in audio-judge
mode, hearing each kept answer over ``input_audio``.
"""

from __future__ import annotations

import json
import wave
from collections.abc import Sequence
from pathlib import Path

import pytest

from voxbench.core.errors import ConfigError
from voxbench.tasks.config import parse_config
from voxbench.tasks.run import run_tasks
from voxbench.testing import FakeOpenAIServer
from voxbench.testing.audio_judge import Heard, ScriptedAudioJudge, form_answer
from voxbench.testing.scripts import Reply, Script, ScriptMessage

from .test_http import serving

SILENT = "four five six"
"""The record whose answer the fake model leaves empty: it comes back without audio."""


class SayAloud(Script):
    """Says the prompt's ``say: …`` text, except for ``SILENT`` (an empty reply, no audio)."""

    def reply(self, conversation: Sequence[ScriptMessage]) -> Reply:
        said = conversation[-1].text.split("say: ", 1)[1].split("[audio", 1)[0].strip()
        return Reply(text="" if said == SILENT else said)


def _write_task(tasks_dir: Path) -> None:
    (tasks_dir / "mine" / "cheer.yaml").write_text(
        "extends: tiny\nprompt: {user: 'say: {reference}'}\n"
        "metrics: [wer, llm_judge_audio]\n"
        "audio_judge: {rubric: emotion, options: {target_emotion: cheerful}}\n"
    )


def _config(model_url: str, judge_url: str, extra: str = "") -> str:
    return (
        f"models: [{{name: speaker, model: openai/gpt-4o-audio-preview, base_url: '{model_url}',"
        " output_audio: {voice: alloy}, backoff_base_s: 0}]\n"
        f"audio_judge: {{model: openai/gpt-4o-audio-preview, base_url: '{judge_url}'{extra}}}\n"
        "tasks: [cheer]\ntasks_dirs: [mytasks]\n"
    )


def _judge_answer(heard: Heard) -> str:
    # A cheerful score for what it hears; it must have heard real speech.
    assert heard.seconds > 0.3, heard.seconds
    return form_answer({"emotion": 4}, "upbeat")


def test_spoken_answers_are_kept_and_graded_by_ear(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    _write_task(tasks_dir)
    judge_script = ScriptedAudioJudge([_judge_answer])
    with (
        serving(FakeOpenAIServer(SayAloud())) as model,
        serving(FakeOpenAIServer(judge_script)) as judge,
    ):
        text = _config(model.url, judge.url, ", max_concurrency: 2")
        result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
        asked = [r.json() for r in model.requests]
        judged = len(judge.requests)
    assert {b["modalities"][-1] for b in asked} == {"audio"}
    assert {json.dumps(b["audio"]) for b in asked} == {'{"voice": "alloy", "format": "wav"}'}
    rows = {r["id"]: r for r in result.run.rows()}
    assert len(rows) == 6 and judged == 5  # the answer without audio is never sent
    spoken = rows["a"]
    assert spoken["prediction"] == "one two three"  # the transcript is the prediction
    assert spoken["answer_audio"] == "answers/cheer/speaker/a.wav"
    with wave.open(str(result.run.path / spoken["answer_audio"])) as kept:
        assert kept.getnframes() / kept.getframerate() > 0.3
    assert spoken["scores"]["llm_judge_audio"] == {
        "score": 0.75, "passed": 1, "undecided": 0, "means": {"emotion": 4}
    }  # fmt: skip
    silent = rows["b"]
    assert silent["answer_audio"] is None and silent["prediction"] == ""
    assert silent["scores"]["llm_judge_audio"]["no_audio"] == 1
    assert silent["scores"]["llm_judge_audio"]["undecided"] == 1
    metric = result.scores["tasks"]["cheer"]["speaker"]["metrics"]["llm_judge_audio"]
    assert metric["value"] == 75.0 and metric["n"] == 5  # not scored 0: counted apart
    assert metric["undecided"] == 1 and metric["no_audio"] == 1
    scores_json = json.loads((result.run.path / "scores.json").read_text())
    assert scores_json["tasks"]["cheer"]["speaker"]["metrics"]["llm_judge_audio"]["value"] == 75.0
    report = (result.run.path / "report.md").read_text()
    assert "75.0" in report and "1 undecided, 1 without audio" in report
    assert (
        "Audio judge: `openai/gpt-4o-audio-preview` — 6 spoken answers, 1 without audio" in report
    )
    info = result.run.info()["audio_judge"]
    assert info["model"] == "openai/gpt-4o-audio-preview"
    assert info["asked"] == 6 and info["calls"] == 5 and info["no_audio"] == 1


def test_a_repeated_run_asks_nobody_again(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    _write_task(tasks_dir)
    with (
        serving(FakeOpenAIServer(SayAloud())) as model,
        serving(FakeOpenAIServer(ScriptedAudioJudge([form_answer({"emotion": 5})]))) as judge,
    ):
        text = _config(model.url, judge.url)
        first = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
        calls = (len(model.requests), len(judge.requests))
        again = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
        assert (len(model.requests), len(judge.requests)) == calls
    assert again.requests == 0 and again.run.info()["audio_judge"]["from_cache"] == 5
    rows = {r["id"]: r for r in again.run.rows()}
    # The cached answer's audio is kept in the new run too, and graded the same.
    assert (again.run.path / rows["a"]["answer_audio"]).read_bytes() == (
        first.run.path / rows["a"]["answer_audio"]
    ).read_bytes()
    assert again.scores["tasks"]["cheer"]["speaker"]["metrics"]["llm_judge_audio"]["value"] == 100.0


@pytest.mark.parametrize(
    ("config", "task", "field"),
    [
        ("models: [{name: m, model: local/oracle, output_audio: {voice: alloy}}]\n",
         "", "models[0].output_audio"),
        ("models: [{name: m, model: openai/gpt-4o-audio-preview}]\n", "", "audio_judge"),
        ("models: [{name: m, model: openai/gpt-4o-audio-preview}]\n"
         "audio_judge: {model: openai/gpt-4o-audio-preview}\n", "none", "names no rubric"),
        ("models: [{name: m, model: openai/gpt-4o-audio-preview}]\n"
         "audio_judge: {model: openai/gpt-4o-audio-preview}\n", "colour", "colour"),
    ],
)  # fmt: skip
def test_a_spoken_task_without_what_it_needs_names_the_field(
    tmp_path: Path, tasks_dir: Path, config: str, task: str, field: str
) -> None:
    _write_task(tasks_dir)
    if task == "none":
        (tasks_dir / "mine" / "cheer.yaml").write_text(
            "extends: tiny\nmetrics: [llm_judge_audio]\n"
        )
    elif task == "colour":
        (tasks_dir / "mine" / "cheer.yaml").write_text(
            "extends: tiny\nmetrics: [llm_judge_audio]\n"
            "audio_judge: {rubric: emotion, options: {colour: red}}\n"
        )
    text = config + "tasks: [cheer]\ntasks_dirs: [mytasks]\n"
    with pytest.raises(ConfigError, match=field.replace("[", r"\[")):
        run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)


def test_the_realtime_judge_hears_the_spoken_answers(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from voxbench.testing.openai_realtime import FakeRealtimeJudgeServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    _write_task(tasks_dir)
    script = ScriptedAudioJudge([_judge_answer])
    with (
        serving(FakeOpenAIServer(SayAloud())) as model,
        serving(FakeRealtimeJudgeServer(script, api_key="sk-test-judge")) as judge,
    ):
        text = _config(model.url, judge.url).replace(
            "openai/gpt-4o-audio-preview, base_url: '" + judge.url,
            "openai-realtime/gpt-realtime, base_url: '" + judge.url,
        )
        assert "openai-realtime/gpt-realtime" in text
        result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
        judgments = list(judge.judgments)
    # Turn detection off, the whole answer committed, text out: one judgment per spoken answer.
    assert len(judgments) == 5
    assert {j["turn_detection"] for j in judgments} == {None}
    metric = result.scores["tasks"]["cheer"]["speaker"]["metrics"]["llm_judge_audio"]
    assert metric["value"] == 75.0 and metric["no_audio"] == 1


async def test_the_client_asks_for_speech_and_reads_message_audio() -> None:
    import base64

    import httpx

    from voxbench.core.errors import ProviderError
    from voxbench.providers.completion import AudioCompletionRequest
    from voxbench.providers.registry import Role, make

    bodies: list[dict] = []
    audio_field: list[object] = [{"id": "a1", "data": base64.b64encode(b"RIFFwav").decode(),
                                  "expires_at": 1, "transcript": "hi there"}]  # fmt: skip

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        message = {"role": "assistant", "content": None, "audio": audio_field[0]}
        return httpx.Response(200, json={"choices": [{"index": 0, "message": message}]})

    client = make(
        Role.AUDIO_COMPLETION, "openai/gpt-4o-audio-preview", api_key="sk-test-0123456789",
        transport=httpx.MockTransport(handle),
    )  # fmt: skip
    request = AudioCompletionRequest(audio_wav=b"RIFF", prompt="say hi", output_voice="coral")
    reply = await client.complete_audio(request)
    assert reply.text == "hi there" and reply.audio_wav == b"RIFFwav"
    assert bodies[0]["modalities"] == ["text", "audio"]
    assert bodies[0]["audio"] == {"voice": "coral", "format": "wav"}
    audio_field[0] = {"transcript": "no data"}
    with pytest.raises(ProviderError, match="message.audio has no base64 data"):
        await client.complete_audio(request)
    audio_field[0] = None
    plain = await client.complete_audio(AudioCompletionRequest(audio_wav=b"RIFF", prompt="x"))
    assert "modalities" not in bodies[-1] and "audio" not in bodies[-1]
    assert plain.audio_wav is None
    await client.aclose()


def test_audio_quality_scores_each_spoken_answer_offline_without_a_judge(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``audio_quality`` (DNSMOS P.835) hears each kept answer on this machine: no audio judge
    is configured or asked; the answer without audio is counted apart (issue 28)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    (tasks_dir / "mine" / "clean.yaml").write_text(
        "extends: tiny\nprompt: {user: 'say: {reference}'}\nmetrics: [audio_quality]\n"
    )
    with serving(FakeOpenAIServer(SayAloud())) as model:
        text = (
            f"models: [{{name: speaker, model: openai/gpt-4o-audio-preview, base_url: "
            f"'{model.url}', output_audio: {{voice: alloy}}, backoff_base_s: 0}}]\n"
            "tasks: [clean]\ntasks_dirs: [mytasks]\n"
        )
        result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
    rows = {r["id"]: r for r in result.run.rows()}
    spoken = rows["a"]["scores"]["audio_quality"]
    assert spoken["undecided"] == 0 and 1.0 <= spoken["ovrl"] <= 5.0 and spoken["windows"] >= 1
    silent = next(r for r in rows.values() if r["reference"] == SILENT)
    assert silent["scores"]["audio_quality"]["no_audio"] == 1
    pooled = result.scores["tasks"]["clean"]["speaker"]["metrics"]["audio_quality"]
    assert pooled["n"] == 5 and pooled["undecided"] == 1 and pooled["no_audio"] == 1
    assert 1.0 <= pooled["value"] <= 5.0 and {"sig", "bak"} <= set(pooled)
