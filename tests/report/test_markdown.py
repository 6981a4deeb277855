"""``report.md``: the scorecard and every failure, turn by turn, with reasoning and evidence."""

from __future__ import annotations

from pathlib import Path

from voxbench.benchmarks.compat import load_compat_profile
from voxbench.judging.run import JudgeOptions, judge_run
from voxbench.report.markdown import render_report
from voxbench.scoring.compat import compat_summary
from voxbench.scoring.scorecard import build_scorecard

from ..judging.scripted import Act, scripted_run


async def report_for(tmp_path: Path, plan: dict[str, Act], compat: bool = False) -> str:
    benchmark, records, _ = await scripted_run(tmp_path, plan)
    profile = load_compat_profile("conversation-bench")
    result = await judge_run(
        benchmark,
        records,
        options=JudgeOptions(deterministic_only=True, scoring=profile.scoring if compat else None),
    )
    card = build_scorecard(
        run_id="run-1",
        benchmark=benchmark.id,
        target="test/scripted",
        records=result.records,
        judgments=result.judgments,
        checks=result.checks,
        tool_turns=result.tool_turns,
        judge_status=result.status,
        judges=result.judges,
        rule_table=benchmark,
    )
    summary = (
        compat_summary(profile, benchmark, card, result.records, result.judgments)
        if compat
        else None
    )
    return render_report(card, result.records, result.judgments, summary)


async def test_report_explains_each_failure(tmp_path: Path) -> None:
    text = await report_for(tmp_path, {"6": Act(calls=[], say="Sure. Anything else?")})
    assert text.startswith("# smoke · test/scripted")
    assert "| **strict per-turn pass** (tool_use, facts, state only, without " in text
    assert "| 9/10 | 90.0% |" in text
    assert "### Turn 6 (ok)" in text and "> Sure. Anything else?" in text
    assert (
        "- ✗ **tool_use** [deterministic]: 0/1 required calls made on time; missing call cancel_action("
        in text
    )
    assert "↪ (absorbed into turn 6 tool_use) **state**" in text
    assert (
        "- End state: differs (explained by turn 6 tool_use): registrations: unexpected H-101"
        in text
    )
    assert "### Turn 5" not in text  # turns without failures are left out
    assert "Turn taking: not analysed" in text


async def test_report_says_what_was_judged_and_never_counts_an_absorbed_failure(
    tmp_path: Path,
) -> None:
    text = await report_for(tmp_path, {"6": Act(calls=[], say="Sure. Anything else?")})
    assert "- Judged by code: tool_use, facts, state" in text
    assert "- Not judged (no LLM judge given): instruction_following, kb_grounding" in text
    assert "not comparable.**" in text
    # The state after turns 6 and 7 differs only because turn 6's cancellation was never
    # made: those two are neither passes nor second failures (7 state checks, 5 passed).
    state_row = next(line for line in text.splitlines() if line.startswith("| state |"))
    assert "| 5/7 | 71.4% |" in state_row
    assert state_row.endswith("|  |  | 2 caused by earlier misses: 6, 7 |")


async def test_report_has_the_compat_section_and_no_secrets(tmp_path: Path) -> None:
    leaked = "My key is sk-abcdefghijklmnopqrstuvwx, by the way."
    text = await report_for(tmp_path, {"0": Act(say=leaked)}, compat=True)
    assert "sk-abcdefghijklmnopqrstuvwx" not in text and "***" in text
    assert "## ConversationBench-compatible summary" in text
    assert "Reproduced from the public benchmark:" in text
    assert "| tool_use_correct | 10 | 10 | 100.0% |" in text
