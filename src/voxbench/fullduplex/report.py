"""``fdb_report.md``: the scoring summaries of a directory as one readable Markdown page.

One section per scoring mode found beside it (``fdb_summary_<mode>.json``): what was scored
and how (ASR, VAD model, judge), a table per category, where the time went (per-stage
percentiles by target and category), the method, the notes, and the closing totals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voxbench.fullduplex.sample_context import MODES
from voxbench.fullduplex.summary import TIMING_METRICS, read_summary
from voxbench.fullduplex.timings import STAGES, RunTotals

REPORT_FILE = "fdb_report.md"


def metric_cell(stats: dict[str, Any] | None, timing: bool, *, multiline: bool = False) -> str:
    """A metric as ``mean ± std``, timings with their p50/p90/p99 (on a second line, or in
    parentheses); ``—`` when it has no value."""
    if not stats or not stats.get("n"):
        return "—"
    text = f"{stats['mean']:.3f} ± {stats['std']:.3f}"
    if timing:
        pcts = f"p50 {stats['p50']:.2f}, p90 {stats['p90']:.2f}, p99 {stats['p99']:.2f}"
        text += f"\n{pcts}" if multiline else f" ({pcts})"
    return text


def _escape(text: object) -> str:
    return str(text).replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in rows]
    return lines


def stage_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Rows of the stage-timing table: target, category, samples, excluded, stage, n, pcts."""
    rows = []
    for row in summary.get("stage_timings") or []:
        for stage, stats in row["stages"].items():
            rows.append(
                [
                    row["target"],
                    row["category"],
                    str(row["samples"]),
                    str(row["errored_excluded"]),
                    stage,
                    str(stats["n"]),
                    f"{stats['p50']:.3f}",
                    f"{stats['p90']:.3f}",
                    f"{stats['p99']:.3f}",
                ]
            )
    return rows


STAGE_HEADER = ["target", "category", "samples", "errored (excluded)", "stage", "n", "p50 s",
                "p90 s", "p99 s"]  # fmt: skip


def _section(summary: dict[str, Any]) -> list[str]:
    out = [f"## {summary.get('mode')} mode", ""]
    asr = summary.get("asr")
    made = summary.get("transcribed", 0)
    out.append(
        f"- ASR: {asr} ({made} transcribed by this scoring)"
        if asr
        else "- ASR: none ran (every word came from the directory's own ASR files)"
    )
    vad = summary.get("vad_model") or {}
    if vad:
        out.append(f"- VAD model: `{vad.get('path')}` (SHA-256 {vad.get('sha256')})")
    out.append(f"- Judge: {summary.get('judge') or 'none'}")
    out.append("")
    for category in dict.fromkeys(r["category"] for r in summary["rows"]):
        rows = [r for r in summary["rows"] if r["category"] == category]
        metrics = list(dict.fromkeys(m for r in rows for m in r["metrics"]))
        out += [f"### {category}", ""]
        body = [
            [r["target"], r["subset"], str(r["samples"]), str(r["errors"])]
            + [metric_cell(r["metrics"].get(m), m in TIMING_METRICS) for m in metrics]
            for r in rows
        ]
        out += _table(["target", "subset", "samples", "errors", *metrics], body) + [""]
    timing = stage_rows(summary)
    out += ["### Stage timings (wall seconds)", ""]
    if timing:
        out += [
            f"Stages: {', '.join(STAGES)} (ttft: end of the user's turn to the first answer "
            "audio; total: one sample's whole run). Samples whose run failed or reported an "
            "error are left out.",
            "",
        ]
        out += _table(STAGE_HEADER, timing) + [""]
    else:
        out += ["No run records (`voxbench_fdb.json`) in this directory: no timings.", ""]
    if summary.get("method"):
        out += ["### Method", ""] + [f"- {line}" for line in summary["method"]] + [""]
    if summary.get("notes"):
        out += ["### Notes", ""] + [f"- {line}" for line in summary["notes"]] + [""]
    totals = summary.get("run_totals") or {}
    if totals.get("records"):
        line = RunTotals(totals["ok"], totals["errors"], totals["average_ttft"]).line()
        out += [f"Run: {line}", ""]
    return out


def render_report(results_dir: Path) -> str:
    """The report of every ``fdb_summary_<mode>.json`` in ``results_dir``."""
    lines = ["# Full-Duplex-Bench report", ""]
    for mode in MODES:
        path = results_dir / f"fdb_summary_{mode}.json"
        if path.is_file():
            lines += _section(read_summary(path))
    return "\n".join(lines).rstrip() + "\n"
