"""``llm_judge_audio``: an audio task's spoken answers graded by the audio rubric judge.

A task declares the rubric and its parameters; the eval config names the judge that hears
audio, and a model that answers aloud (``output_audio``)::

    # the task file                          # eval.yaml
    metrics: [llm_judge_audio]               models: [{name: m, model: openai/gpt-4o-audio-preview,
    audio_judge:                                       output_audio: {voice: alloy}}]
      rubric: emotion                        audio_judge: {model: openai-realtime/gpt-realtime,
      options: {target_emotion: cheerful}                  max_concurrency: 4, samples: 1}

In a task run the engine keeps each spoken answer under the run directory and ``AnswerJudge``
grades it, ``max_concurrency`` clips at a time, judgments cached in the run's output folder.
A record whose answer came without audio is undecided with ``no_audio``, never scored 0.

``AnswerJudge.grade`` judges one answer (the clip, and its transcript for rubrics that
compare the two) with the task's rubric and returns the metric's per-record statistics:
``score`` — the mean over criteria of (mean − low) / (high − low), so 1 is every criterion
at the top of its scale — ``passed`` (every criterion reached its ``pass_at``), the raw
means, and ``undecided`` when the judge never filled in its form (such records are counted
apart and store no score: ``score`` and ``passed`` are null, never 0). ``metrics.registry`` pools ``score`` as a percentage with a bootstrap
interval.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError
from voxbench.judging.audio.rubric import load_rubric
from voxbench.metrics.registry import AUDIO_JUDGE as NAME

if TYPE_CHECKING:  # the judge's stack is imported by a run that judges (~1 s at start-up)
    from voxbench.judging.audio.engine import ClipResult, RubricJudge
    from voxbench.tasks.config import AudioJudgeConfig
    from voxbench.tasks.spec import AudioRubric


def answer_stats(judge: RubricJudge, result: ClipResult) -> dict[str, Any]:
    """The metric's statistics of one judged clip."""
    means: dict[str, float] = {}
    normalized: list[float] = []
    passed = True
    for c in judge.bound.criteria:
        r = result.criteria[c.name]
        if r.mean is None:
            return {"score": None, "passed": None, "undecided": 1, "means": {},
                    "reason": r.explanation or "undecided"}  # fmt: skip
        means[c.name] = r.mean
        normalized.append((r.mean - c.low) / (c.high - c.low))
        passed = passed and bool(r.passed)
    return {
        "score": round(sum(normalized) / len(normalized), 4),
        "passed": int(passed),
        "undecided": 0,
        "means": means,
    }


def no_audio() -> dict[str, Any]:
    """What an answer without audio gets: undecided, and said so (``no_audio``)."""
    return {"score": None, "passed": None, "undecided": 1, "no_audio": 1, "means": {},
            "reason": "the model's answer has no audio"}  # fmt: skip


def check_audio_judge(
    config: AudioJudgeConfig | None, rubric: AudioRubric | None, *, task: str, file: Any
) -> None:
    """``ConfigError`` when a task using ``llm_judge_audio`` lacks its judge or its rubric,
    or the rubric's parameters do not fit it."""
    if config is None:
        raise ConfigError(f"task {task} uses {NAME}, and the config has no audio_judge",
                          field="audio_judge",
                          expected="an audio_judge: {model: provider/model} block")  # fmt: skip
    if rubric is None:
        raise ConfigError(f"task {task} uses {NAME} and names no rubric", file=file,
                          field="audio_judge", expected="audio_judge: {rubric: NAME}")  # fmt: skip
    load_rubric(rubric.rubric).bind(rubric.options, field=f"{task}: audio_judge.options")


@dataclass
class AudioJudgeStats:
    """What the audio judge did in one invocation (``run.json``)."""

    asked: int = 0
    """Answers graded (those without audio included)."""
    calls: int = 0
    from_cache: int = 0
    undecided: int = 0
    no_audio: int = 0


class AnswerJudge:
    """Grades a task run's spoken answers: one ``RubricJudge`` per rubric, one client, and
    ``max_concurrency`` clips at a time across all of them."""

    def __init__(self, config: AudioJudgeConfig, cache_dir: Path) -> None:
        from voxbench.judging.audio.factory import make_audio_judge
        from voxbench.judging.cache import JudgmentCache

        self.config = config
        self.client = make_audio_judge(config.model, base_url=config.base_url)
        self.cache = JudgmentCache(cache_dir)
        self.stats = AudioJudgeStats()
        self._judges: dict[tuple[str, tuple[tuple[str, str], ...]], RubricJudge] = {}
        self._slots = asyncio.Semaphore(config.max_concurrency)

    def _judge(self, rubric: AudioRubric) -> RubricJudge:
        key = (rubric.rubric, tuple(sorted(rubric.options.items())))
        if key not in self._judges:
            from voxbench.judging.audio.engine import RubricJudge

            bound = load_rubric(rubric.rubric).bind(rubric.options, field="audio_judge.options")
            self._judges[key] = RubricJudge(
                self.client, bound, samples=self.config.samples, cache=self.cache,
                concurrency=self.config.max_concurrency,
            )  # fmt: skip
        return self._judges[key]

    async def grade(
        self, rubric: AudioRubric, audio: Audio | None, transcript: str, label: str
    ) -> dict[str, Any]:
        """The ``llm_judge_audio`` statistics of one answer (``audio`` None: it had none)."""
        self.stats.asked += 1
        if audio is None:
            self.stats.no_audio += 1
            self.stats.undecided += 1
            return no_audio()
        from voxbench.judging.audio.segments import Clip

        judge = self._judge(rubric)
        async with self._slots:
            result = await judge.judge_clip(Clip(label, audio, transcript))
        self.stats.calls += result.calls
        self.stats.from_cache += result.from_cache
        stats = answer_stats(judge, result)
        self.stats.undecided += stats["undecided"]
        return stats

    async def aclose(self) -> None:
        """Release the judge's connections."""
        await self.client.aclose()
