"""``llm_judge_audio``: an audio task's spoken answers graded by the audio rubric judge.

A task declares the rubric, its parameters and the judge that hears audio::

    metrics: [llm_judge_audio]
    audio_judge: {rubric: emotion, options: {target_emotion: cheerful},
                  judge: gemini/gemini-2.5-flash, samples: 1}

``grade_spoken_answer`` judges one answer (the clip, and its transcript for rubrics that
compare the two) with a ``RubricJudge`` and returns the metric's per-record statistics:
``score`` — the mean over criteria of (mean − low) / (high − low), so 1 is every criterion
at the top of its scale — ``passed`` (every criterion reached its ``pass_at``), the raw
means, and ``undecided`` when the judge never filled in its form (such records are counted
apart, never scored). ``tasks.metrics`` pools ``score`` as a percentage with a bootstrap
interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError
from voxbench.judging.audio.engine import RubricJudge
from voxbench.judging.audio.factory import make_audio_judge
from voxbench.judging.audio.rubric import load_rubric
from voxbench.judging.audio.segments import Clip
from voxbench.judging.cache import JudgmentCache

NAME = "llm_judge_audio"
DESCRIPTION = (
    "the audio judge's rubric score of the spoken answer (%: 100 = every criterion at the "
    "top of its scale), undecided answers counted apart"
)


@dataclass(frozen=True)
class AudioJudgeSpec:
    """A task's ``audio_judge:`` block."""

    rubric: str
    judge: str
    options: dict[str, str] = field(default_factory=dict)
    samples: int = 1
    base_url: str | None = None

    @classmethod
    def parse(cls, data: Any, *, file: Any = None) -> AudioJudgeSpec:
        """Read the block; each problem names the field."""
        if not isinstance(data, dict):
            raise ConfigError("expected a mapping", file=file, field="audio_judge",
                              expected="{rubric: NAME, judge: provider/model}")  # fmt: skip
        unknown = sorted(set(data) - {"rubric", "judge", "options", "samples", "base_url"})
        if unknown:
            raise ConfigError(f"unknown key {unknown[0]!r}", file=file, field="audio_judge",
                              expected="rubric, judge, options, samples, base_url")  # fmt: skip
        for key in ("rubric", "judge"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise ConfigError("missing", file=file, field=f"audio_judge.{key}")
        samples = data.get("samples", 1)
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
            raise ConfigError("not a count", file=file, field="audio_judge.samples",
                              expected="a whole number from 1")  # fmt: skip
        options = {str(k): str(v) for k, v in (data.get("options") or {}).items()}
        return cls(data["rubric"], data["judge"], options, samples, data.get("base_url"))

    def make_judge(self, *, cache: JudgmentCache | None = None) -> RubricJudge:
        """The rubric judge this block describes."""
        bound = load_rubric(self.rubric).bind(self.options, field="audio_judge.options")
        client = make_audio_judge(self.judge, base_url=self.base_url)
        return RubricJudge(client, bound, samples=self.samples, cache=cache)


async def grade_spoken_answer(
    judge: RubricJudge, audio: Audio, transcript: str | None = None, label: str = "answer"
) -> dict[str, Any]:
    """The metric's statistics of one spoken answer."""
    result = await judge.judge_clip(Clip(label, audio, transcript))
    means: dict[str, float] = {}
    normalized: list[float] = []
    passed = True
    for c in judge.bound.criteria:
        r = result.criteria[c.name]
        if r.mean is None:
            return {"score": 0.0, "passed": 0, "undecided": 1, "means": {},
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


def not_judged(prediction: str, context: Any) -> dict[str, Any]:
    """What a text prediction gets: the metric grades audio, never text (left undecided)."""
    return {"score": 0.0, "passed": 0, "undecided": 1, "means": {},
            "reason": "no spoken answer to judge"}  # fmt: skip
