"""The calibration page: self-contained, every value from the report escaped."""

from __future__ import annotations

from voxbench.report.calibration import render_calibration_html


def report(file: str, warning: str) -> dict:
    stat = {"value": 0.5, "ci95": [0.1, 0.9]}
    return {
        "verdict": "does not listen", "passed": False, "warnings": [warning],
        "controls": {"silence": {"accent": {"files": 2, "same_as_audio": 1.0,
                                            "accuracy": 0.5, "answers": [3, 3]}}},
        "rubric": "accent", "rubric_hash": "abc", "judge": "openai/x", "endpoint": "http://h",
        "samples": 1, "set": "/tmp/set", "raters": [], "classes": {}, "calls": 4,
        "from_cache": 0,
        "criteria": {"accent": {
            "kind": "score", "files": 2, "undecided": 0, "accuracy": 0.5,
            "accuracy_ci95": [0.1, 0.9], "within_one": 1.0, "within_one_ci95": [0.3, 1.0],
            "spearman": stat, "kappa_quadratic": stat, "alpha_ordinal": stat,
            "baseline": {"majority_label": 3, "majority_accuracy": 0.5,
                         "majority_p_value": 0.75, "shuffled_accuracy": 0.5,
                         "shuffled_accuracy_p_value": 1.0, "shuffled_kappa_quadratic": 0.0,
                         "primary": "kappa_quadratic", "p_value": 1.0},
            "confusion": {"scores": [1, 2, 3], "rows_expected": [[0, 0, 1], [0, 0, 0], [0, 0, 1]]},
        }},
        "files": [{"file": file, "expected": {"accent": 1}, "answers": {"accent": None}}],
    }  # fmt: skip


def test_the_page_escapes_what_the_report_holds() -> None:
    page = render_calibration_html(report("<script>alert(1)</script>.wav", "a <b>bold</b> claim"))
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert "a &lt;b&gt;bold&lt;/b&gt; claim" in page
    assert "does not listen" in page and "undecided" in page
    assert "quadratic-weighted κ" in page and "[+0.100, +0.900]" in page
    assert '<link rel="stylesheet"' not in page and "<script src" not in page
