"""ConversationBench's own run files, written from voxbench's judgments.

``--compat conversation-bench`` writes ``claude_judged.jsonl``, ``claude_summary.json`` and
``claude_analysis.md`` beside voxbench's files, in the layout upstream's judge writes them,
so upstream's scripts (its ``judge`` summary printout, leaderboard aggregation) read a
voxbench run as one of their own. The file names say "claude" because upstream's do; the
judge that produced the verdicts is named inside (``judge_model``).

The counts come from the compat summary (``scoring.compat``), never recomputed here. Per
turn, each upstream score is our judgment on that dimension (``None`` where it was not
judged or does not apply); ``tool_use_correct`` is ``None`` on a turn with no required call,
which upstream counts as a pass.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from voxbench.core.benchmark import Benchmark
from voxbench.core.measures import RunAnalysis
from voxbench.core.records import Judgment, TurnRecord

SCORE_DIMENSIONS = {
    "turn_taking": "turn_taking",
    "tool_use_correct": "tool_use",
    "instruction_following": "instruction_following",
    "kb_grounding": "kb_grounding",
    "ambiguity_handling": "ambiguity_handling",
    "state_tracking": "state_tracking",
}
"""Upstream's score names → voxbench's dimensions."""

ASSISTANT_EXCERPT = 300
"""Characters of the answer quoted per failed turn in the analysis, as upstream does."""


def _turn_number(record: TurnRecord) -> int:
    return record.index


def _scores(
    record: TurnRecord, by_key: dict[tuple[str, str], Judgment], needs_call: bool
) -> dict[str, bool | None]:
    scores: dict[str, bool | None] = {}
    for name, dim in SCORE_DIMENSIONS.items():
        j = by_key.get((record.turn, dim))
        scores[name] = j.passed if j is not None else None
    if not needs_call:
        scores["tool_use_correct"] = None
    return scores


def judged_rows(
    benchmark: Benchmark,
    records: list[TurnRecord],
    judgments: list[Judgment],
    model_name: str,
    analysis: RunAnalysis | None = None,
) -> list[dict[str, Any]]:
    """``claude_judged.jsonl``: upstream's transcript record of each turn plus its scores."""
    by_key = {(j.turn, j.dimension): j for j in judgments}
    turns = {t.id: t for t in benchmark.turns}
    measures = {m.turn: m for m in analysis.turns} if analysis is not None else {}
    rows = []
    for rec in records:
        turn = turns.get(rec.turn)
        needs_call = bool(turn and turn.expect.required_calls)
        timings = rec.timings
        ttfb = measures[rec.turn].ttfb if rec.turn in measures else None
        took = timings.end - timings.start if timings.end is not None else None
        reasons = [
            f"{j.dimension}: {j.reasoning}"
            for j in judgments
            if j.turn == rec.turn and j.reasoning and j.passed is not None
        ]
        row: dict[str, Any] = {
            "ts": None,
            "turn": _turn_number(rec),
            "model_name": model_name,
            "user_text": rec.user_text,
            "assistant_text": rec.spoken_text,
            "tool_calls": [
                {"name": c.name, "args": c.arguments}
                | ({"is_duplicate": True} if c.is_duplicate else {})
                for c in rec.tool_calls
            ],
            "tool_results": [{"name": c.name, "response": c.result} for c in rec.tool_calls],
            "tokens": dict(rec.usage) or None,
            "ttfb_ms": round(ttfb * 1000) if ttfb is not None else None,
            "latency_ms": round(took * 1000) if took is not None else None,
            "reconnection_count": int(rec.reconnected),
            "scores": _scores(rec, by_key, needs_call),
            "judge_reasoning": " | ".join(reasons),
        }
        tt = measures.get(rec.turn)
        if tt is not None and tt.issues:
            row["turn_taking_issues"] = list(tt.issues)
        rows.append(row)
    return rows


def summary_file(
    summary: dict[str, Any], rows: list[dict[str, Any]], judged_at: datetime | None = None
) -> dict[str, Any]:
    """``claude_summary.json``: the compat summary's counts under upstream's keys."""
    failed_tt = [r["turn"] for r in rows if r["scores"]["turn_taking"] is False]
    affected = sum(
        1
        for r in rows
        if r["scores"]["turn_taking"] is False and r["scores"]["instruction_following"] is False
    )
    stamp = (judged_at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "model_name": summary["model_name"],
        "judge_name": "claude",
        "passes": dict(summary["passes"]),
        # Audio Arena's older scripts read the counts under this name.
        "claude_passes": dict(summary["passes"]),
        "turns_scored": summary["turns_scored"],
        "category_totals": dict(summary["category_totals"]),
        "judge_version": ", ".join(summary.get("judge_versions") or []),
        "judge_model": summary.get("judge_name") or "deterministic checks only",
        "judged_at": stamp,
        "realignment_applied": False,
        "function_tracking": {},
        "turn_taking_failures": failed_tt,
        "turn_taking_affected_instruction": affected,
        "voxbench": {
            "written_by": "voxbench --compat conversation-bench",
            "notes": list(summary.get("notes", [])),
        },
    }


def _rate(passed: int | None, total: int, what: str = "") -> str:
    if passed is None:
        return "not judged"
    if not total:
        return "N/A"
    return f"{passed}/{total} ({passed / total * 100:.1f}%{what})"


def analysis_markdown(summary: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """``claude_analysis.md``: the metrics and every failed turn, in upstream's sections."""
    passes, totals = summary["passes"], summary["category_totals"]
    n = summary["turns_scored"]
    amb, state = totals.get("ambiguity_handling", 0), totals.get("state_tracking", 0)
    out = [
        f"# Claude-Compatible Evaluation ({summary['judge_version'] or 'voxbench'})",
        "",
        f"**Model**: {summary['model_name']}",
        f"**Turns**: {n}",
        f"**Judge**: {summary['judge_model']}",
        f"**Judge Version**: {summary['judge_version']}",
        f"**Judged**: {summary['judged_at']}",
        "",
        "## Summary Metrics",
        "",
        f"- **Turn-Taking**: {_rate(passes.get('turn_taking'), n)}",
        f"- **Tool Use Correct**: {_rate(passes.get('tool_use_correct'), totals.get('tool_use_correct', n), ' of all turns')}",
        f"- **Instruction Following**: {_rate(passes.get('instruction_following'), n)}",
        f"- **KB Grounding**: {_rate(passes.get('kb_grounding'), n)}",
        "- **Ambiguity Handling**: "
        + (
            _rate(passes.get("ambiguity_handling"), amb, f" of {amb} applicable turns")
            if amb
            else "N/A (no applicable turns)"
        ),
        "- **State Tracking**: "
        + (
            _rate(passes.get("state_tracking"), state, f" of {state} applicable turns")
            if state
            else "N/A (no applicable turns)"
        ),
        "",
    ]
    if summary["turn_taking_failures"]:
        out += ["## Turn-Taking Analysis", ""]
        out.append(f"**{len(summary['turn_taking_failures'])} turns** had audio timing issues:")
        out.append("")
        for row in rows:
            if row["turn"] in summary["turn_taking_failures"]:
                issues = ", ".join(row.get("turn_taking_issues", [])) or "timing issue"
                out.append(f"- Turn {row['turn']}: {issues}")
        out.append("")
    out += ["## Per-Turn Failures", ""]
    failed_any = False
    for row in rows:
        failed = [k for k, v in row["scores"].items() if v is False]
        if not failed:
            continue
        failed_any = True
        said = row["assistant_text"]
        cut = said[:ASSISTANT_EXCERPT] + ("..." if len(said) > ASSISTANT_EXCERPT else "")
        out += [
            f"### Turn {row['turn']}",
            "",
            f"**User**: {row['user_text']}",
            "",
            f"**Assistant**: {cut}",
            "",
            f"**Failed Dimensions**: {', '.join(failed)}",
            "",
            f"**Judge Reasoning**: {row['judge_reasoning']}",
            "",
        ]
    if not failed_any:
        out.append("*No turn failed a judged dimension.*")
    notes = summary.get("voxbench", {}).get("notes", [])
    if notes:
        out += ["", "## Written by voxbench", ""] + [f"- {note}" for note in notes]
    return "\n".join(out) + "\n"


def conversation_bench_files(
    benchmark: Benchmark,
    records: list[TurnRecord],
    judgments: list[Judgment],
    summary: dict[str, Any],
    analysis: RunAnalysis | None = None,
    judged_at: datetime | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    """The three files' contents: judged rows, summary and analysis markdown."""
    rows = judged_rows(benchmark, records, judgments, summary["model_name"], analysis)
    upstream_summary = summary_file(summary, rows, judged_at)
    return rows, upstream_summary, analysis_markdown(upstream_summary, rows)


__all__ = ["analysis_markdown", "conversation_bench_files", "judged_rows", "summary_file"]
