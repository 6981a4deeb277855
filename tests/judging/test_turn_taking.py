"""The turn_taking judge: verdicts read off the run's analysis, never measured here, never faked."""

from __future__ import annotations

from pathlib import Path

import pytest

import voxbench.evaluation.evaluate as evaluation_stage
from voxbench.core.measures import RunAnalysis, TurnMeasures
from voxbench.core.records import TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import evaluate_run_async
from voxbench.judging.run import JudgeOptions, judge_run
from voxbench.scoring.scorecard import build_scorecard

from .scripted import scripted_run


def analysis_of(records: list[TurnRecord]) -> RunAnalysis:
    """Turn 2 talked over the user; turn 5 was not measured at all."""
    return RunAnalysis(
        mode="audio",
        turn_taking=True,
        turns=[
            TurnMeasures(
                turn=r.turn,
                voice_to_voice=-0.2 if r.turn == "2" else 0.4,
                issues=["negative_latency (-200 ms)"] if r.turn == "2" else [],
            )
            for r in records
            if r.turn != "5"
        ],
    )


async def test_a_text_run_has_no_turn_taking(tmp_path: Path) -> None:
    benchmark, records, run = await scripted_run(tmp_path)
    judged = await judge_run(
        benchmark, records, run_dir=RunDirectory(run), analysis=analysis_of(records)
    )
    assert judged.status["turn-taking"].startswith("not analysed: the run has no conversation.wav")
    assert not any(j.dimension == "turn_taking" for j in judged.judgments)


async def test_a_recorded_run_gets_one_turn_taking_judgment_per_turn(tmp_path: Path) -> None:
    benchmark, records, run = await scripted_run(tmp_path)
    (run / "conversation.wav").write_bytes(b"")
    judged = await judge_run(
        benchmark, records, run_dir=RunDirectory(run), analysis=analysis_of(records)
    )
    assert judged.status["turn-taking"] == "analysed"
    assert "turn-taking@turn-taking-1" in judged.judges
    card = build_scorecard(
        run_id="r", benchmark="smoke", target="t", records=records, judgments=judged.judgments
    )
    tt = card.dimension("turn_taking")
    assert tt is not None
    assert (tt.passed, tt.scored, tt.failed_turns, tt.undecided_turns) == (8, 9, ["2"], ["5"])
    assert card.strict_pass.failed_turns == ["2"]
    assert card.strict_pass.undecided_turns == ["5"]
    two = next(j for j in judged.judgments if j.turn == "2" and j.dimension == "turn_taking")
    assert two.evidence == ["voice_to_voice=-200 ms", "negative_latency (-200 ms)"]


async def test_skip_and_failure_are_reported_not_faked(tmp_path: Path) -> None:
    benchmark, records, run = await scripted_run(tmp_path)
    (run / "conversation.wav").write_bytes(b"")
    skipped = await judge_run(
        benchmark,
        records,
        run_dir=RunDirectory(run),
        analysis=analysis_of(records),
        options=JudgeOptions(skip_turn_taking=True),
    )
    assert skipped.status["turn-taking"] == "skipped (--skip-turn-taking)"
    assert not any(j.dimension == "turn_taking" for j in skipped.judgments)
    failed = await judge_run(
        benchmark,
        records,
        run_dir=RunDirectory(run),
        analysis_error="RuntimeError: the recording is truncated",
    )
    tt = [j for j in failed.judgments if j.dimension == "turn_taking"]
    assert len(tt) == 10 and all(j.judge_failed and j.passed is None for j in tt)
    assert "truncated" in failed.status["turn-taking"]


async def test_a_failing_analysis_leaves_every_turn_undecided_in_the_scorecard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, run = await scripted_run(tmp_path)
    (run / "conversation.wav").write_bytes(b"")

    def broken(run_dir: RunDirectory, *, write: bool) -> RunAnalysis:
        raise RuntimeError("the recording is truncated")

    monkeypatch.setattr(evaluation_stage, "load_or_analyse", broken)
    card = (await evaluate_run_async(run)).card
    tt = card.dimension("turn_taking")
    assert tt is not None and (tt.passed, tt.scored, len(tt.undecided_turns)) == (0, 0, 10)
    assert (card.strict_pass.passed, card.strict_pass.scored, card.strict_pass.undecided) == (
        0,
        0,
        10,
    )
    assert card.too_many_undecided
    assert "truncated" in card.judge_status["turn-taking"]
    assert card.latency == {}  # nothing measured, nothing made up
