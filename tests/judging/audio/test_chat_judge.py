"""Audio-in chat judges against the fake chat servers: ``input_audio`` / ``inline_data``,
logprob-weighted scores, samples, the corrective exchange and the cache."""

from __future__ import annotations

import math

import pytest

from voxbench.core.errors import ConfigError
from voxbench.judging.audio.chat_judge import ChatAudioJudge
from voxbench.judging.audio.engine import RubricJudge
from voxbench.judging.audio.factory import make_audio_judge
from voxbench.judging.audio.segments import Clip
from voxbench.judging.cache import JudgmentCache
from voxbench.testing import FakeGeminiServer, FakeOpenAIServer
from voxbench.testing.audio_judge import ScriptedAudioJudge, form_answer

from .helpers import accent, spoken

SCORE_4_MOSTLY = {"4": [("4", math.log(0.6)), ("5", math.log(0.3)), ("3", math.log(0.1))]}


def judge(server: FakeOpenAIServer, **kwargs) -> RubricJudge:
    client = ChatAudioJudge.create("openai/gpt-4o-audio-preview", base_url=server.url)
    return RubricJudge(client, accent(), **kwargs)


async def test_the_clip_goes_as_input_audio_and_logprobs_weight_the_score() -> None:
    audio = spoken()
    script = ScriptedAudioJudge([form_answer({"accent": 4})], logprobs=SCORE_4_MOSTLY)
    async with FakeOpenAIServer(script) as server:
        result = await judge(server).judge_clip(Clip("c", audio))
    body = server.requests[0].json()
    assert body["logprobs"] is True and body["top_logprobs"] == 10 and body["temperature"] == 0
    system, user = body["messages"]
    assert system["role"] == "system" and "Evaluation Criteria" in system["content"]
    parts = {p["type"]: p for p in user["content"]}
    assert parts["input_audio"]["input_audio"]["format"] == "wav"
    assert script.heard[0].seconds == pytest.approx(audio.duration, abs=0.01)
    verdict = result.criteria["accent"]
    assert verdict.mean == 4  # the sampled score
    assert verdict.weighted_mean == pytest.approx(0.6 * 4 + 0.3 * 5 + 0.1 * 3)


async def test_samples_give_mean_spread_and_distribution() -> None:
    answers = [form_answer({"accent": s}) for s in (4, 5, 4, 3, 4)]
    async with FakeOpenAIServer(ScriptedAudioJudge(answers)) as server:
        result = await judge(server, samples=5, concurrency=1).judge_clip(Clip("c", spoken()))
    verdict = result.criteria["accent"]
    assert verdict.mean == 4 and verdict.std == pytest.approx(0.632, abs=1e-3)
    assert verdict.distribution == {"3": 1, "4": 3, "5": 1}
    assert {r.json()["temperature"] for r in server.requests} == {1.0}  # samples must differ


async def test_the_corrective_exchange_is_a_follow_up_message() -> None:
    script = ScriptedAudioJudge(["It is a 4.", form_answer({"accent": 4})])
    async with FakeOpenAIServer(script) as server:
        result = await judge(server).judge_clip(Clip("c", spoken()))
    assert result.criteria["accent"].mean == 4
    roles = [m["role"] for m in server.requests[1].json()["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert server.requests[1].json()["messages"][2]["content"] == "It is a 4."


async def test_cached_by_audio_rubric_judge_and_sample_index(tmp_path) -> None:
    cache = JudgmentCache(tmp_path / "cache")
    answers = [form_answer({"accent": 4})]
    async with FakeOpenAIServer(ScriptedAudioJudge(answers)) as server:
        first = await judge(server, samples=2, cache=cache).judge_clip(Clip("c", spoken()))
        assert len(server.requests) == 2
        again = await judge(server, samples=2, cache=cache).judge_clip(Clip("c", spoken()))
        assert len(server.requests) == 2 and again.from_cache == 2 and again.calls == 0
        more = await judge(server, samples=3, cache=cache).judge_clip(Clip("c", spoken()))
        assert len(server.requests) == 3 and more.from_cache == 2  # only sample 3 is new
        other = await judge(server, cache=cache).judge_clip(Clip("c", spoken(voice="en-us")))
        assert len(server.requests) == 4 and other.from_cache == 0  # other audio
        british = RubricJudge(
            ChatAudioJudge.create("openai/gpt-4o-audio-preview", base_url=server.url),
            accent("Scottish"),
            cache=cache,
        )
        await british.judge_clip(Clip("c", spoken()))
        assert len(server.requests) == 5  # another rubric hash
    assert first.criteria["accent"].scores == again.criteria["accent"].scores


async def test_gemini_generate_content_hears_inline_audio(monkeypatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "g-test")
    script = ScriptedAudioJudge([form_answer({"accent": 2})])
    async with FakeGeminiServer(script) as server:
        client = make_audio_judge("gemini/gemini-2.5-flash", base_url=server.url)
        result = await RubricJudge(client, accent()).judge_clip(Clip("c", spoken()))
    assert result.criteria["accent"].mean == 2
    body = server.requests[0].json()
    parts = body["contents"][0]["parts"]
    assert parts[1]["inline_data"]["mime_type"] == "audio/wav"
    assert "Evaluation Form" in body["systemInstruction"]["parts"][0]["text"]
    assert "[audio:" in script.heard[0].text  # the fake heard a WAV clip


def test_judges_come_from_the_provider_registry() -> None:
    assert make_audio_judge("openai-realtime/gpt-realtime").name == "openai-realtime/gpt-realtime"
    assert make_audio_judge("vllm/qwen2-audio").name == "vllm/qwen2-audio"
    with pytest.raises(ConfigError, match="--judge.*unknown"):
        make_audio_judge("nobody/model")
    with pytest.raises(ConfigError, match="gemini-live cannot judge audio yet"):
        make_audio_judge("gemini-live/gemini-3.1-flash-live-preview")
