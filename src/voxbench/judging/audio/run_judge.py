"""The audio rubric judge of a recorded run: one scorecard dimension per criterion.

``voxbench judge RUN --audio-rubric NAME --audio-judge P/M`` judges the agent's audio on
``conversation.wav``: per agent turn (the rubric's default; segments from the run's
timeline) or the whole recording at once (``segments: whole``; its verdict is put on the
last judged turn). Each criterion becomes the dimension ``audio_<criterion>``: a turn
passes when its mean score over the samples reaches the criterion's ``pass_at``; a turn
whose every sample stayed undecided is undecided. Turns without agent audio are not judged
(the status line counts them).

A benchmark can declare rubrics for some of its turns in ``audio_rubrics.yaml`` beside its
``benchmark.yaml`` (a turn where the caller asks the agent to spell a name)::

    - turns: ["7", "12"]
      rubric: pronunciation
      options: {names: "Siobhan Ni Bhriain"}

They are judged whenever an audio judge is given (``--audio-judge``), with or without
``--audio-rubric`` (which judges every turn). A judge of the target's own model family is
warned about in the status line (``self_preference``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ConfigError
from voxbench.core.records import Judgment, TurnRecord
from voxbench.core.yamlfile import read_yaml
from voxbench.judging.audio.engine import ClipResult, RubricJudge
from voxbench.judging.audio.factory import make_audio_judge
from voxbench.judging.audio.rubric import BoundRubric, load_rubric
from voxbench.judging.audio.segments import turn_clips, whole_clip
from voxbench.judging.audio.self_preference import self_preference_warning
from voxbench.judging.base import JudgeContext, JudgeFindings
from voxbench.judging.cache import JudgmentCache

NAME = "audio-rubric"
DECLARED_FILE = "audio_rubrics.yaml"


@dataclass(frozen=True)
class TurnRubric:
    """A rubric and the turns it judges (None: every selected turn)."""

    bound: BoundRubric
    turns: frozenset[str] | None = None


def declared_rubrics(benchmark: Benchmark) -> list[TurnRubric]:
    """The rubrics the benchmark package declares for some turns (``audio_rubrics.yaml``)."""
    if benchmark.root is None or not (Path(benchmark.root) / DECLARED_FILE).is_file():
        return []
    path = Path(benchmark.root) / DECLARED_FILE
    data = read_yaml(path)
    if not isinstance(data, list):
        raise ConfigError("expected a list of {turns, rubric, options}", file=path)
    known = {t.id for t in benchmark.turns}
    out = []
    for i, entry in enumerate(data):
        where = f"[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("rubric"), str):
            raise ConfigError("needs rubric:", file=path, field=where)
        turns = entry.get("turns")
        if not isinstance(turns, list) or not turns:
            raise ConfigError("needs turns: [ids]", file=path, field=f"{where}.turns")
        ids = [str(t) for t in turns]
        unknown = [t for t in ids if t not in known]
        if unknown:
            raise ConfigError(f"no turn {unknown[0]!r} in the benchmark", file=path,
                              field=f"{where}.turns")  # fmt: skip
        options = {str(k): str(v) for k, v in (entry.get("options") or {}).items()}
        rubric_ref = entry["rubric"]
        beside = Path(benchmark.root) / rubric_ref
        bound = load_rubric(beside if beside.is_file() else rubric_ref).bind(
            options, field=f"{DECLARED_FILE}{where}.options"
        )
        out.append(TurnRubric(bound, frozenset(ids)))
    return out


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
        heard_by = options.audio_client is not None or bool(options.audio_judge)
        if not options.audio_rubric and not (heard_by and declared_rubrics(context.benchmark)):
            return "not asked (no --audio-rubric given)"
        if not heard_by:
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
        assert context.run_dir is not None
        plan = declared_rubrics(context.benchmark)
        if options.audio_rubric:
            plan.insert(
                0, TurnRubric(bound_rubric(options.audio_rubric, options.audio_rubric_options))
            )
        client = options.audio_client or make_audio_judge(
            str(options.audio_judge), base_url=options.audio_judge_base_url
        )
        cache = JudgmentCache(options.cache_dir) if options.use_cache else None
        judgments: list[Judgment] = []
        lines: list[str] = []
        labels: list[str] = []
        details: list[tuple[str, str, ClipResult]] = []
        try:
            for item in plan:
                judge = RubricJudge(client, item.bound, samples=options.audio_samples, cache=cache)
                records = [
                    r
                    for r in context.selected_records
                    if item.turns is None or r.turn in item.turns
                ]
                results, missing = await self._judge_records(context, judge, records)
                for turn, result in results:
                    judgments += clip_judgments(result, turn, judge)
                    details.append((item.bound.name, turn, result))
                labels.append(f"{NAME}:{client.name}@{judge.version}")
                lines.append(_status(item.bound.name, results, missing))
        finally:
            await client.aclose()
        undecided = sum(j.judge_failed for j in judgments)
        status = f"by {client.name}: " + "; ".join(lines) + f"; {undecided} undecided"
        if context.run_dir is not None:
            warning = self_preference_warning(client.name, context.run_dir.info().target.name)
            status += f"; warning: {warning}" if warning else ""
        return JudgeFindings(judgments=judgments, status=status, labels=labels, details=details)

    async def _judge_records(
        self, context: JudgeContext, judge: RubricJudge, records: list[TurnRecord]
    ) -> tuple[list[tuple[str, ClipResult]], dict[str, str]]:
        assert context.run_dir is not None
        if not records:
            return [], {}
        rubric = judge.bound.rubric
        if rubric.segments == "whole":
            clip = whole_clip(context.run_dir, records, rubric.scope)
            return [(records[-1].turn, await judge.judge_clip(clip))], {}
        clips, missing = turn_clips(context.run_dir, records, rubric.scope)
        results = await judge.judge_clips(clips)  # concurrently, within the judge's limit
        return [(c.label, r) for c, r in zip(clips, results, strict=True)], missing


def _status(name: str, results: list[tuple[str, ClipResult]], missing: dict[str, str]) -> str:
    calls = sum(r.calls for _, r in results)
    cached = sum(r.from_cache for _, r in results)
    line = f"{name} on {len(results)} clips, {calls} calls, {cached} from cache"
    if missing:
        line += f", {len(missing)} turns without agent audio not judged"
    return line
