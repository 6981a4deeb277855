"""A judge of the target's own model family is warned about (issue 28: self-preference)."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import EvaluationOptions, evaluate_run_async
from voxbench.judging.audio.realtime_judge import RealtimeAudioJudge
from voxbench.judging.audio.self_preference import family, self_preference_warning
from voxbench.runner.launch import run_conversation
from voxbench.testing.audio_judge import ScriptedAudioJudge, form_answer
from voxbench.testing.openai_realtime import FakeRealtimeJudgeServer

from .test_run_judge import audio_run_config


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai-realtime/gpt-realtime", "OpenAI GPT"),
        ("openai/gpt-4o-audio-preview", "OpenAI GPT"),
        ("openai/o4-mini", "OpenAI GPT"),
        ("gemini/gemini-2.5-flash", "Google Gemini"),
        ("vllm/Qwen/Qwen2-Audio-7B-Instruct", "Qwen"),
        ("vllm/mistralai/Voxtral-Mini-3B-2507", "Mistral"),
        ("azure-openai-realtime/prod", None),  # a deployment name says nothing
        ("local/oracle", None),
        ("openai-compatible/phonetic-gateway", None),  # "pho…" is not Phi
    ],
)
def test_the_family_comes_from_the_model_name(name: str, expected: str | None) -> None:
    assert family(name) == expected


def test_a_warning_only_within_one_family() -> None:
    warning = self_preference_warning("openai-realtime/gpt-realtime", "openai/gpt-4o-mini")
    assert warning is not None and "OpenAI GPT" in warning and "self-preference" in warning
    assert self_preference_warning("gemini/gemini-2.5-flash", "openai/gpt-4o-mini") is None
    assert self_preference_warning("azure-openai-realtime/prod", "openai/gpt-4o") is None


async def test_the_run_judge_status_warns_of_self_preference(tmp_path: Path) -> None:
    path = await run_conversation(audio_run_config(tmp_path))
    run = RunDirectory(path)
    info = run.info()
    run.write_info(info.model_copy(update={"target": info.target.model_copy(
        update={"name": "openai-realtime/gpt-4o-realtime-preview"})}))  # fmt: skip
    script = ScriptedAudioJudge([form_answer({"accent": 4})])
    async with FakeRealtimeJudgeServer(script) as server:
        client = RealtimeAudioJudge("openai-realtime", "gpt-realtime", base_url=server.url)
        evaluation = await evaluate_run_async(
            path,
            EvaluationOptions(audio_rubric="accent", audio_rubric_options={"target_accent": "RP"},
                              audio_client=client, cache_dir=tmp_path / "cache"),
        )  # fmt: skip
    status = evaluation.card.judge_status["audio-rubric"]
    assert "warning: self-preference" in status and "OpenAI GPT" in status
