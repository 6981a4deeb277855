"""``--compat conversation-bench`` writes upstream's own run files, readable the way
upstream's scripts read them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.judging.scripted import Act, JudgeScript, scripted_run
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import EvaluationOptions
from voxbench.evaluation.evaluate import evaluate_run_async
from voxbench.testing import FakeOpenAIServer

SCORES = {
    "turn_taking",
    "tool_use_correct",
    "instruction_following",
    "kb_grounding",
    "ambiguity_handling",
    "state_tracking",
}


def upstream_printout(summary: dict) -> list[str]:
    """What upstream's ``judge`` command prints from ``claude_summary.json`` (its reads)."""
    passes = summary.get("passes", summary.get("claude_passes", {}))
    total = summary.get("turns_scored", 0)
    lines = [
        f"Tool use: {passes.get('tool_use_correct', 0)}/{total}",
        f"Instruction following: {passes.get('instruction_following', 0)}/{total}",
        f"KB grounding: {passes.get('kb_grounding', 0)}/{total}",
    ]
    totals = summary.get("category_totals", {})
    if totals.get("state_tracking", 0):
        lines.append(
            f"State tracking: {passes.get('state_tracking', 0)}/{totals['state_tracking']}"
        )
    return lines + [f"Turn-taking failures: {summary.get('turn_taking_failures', [])}"]


async def test_compat_run_writes_upstreams_files(tmp_path: Path) -> None:
    _, records, run = await scripted_run(tmp_path, {"6": Act(calls=[], say="Sure.")})
    script = JudgeScript(verdicts={"3": {"instruction_following": (False, None)}})
    server = FakeOpenAIServer(script)
    await server.start()
    try:
        options = EvaluationOptions(
            judge="openai-compatible:m", judge_base_url=server.url, compat="conversation-bench"
        )
        evaluation = await evaluate_run_async(run, options)
    finally:
        await server.stop()
    assert evaluation.compat is not None

    summary = json.loads((run / RunDirectory.CB_SUMMARY).read_text())
    assert summary["passes"] == evaluation.compat["passes"]  # counted once, by the compat rules
    assert summary["claude_passes"] == summary["passes"]  # the older scripts' name
    assert summary["turns_scored"] == len(records) == 10
    assert summary["category_totals"] == evaluation.compat["category_totals"]
    assert {"judge_version", "judge_model", "judged_at", "turn_taking_failures"} <= set(summary)
    assert summary["judge_model"].startswith("openai-compatible/m")
    printed = upstream_printout(summary)
    assert printed[1] == "Instruction following: 9/10"
    assert printed[0] == f"Tool use: {evaluation.compat['passes']['tool_use_correct']}/10"

    rows = [json.loads(line) for line in (run / RunDirectory.CB_JUDGED).read_text().splitlines()]
    assert [r["turn"] for r in rows] == list(range(10))  # upstream's turn numbers are ints
    for row, rec in zip(rows, records, strict=True):
        assert set(row["scores"]) == SCORES
        assert row["user_text"] == rec.user_text and row["assistant_text"] == rec.assistant_text
        assert [c["name"] for c in row["tool_calls"]] == [c.name for c in rec.tool_calls]
        assert [r["name"] for r in row["tool_results"]] == [c.name for c in rec.tool_calls]
        assert all(set(c) >= {"name", "args"} for c in row["tool_calls"])
        assert isinstance(row["judge_reasoning"], str)
    assert rows[3]["scores"]["instruction_following"] is False
    assert rows[0]["scores"]["tool_use_correct"] is None  # no required call: upstream passes it
    assert rows[6]["scores"]["tool_use_correct"] is False  # the skipped registration

    analysis = (run / RunDirectory.CB_ANALYSIS).read_text()
    assert "## Summary Metrics" in analysis and "## Per-Turn Failures" in analysis
    assert "- **Instruction Following**: 9/10 (90.0%)" in analysis
    assert "### Turn 3" in analysis and "### Turn 6" in analysis
    assert "**Failed Dimensions**: instruction_following" in analysis


async def test_without_compat_no_upstream_files(tmp_path: Path) -> None:
    _, _, run = await scripted_run(tmp_path)
    await evaluate_run_async(run, EvaluationOptions())
    assert not (run / RunDirectory.CB_SUMMARY).exists()
    assert not (run / RunDirectory.CB_JUDGED).exists()
