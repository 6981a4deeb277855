"""Judges as plug-ins: one class and one registration add a judge to every evaluation."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.judging import base
from voxbench.judging.base import JudgeContext, JudgeFindings, RunJudge, register_judge
from voxbench.judging.deterministic import DeterministicResult
from voxbench.judging.run import judge_run
from voxbench.scoring.scorecard import build_scorecard

from .scripted import Act, scripted_run


class PolitenessJudge:
    """Fails a turn whose tool use failed (it reads the deterministic findings) or whose
    answer has no "please" or "thank"."""

    name = "politeness"
    version = "politeness-1"

    def skip_reason(self, context: JudgeContext) -> str | None:
        return None

    async def judge(self, context: JudgeContext) -> JudgeFindings:
        deterministic = context.findings["deterministic"].details
        assert isinstance(deterministic, DeterministicResult)
        judgments = [
            j.model_copy(
                update={
                    "dimension": "politeness",
                    "judge": self.name,
                    "judge_version": self.version,
                    "passed": bool(j.passed),
                    "reasoning": "polite" if j.passed else "impolite: the tool use failed",
                    "evidence": [],
                    "details": {},
                }
            )
            for j in deterministic.judgments
            if j.dimension == "tool_use" and j.turn in context.selected
        ]
        return JudgeFindings(judgments=judgments, labels=[f"{self.name}@{self.version}"])


class AudioOnlyJudge:
    name = "rubric"
    version = "rubric-1"

    def skip_reason(self, context: JudgeContext) -> str | None:
        return "not judged: no rubric for this benchmark"

    async def judge(self, context: JudgeContext) -> JudgeFindings:
        raise AssertionError("a judge that does not apply never runs")


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> list[RunJudge]:
    fresh: list[RunJudge] = []
    monkeypatch.setattr(base, "_REGISTRY", fresh)
    return fresh


async def test_a_registered_judge_runs_after_the_built_ins_and_is_scored(
    tmp_path: Path, registry: list[RunJudge]
) -> None:
    register_judge(PolitenessJudge())
    register_judge(AudioOnlyJudge())
    benchmark, records, _ = await scripted_run(tmp_path, {"6": Act(calls=[], say="Sure.")})
    judged = await judge_run(benchmark, records)
    assert judged.judges == ["deterministic@deterministic-2", "politeness@politeness-1"]
    assert judged.status["rubric"] == "not judged: no rubric for this benchmark"
    # Each turn's judgments in judge order: the plug-in's come after the built-ins'.
    assert [j.dimension for j in judged.judgments if j.turn == "6"][-1] == "politeness"
    card = build_scorecard(
        run_id="r", benchmark="smoke", target="t", records=records, judgments=judged.judgments
    )
    politeness = card.dimension("politeness")
    assert politeness is not None
    assert (politeness.passed, politeness.scored, politeness.failed_turns) == (9, 10, ["6"])
    assert card.strict_pass.failed_turns == ["6"]


def test_two_judges_cannot_share_a_name(registry: list[RunJudge]) -> None:
    register_judge(PolitenessJudge())
    with pytest.raises(ValueError, match="politeness"):
        register_judge(PolitenessJudge())
    assert isinstance(PolitenessJudge(), RunJudge)
