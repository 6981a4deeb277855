"""The robustness report (``scoring.robustness.RobustnessReport``) as a markdown table and a
self-contained HTML page with its degradation curves (issue 31)."""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup

from voxbench.core.rundir import write_text_atomic
from voxbench.report.page import render_page
from voxbench.report.svg import CurvePoint, curve_svg
from voxbench.scoring.robustness import CLEAN, Drop, RobustnessReport

ROBUSTNESS_HTML = "robustness.html"
ROBUSTNESS_MD = "robustness.md"
ROBUSTNESS_JSON = "robustness.json"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}"


def _drop(d: Drop) -> str:
    if d.drop is None:
        return "—"
    ci = f" [{d.drop_ci[0] * 100:+.1f}, {d.drop_ci[1] * 100:+.1f}]" if d.drop_ci else ""
    return f"{d.drop * 100:+.1f}{ci}"


def table_rows(report: RobustnessReport) -> list[list[str]]:
    """One row per condition × dimension: clean, perturbed, drop [95% CI], pairs, p."""
    rows = []
    for c in report.conditions:
        for d in c.drops:
            arrow = "" if d.higher_is_better else " ↓"
            rows.append(
                [c.spec, d.name + arrow, _pct(d.clean), _pct(d.value), _drop(d),
                 f"{d.paired}", f"{d.worse}/{d.better}", f"{d.p_value:.3g}"]
            )  # fmt: skip
    return rows


TABLE_HEAD = ["condition", "dimension", "clean %", "perturbed %", "drop pts [95% CI]",
              "paired", "worse/better", "p"]  # fmt: skip


def markdown(report: RobustnessReport) -> str:
    """``robustness.md``: the drops, then the latency shifts."""
    lines = [
        f"# Robustness: {report.benchmark} · {report.target}",
        "",
        f"Clean: {', '.join(report.clean_runs)}. Test: {report.test}. Interval: {report.interval}.",
        "",
        "| " + " | ".join(TABLE_HEAD) + " |",
        "|" + "---|" * len(TABLE_HEAD),
    ]
    lines += ["| " + " | ".join(r) + " |" for r in table_rows(report)]
    shifts = [(c, s) for c in report.conditions for s in c.latency]
    if shifts:
        lines += ["", "| condition | metric | clean p50 ms | p50 ms | median shift ms [95% CI] "
                  "| paired | p |", "|---|---|---|---|---|---|---|"]  # fmt: skip
        for c, s in shifts:
            ci = (
                f" [{s.shift_ci[0] * 1000:+.0f}, {s.shift_ci[1] * 1000:+.0f}]" if s.shift_ci else ""
            )
            shift = "—" if s.median_shift is None else f"{s.median_shift * 1000:+.0f}{ci}"
            lines.append(
                f"| {c.spec} | {s.metric} | {_ms(s.clean_p50)} | {_ms(s.p50)} | {shift} | "
                f"{s.paired} | {s.p_value:.3g} |"
            )
    return "\n".join(lines) + "\n"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1000:.0f}"


def _label(report: RobustnessReport, spec: str, level: float | None) -> str:
    return f"{level:g}" if report.axis and level is not None else spec


def curves(report: RobustnessReport, *, limit: int = 6) -> list[Markup]:
    """Score vs rung, clean first: one plot per dimension (at most ``limit``), and the median
    voice-to-voice latency for conversation runs."""
    names = list(dict.fromkeys(d.name for c in report.conditions for d in c.drops))[:limit]
    x_label = report.axis or "condition"
    plots = []
    for name in names:
        first = next((d for c in report.conditions for d in c.drops if d.name == name), None)
        if first is None:
            continue
        points = [CurvePoint(CLEAN, first.clean, first.clean_ci)]
        for c in report.conditions:
            d = next((d for d in c.drops if d.name == name), None)
            if d is not None:
                points.append(CurvePoint(_label(report, c.spec, c.level), d.value, d.ci))
        plots.append(
            curve_svg({name: points}, title=f"{name} under the ladder", x_label=x_label,
                      y_label="%" + ("" if first.higher_is_better else " (lower is better)"))
        )  # fmt: skip
    shifts = [(c, s) for c in report.conditions for s in c.latency]
    if shifts:
        points = [CurvePoint(CLEAN, shifts[0][1].clean_p50)]
        points += [CurvePoint(_label(report, c.spec, c.level), s.p50) for c, s in shifts]
        plots.append(
            curve_svg({"voice-to-voice p50": points}, title="voice-to-voice latency (p50, s)",
                      x_label=x_label, y_label="s", percent=False)
        )  # fmt: skip
    return plots


def write_report(report: RobustnessReport, out_dir: Path) -> Path:
    """``robustness.json``, ``robustness.md`` and ``robustness.html`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out_dir / ROBUSTNESS_JSON, report.model_dump_json(indent=2) + "\n")
    write_text_atomic(out_dir / ROBUSTNESS_MD, markdown(report))
    latency = [(c, s) for c in report.conditions for s in c.latency]
    page = render_page("robustness.html.j2", report=report, curves=curves(report), latency=latency)
    write_text_atomic(out_dir / ROBUSTNESS_HTML, page)
    return out_dir / ROBUSTNESS_HTML
