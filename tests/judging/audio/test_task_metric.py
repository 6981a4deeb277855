"""``llm_judge_audio``: a spoken answer graded by the audio judge, and its pooling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voxbench.core.errors import ConfigError
from voxbench.metrics.registry import METRICS
from voxbench.tasks.audio_judge_metric import AnswerJudge
from voxbench.tasks.config import AudioJudgeConfig, parse_config
from voxbench.tasks.spec import AudioRubric
from voxbench.testing import FakeOpenAIServer
from voxbench.testing.audio_judge import ScriptedAudioJudge, form_answer

from .helpers import spoken


def _judge(url: str, tmp_path: Path, samples: int = 1) -> AnswerJudge:
    config = AudioJudgeConfig(model="openai/gpt-4o-audio-preview", base_url=url, samples=samples)
    return AnswerJudge(config, tmp_path / "judgments")


async def test_a_spoken_answer_is_graded_and_pooled(tmp_path: Path) -> None:
    answers = ["- Politeness (1-5): 5 - thanked\n- Warmth (1-5): 3 - flat", "no form", "nope"]
    async with FakeOpenAIServer(ScriptedAudioJudge(answers)) as server:
        judge = _judge(server.url, tmp_path)
        tone = AudioRubric(rubric="tone")
        first = await judge.grade(tone, spoken(), "", "first")
        second = await judge.grade(tone, spoken("Hello there."), "", "second")
        without = await judge.grade(tone, None, "", "third")
        await judge.aclose()
    assert first == {
        "score": 0.75, "passed": 0, "undecided": 0, "means": {"politeness": 5, "warmth": 3}
    }  # fmt: skip
    assert second["undecided"] == 1 and "malformed" in second["reason"]
    assert without["undecided"] == 1 and without["no_audio"] == 1
    # Undecided records store no score (never a 0.0 a reader could average in).
    assert second["score"] is None and without["score"] is None
    assert second["passed"] is None and without["passed"] is None
    assert judge.stats.asked == 3 and judge.stats.no_audio == 1 and judge.stats.undecided == 2
    metric = METRICS["llm_judge_audio"]
    pooled = metric.pool([first, second, without], np.random.default_rng(0))
    assert pooled["value"] == 75.0 and pooled["n"] == 1
    assert pooled["undecided"] == 2 and pooled["no_audio"] == 1
    assert metric.score("a text reply", None)["undecided"] == 1  # text is never graded by ear


async def test_a_passing_answer(tmp_path: Path) -> None:
    async with FakeOpenAIServer(ScriptedAudioJudge([form_answer({"emotion": 4})])) as server:
        judge = _judge(server.url, tmp_path, samples=2)
        cheerful = AudioRubric(rubric="emotion", options={"target_emotion": "cheerful"})
        stats = await judge.grade(cheerful, spoken(), "", "answer")
        await judge.aclose()
    assert stats["passed"] == 1 and stats["score"] == 0.75
    assert judge.stats.calls == 2  # one per sample


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ("{base_url: 'http://x'}", "audio_judge.model"),
        ("{model: openai/m, samples: 0}", "audio_judge.samples"),
        ("{model: openai/m, colour: 1}", "audio_judge.colour"),
    ],
)
def test_a_bad_audio_judge_block_names_its_field(block: str, field: str) -> None:
    text = f"models: [{{name: m, model: local/oracle}}]\ntasks: [all]\naudio_judge: {block}\n"
    with pytest.raises(ConfigError, match=field):
        parse_config(text, file="eval.yaml")


def test_the_readme_spoken_task_example_plans(tmp_path: Path) -> None:
    """Issue 28, defect 5: the README's two-column example (task | eval.yaml) plans
    (``build_plan`` checks the task's rubric against the config's audio judge)."""
    from voxbench.tasks.config import parse_config
    from voxbench.tasks.plan import build_plan

    readme = Path(__file__).resolve().parents[3] / "README.md"
    section = readme.read_text(encoding="utf-8").split("**In audio tasks**", 1)[1]
    lines = section.split("```yaml\n", 1)[1].split("```", 1)[0].splitlines()
    column = lines[0].index("# eval.yaml")
    task = "\n".join(line[:column].rstrip() for line in lines[1:])
    config_text = "\n".join(line[column:] for line in lines[1:] if len(line) > column)
    (tmp_path / "mytasks" / "mine").mkdir(parents=True)
    (tmp_path / "mytasks" / "mine" / "cheerful.yaml").write_text(task, encoding="utf-8")
    plan = build_plan(parse_config(config_text, file=None), base_dir=tmp_path)
    assert {job.task.name for job in plan.jobs} == {"cheerful"}
    spec = plan.registry.get("cheerful").spec
    assert spec.metrics == ["llm_judge_audio"] and spec.audio_judge is not None
