"""Judge a recorded run from its artifacts alone (no model call to the target)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from voxbench.core.benchmark import Benchmark
from voxbench.core.records import Judgment, TurnRecord
from voxbench.judging.deterministic import TurnChecks, judge_deterministic

JUDGED_FILE = "judged.jsonl"


def check_totals(checks: dict[str, TurnChecks]) -> dict[str, Any]:
    """Run-level totals of the deterministic checks."""
    values = list(checks.values())
    tool_turns = [c for c in values if c.involves_tools]
    tool_turns_ok = [c for c in tool_turns if not (c.missing or c.forbidden_made or c.spurious)]
    return {
        "required_calls": sum(c.required for c in values),
        "required_calls_matched": sum(c.matched for c in values),
        "forbidden_calls_made": sum(len(c.forbidden_made) for c in values),
        "spurious_calls": sum(len(c.spurious) for c in values),
        "duplicate_calls": sum(len(c.duplicates) for c in values),
        "facts": sum(c.facts for c in values),
        "facts_covered": sum(c.facts_covered for c in values),
        "false_claims": sum(len(c.false_claims) for c in values),
        "state_checks": sum(c.state_checked for c in values),
        "state_checks_passed": sum(c.state_checked and not c.state_diff for c in values),
        "tool_turns": len(tool_turns),
        "tool_turns_passed": len(tool_turns_ok),
    }


def judge_records(
    benchmark: Benchmark, records: list[TurnRecord]
) -> tuple[list[Judgment], dict[str, Any]]:
    """Deterministic judgments of ``records`` and the totals of their checks."""
    judgments, checks = judge_deterministic(benchmark, records)
    return judgments, check_totals(checks)


def write_judgments(run_path: Path, judgments: list[Judgment]) -> Path:
    """Write ``judged.jsonl`` (one judgment per line)."""
    path = run_path / JUDGED_FILE
    with path.open("w", encoding="utf-8") as f:
        for j in judgments:
            f.write(json.dumps(j.model_dump(mode="json"), ensure_ascii=False) + "\n")
    return path
