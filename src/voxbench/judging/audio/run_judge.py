"""The audio rubric judge of a recorded run: one scorecard dimension per criterion.

``voxbench judge RUN --audio-rubric NAME --audio-judge P/M`` judges the agent's audio on
``conversation.wav``: per agent turn (the rubric's default; segments from the run's
timeline) or the whole recording at once (``segments: whole``; its verdict is put on the
last judged turn). Each criterion becomes the dimension ``audio_<criterion>``: a turn
passes when its mean score over the samples reaches the criterion's ``pass_at``; a turn
whose every sample stayed undecided is undecided. Turns without agent audio are not judged
(the status line counts them).
"""

from __future__ import annotations

from voxbench.core.errors import ConfigError
from voxbench.core.records import Judgment
from voxbench.judging.audio.engine import ClipResult, RubricJudge
from voxbench.judging.audio.factory import make_audio_judge
from voxbench.judging.audio.rubric import BoundRubric, load_rubric
from voxbench.judging.audio.segments import turn_clips, whole_clip
from voxbench.judging.base import JudgeContext, JudgeFindings
from voxbench.judging.cache import JudgmentCache

NAME = "audio-rubric"


def bound_rubric(name: str, values: dict[str, str]) -> BoundRubric:
    """The rubric ``name`` (built-in or file) with ``values`` filled in."""
    return load_rubric(name).bind(values, field="--audio-option")


def clip_judgments(result: ClipResult, turn: str, judge: RubricJudge) -> list[Judgment]:
    """One judgment per criterion of a judged clip."""
    out = []
    for c in judge.bound.criteria:
        r = result.criteria[c.name]
        if r.mean is None:
            reasoning = f"undecided: {r.explanation}"
        else:
            spread = f" ± {r.std:g}" if judge.samples > 1 else ""
            reasoning = (
                f"score {r.mean:g}{spread} of {c.low}-{c.high} (passes at {c.pass_at}): "
                f"{r.explanation}"
            )
        out.append(
            Judgment(
                turn=turn,
                dimension=c.dimension,
                passed=r.passed,
                reasoning=reasoning,
                judge=f"{NAME}:{judge.client.name}",
                judge_version=judge.version,
                judge_failed=r.passed is None,
                details={**r.as_dict(), "rubric": judge.bound.name, "pieces": result.pieces},
            )
        )
    return out


class AudioRubricRunJudge:
    """The ``RunJudge`` for ``--audio-rubric``."""

    name = NAME
    version = "per-rubric"

    def skip_reason(self, context: JudgeContext) -> str | None:
        options = context.options
        if not options.audio_rubric:
            return "not asked (no --audio-rubric given)"
        if options.audio_client is None and not options.audio_judge:
            raise ConfigError(
                "an audio rubric needs a judge that hears audio",
                field="--audio-judge",
                expected="provider/model, e.g. openai-realtime/gpt-realtime or gemini/gemini-2.5-flash",
            )
        if context.run_dir is None or not context.run_dir.has_recording:
            return "not judged: the run has no conversation.wav (a text run)"
        return None

    async def judge(self, context: JudgeContext) -> JudgeFindings:
        options = context.options
        assert options.audio_rubric is not None and context.run_dir is not None
        bound = bound_rubric(options.audio_rubric, options.audio_rubric_options)
        client = options.audio_client or make_audio_judge(
            str(options.audio_judge), base_url=options.audio_judge_base_url
        )
        judge = RubricJudge(
            client,
            bound,
            samples=options.audio_samples,
            cache=JudgmentCache(options.cache_dir) if options.use_cache else None,
        )
        records = context.selected_records
        judgments: list[Judgment] = []
        try:
            if bound.rubric.segments == "whole":
                clip = whole_clip(context.run_dir, records, bound.rubric.scope)
                result = await judge.judge_clip(clip)
                results = [(records[-1].turn, result)] if records else []
                missing: dict[str, str] = {}
            else:
                clips, missing = turn_clips(context.run_dir, records, bound.rubric.scope)
                results = [(c.label, await judge.judge_clip(c)) for c in clips]
        finally:
            await client.aclose()
        for turn, result in results:
            judgments += clip_judgments(result, turn, judge)
        calls = sum(r.calls for _, r in results)
        cached = sum(r.from_cache for _, r in results)
        undecided = sum(j.judge_failed for j in judgments)
        status = (
            f"{bound.name} by {client.name}: {len(results)} clips, {calls} calls, "
            f"{cached} from cache, {undecided} undecided"
        )
        if missing:
            status += f"; {len(missing)} turns without agent audio not judged"
        return JudgeFindings(
            judgments=judgments,
            status=status,
            labels=[f"{NAME}:{client.name}@{judge.version}"],
            details=results,
        )
