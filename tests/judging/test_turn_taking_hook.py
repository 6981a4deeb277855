"""The turn_taking hook: filled by an analyser on runs with a recording, never faked."""

from __future__ import annotations

from pathlib import Path

from voxbench.core.records import Judgment, TurnRecord
from voxbench.judging.run import JudgeOptions, judge_run
from voxbench.scoring.scorecard import build_scorecard

from .scripted import scripted_run


def analyser(path: Path, records: list[TurnRecord]) -> list[Judgment]:
    return [
        Judgment(
            turn=r.turn,
            dimension="turn_taking",
            passed=r.turn != "2",
            reasoning="overlap" if r.turn == "2" else "clean",
            judge="turn-taking",
            judge_version="tt-1",
        )
        for r in records
        if r.turn != "5"  # an analyser that skips a turn leaves it undecided
    ]


def broken(path: Path, records: list[TurnRecord]) -> list[Judgment]:
    raise RuntimeError("the recording is truncated")


async def test_a_text_run_has_no_turn_taking(tmp_path: Path) -> None:
    benchmark, records, run = await scripted_run(tmp_path)
    judged = await judge_run(benchmark, records, run_path=run, turn_taking=analyser)
    assert judged.turn_taking.startswith("not analysed: the run has no conversation.wav")
    assert not any(j.dimension == "turn_taking" for j in judged.judgments)


async def test_a_recorded_run_gets_one_turn_taking_judgment_per_turn(tmp_path: Path) -> None:
    benchmark, records, run = await scripted_run(tmp_path)
    (run / "conversation.wav").write_bytes(b"")
    judged = await judge_run(benchmark, records, run_path=run, turn_taking=analyser)
    assert judged.turn_taking == "analysed"
    assert "turn-taking@tt-1" in judged.judges
    card = build_scorecard(
        run_id="r", benchmark="smoke", target="t", records=records, judgments=judged.judgments
    )
    tt = card.dimension("turn_taking")
    assert (tt.passed, tt.scored, tt.failed_turns, tt.undecided_turns) == (8, 10, ["2"], ["5"])
    assert card.strict_pass.failed_turns == ["2", "5"]


async def test_skip_and_failure_are_reported_not_faked(tmp_path: Path) -> None:
    benchmark, records, run = await scripted_run(tmp_path)
    (run / "conversation.wav").write_bytes(b"")
    skipped = await judge_run(
        benchmark,
        records,
        run_path=run,
        options=JudgeOptions(skip_turn_taking=True),
        turn_taking=analyser,
    )
    assert skipped.turn_taking == "skipped (--skip-turn-taking)"
    assert not any(j.dimension == "turn_taking" for j in skipped.judgments)
    failed = await judge_run(benchmark, records, run_path=run, turn_taking=broken)
    tt = [j for j in failed.judgments if j.dimension == "turn_taking"]
    assert len(tt) == 10 and all(j.judge_failed and j.passed is None for j in tt)
    assert "truncated" in failed.turn_taking
