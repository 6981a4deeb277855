"""The HTML page of an audio judge's calibration (``voxbench judge-audio calibrate --html``).

It reads the calibration report as the command prints it in JSON (a plain dict: the report
room does not import the judge), one section per judge — the verdict and its warnings, the
statistics per criterion with their intervals, the baselines, the confusion matrix, the
controls that must fail, the human ceiling — and the agreement between two judges.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voxbench.core.rundir import write_text_atomic
from voxbench.report.page import render_page

STATISTICS = (
    ("spearman", "Spearman ρ"),
    ("kendall", "Kendall τ-b"),
    ("kappa", "Cohen's κ"),
    ("kappa_quadratic", "quadratic-weighted κ"),
    ("alpha_ordinal", "Krippendorff's α (ordinal)"),
    ("alpha_interval", "Krippendorff's α (interval)"),
    ("alpha_nominal", "Krippendorff's α (nominal)"),
)


def render_calibration_html(report: dict[str, Any]) -> str:
    """The whole page (self-contained, autoescaped like every report page)."""
    judges = report.get("judges") or [report]
    return render_page(
        "calibration.html.j2",
        report=report,
        judges=judges,
        pairs=report.get("between_judges") or [],
        statistics=STATISTICS,
    )


def write_calibration_html(report: dict[str, Any], path: Path) -> Path:
    """Write the page to ``path`` (its folder is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, render_calibration_html(report))
    return path
