"""``llm_judge_audio``: a spoken answer graded by the audio judge, and its pooling."""

from __future__ import annotations

import numpy as np
import pytest

from voxbench.core.errors import ConfigError
from voxbench.tasks.audio_judge_metric import AudioJudgeSpec, grade_spoken_answer
from voxbench.tasks.metrics import METRICS
from voxbench.testing import FakeOpenAIServer
from voxbench.testing.audio_judge import ScriptedAudioJudge, form_answer

from .helpers import spoken


async def test_a_spoken_answer_is_graded_and_pooled() -> None:
    answers = ["- Politeness (1-5): 5 - thanked\n- Warmth (1-5): 3 - flat", "no form", "nope"]
    async with FakeOpenAIServer(ScriptedAudioJudge(answers)) as server:
        spec = AudioJudgeSpec.parse(
            {"rubric": "tone", "judge": "openai/gpt-4o-audio-preview", "base_url": server.url}
        )
        judge = spec.make_judge()
        first = await grade_spoken_answer(judge, spoken())
        second = await grade_spoken_answer(judge, spoken("Hello there."))
    assert first == {
        "score": 0.75, "passed": 0, "undecided": 0, "means": {"politeness": 5, "warmth": 3}
    }  # fmt: skip
    assert second["undecided"] == 1 and "malformed" in second["reason"]
    metric = METRICS["llm_judge_audio"]
    pooled = metric.pool([first, second], np.random.default_rng(0))
    assert pooled["value"] == 75.0 and pooled["undecided"] == 1 and pooled["n"] == 1
    assert metric.score("a text reply", None)["undecided"] == 1  # text is never graded by ear


async def test_a_passing_answer() -> None:
    async with FakeOpenAIServer(ScriptedAudioJudge([form_answer({"emotion": 4})])) as server:
        spec = AudioJudgeSpec.parse(
            {"rubric": "emotion", "judge": "openai/gpt-4o-audio-preview", "base_url": server.url,
             "options": {"target_emotion": "cheerful"}, "samples": 2}
        )  # fmt: skip
        stats = await grade_spoken_answer(spec.make_judge(), spoken())
    assert stats["passed"] == 1 and stats["score"] == 0.75


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"judge": "openai/m"}, "audio_judge.rubric"),
        ({"rubric": "tone", "judge": "openai/m", "samples": 0}, "audio_judge.samples"),
        ({"rubric": "tone", "judge": "openai/m", "colour": 1}, "unknown key 'colour'"),
    ],
)
def test_a_bad_audio_judge_block_names_its_field(block, field) -> None:
    with pytest.raises(ConfigError, match=field):
        AudioJudgeSpec.parse(block, file="eval.yaml")
