"""The judgment cache keys on everything that changes an answer (issue 28, defect 1): a
judgment is never served across endpoints, temperatures or samples."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from voxbench.judging.audio.chat_judge import ChatAudioJudge
from voxbench.judging.audio.engine import CACHE_KIND, RubricJudge
from voxbench.judging.audio.segments import Clip
from voxbench.judging.cache import JudgmentCache, fields_key
from voxbench.testing import FakeOpenAIServer
from voxbench.testing.audio_judge import ScriptedAudioJudge, form_answer

from .helpers import accent, spoken

FIELDS = st.fixed_dictionaries(
    {
        "endpoint": st.sampled_from(["http://127.0.0.1:1/v1", "https://api.openai.com/v1", ""]),
        "model": st.sampled_from(["openai/gpt-4o-audio-preview", "vllm/qwen2-audio"]),
        "rubric": st.text("0123456789abcdef", min_size=16, max_size=16),
        "steps": st.text("0123456789abcdef", min_size=16, max_size=16),
        "temperature": st.sampled_from([0.0, 1.0, 0.7]),
        "sample": st.integers(0, 9),
        "audio": st.text("0123456789abcdef", min_size=8, max_size=8),
        "prompt_version": st.sampled_from(["1-aaaa", "2-bbbb"]),
        "request": st.text("0123456789abcdef", min_size=16, max_size=16),
    }
)
OTHER = {
    "endpoint": "http://elsewhere:9/v1",
    "model": "gemini/gemini-2.5-flash",
    "rubric": "f" * 17,
    "steps": "e" * 17,
    "temperature": 0.3,
    "sample": 10,
    "audio": "d" * 9,
    "prompt_version": "3-cccc",
    "request": "c" * 17,
}


@settings(max_examples=60, deadline=None)
@given(fields=FIELDS, changed=st.sampled_from(sorted(OTHER)))
def test_changing_any_one_field_changes_the_key_and_misses(
    fields: dict, changed: str, tmp_path_factory
) -> None:
    cache = JudgmentCache(tmp_path_factory.mktemp("cache"))
    key = fields_key(CACHE_KIND, fields)
    cache.put(key, {"fields": fields, "scores": {"accent": 4}})
    assert cache.get_matching(key, fields) is not None
    other = {**fields, changed: OTHER[changed]}
    other_key = fields_key(CACHE_KIND, other)
    assert other_key != key
    assert cache.get_matching(other_key, other) is None
    # Even an entry found under a key is refused when its stored fields differ.
    assert cache.get_matching(key, other) is None


def _judge(url: str, samples: int, cache: JudgmentCache) -> RubricJudge:
    client = ChatAudioJudge.create("openai/gpt-4o-audio-preview", base_url=url)
    return RubricJudge(client, accent(), samples=samples, cache=cache)


async def test_a_judgment_is_never_served_across_endpoints(tmp_path: Path) -> None:
    cache = JudgmentCache(tmp_path / "cache")
    clip = Clip("c", spoken())
    async with FakeOpenAIServer(ScriptedAudioJudge([form_answer({"accent": 1})])) as fake:
        first = await _judge(fake.url, 1, cache).judge_clip(clip)
    async with FakeOpenAIServer(ScriptedAudioJudge([form_answer({"accent": 5})])) as real:
        second = await _judge(real.url, 1, cache).judge_clip(clip)
        assert len(real.requests) == 1  # asked: the other endpoint's answer is not served
    assert first.criteria["accent"].mean == 1 and second.criteria["accent"].mean == 5
    assert second.from_cache == 0 and second.calls == 1


async def test_more_samples_never_mix_the_greedy_answer_into_the_spread(tmp_path: Path) -> None:
    cache = JudgmentCache(tmp_path / "cache")
    clip = Clip("c", spoken())
    answers = [form_answer({"accent": 5})] + [form_answer({"accent": 2})] * 3
    async with FakeOpenAIServer(ScriptedAudioJudge(answers)) as server:
        greedy = await _judge(server.url, 1, cache).judge_clip(clip)
        spread = await _judge(server.url, 3, cache).judge_clip(clip)
        temperatures = [r.json()["temperature"] for r in server.requests]
        again = await _judge(server.url, 3, cache).judge_clip(clip)
        assert len(server.requests) == 4  # the three samples are cached now
    assert greedy.criteria["accent"].scores == [5]
    assert temperatures == [0, 1.0, 1.0, 1.0]
    assert spread.from_cache == 0 and spread.calls == 3
    assert spread.criteria["accent"].scores == [2, 2, 2]
    assert again.from_cache == 3 and again.criteria["accent"].scores == [2, 2, 2]
