"""A calibration report (``calibrate.calibrate`` / ``calibrate_judges``) as terminal text."""

from __future__ import annotations

from typing import Any

STATISTICS = (
    ("spearman", "Spearman rho"),
    ("kendall", "Kendall tau-b"),
    ("kappa", "Cohen kappa"),
    ("kappa_quadratic", "quadratic kappa"),
    ("alpha_ordinal", "Krippendorff alpha (ordinal)"),
    ("alpha_interval", "Krippendorff alpha (interval)"),
    ("alpha_nominal", "Krippendorff alpha (nominal)"),
)


def _value(stat: dict[str, Any] | None) -> str:
    if not stat or stat.get("value") is None:
        return "n/a"
    ci = stat.get("ci95")
    return f"{stat['value']:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "")


def _interval(ci: Any) -> str:
    return f" [{ci[0]}, {ci[1]}]" if ci else ""


def _baseline(b: dict[str, Any]) -> list[str]:
    if b.get("majority_accuracy") is None:
        return ["  chance: n/a"]
    primary = b.get("primary", "accuracy")
    return [
        f"  constant answer: always {b['majority_label']} scores {b['majority_accuracy']} "
        f"(judge better: p = {b.get('majority_p_value')}, exact binomial)",
        f"  shuffled labels: accuracy {b['shuffled_accuracy']} "
        f"(p = {b.get('shuffled_accuracy_p_value')}), {primary} "
        f"{b.get('shuffled_' + primary)} (p = {b['p_value']}, permutation)",
    ]


def _criterion(name: str, c: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"{name} ({c.get('kind', 'score')}s): {c['files']} files judged, {c['undecided']} undecided",
        f"  accuracy {c['accuracy']}{_interval(c.get('accuracy_ci95'))}"
        + (
            f"   within one {c['within_one']}{_interval(c.get('within_one_ci95'))}"
            if "within_one" in c
            else ""
        )
        + "   (95% Wilson)",
    ]
    for key, label in STATISTICS:
        if key in c:
            lines.append(f"  {label:<30} {_value(c[key])}")
    lines.append("  (intervals: 95% bootstrap over files, seeded)")
    lines += _baseline(c.get("baseline") or {})
    confusion = c["confusion"]
    heads = confusion.get("scores") or confusion.get("classes")
    lines.append("  confusion (rows: expected, columns: judged):")
    lines.append("         " + " ".join(f"{str(s):>6}" for s in heads))
    for expected, row in zip(heads, confusion["rows_expected"], strict=True):
        lines.append(f"  {str(expected):>6} " + " ".join(f"{n:>6}" for n in row))
    if c.get("recall"):
        lines.append("  recall: " + ", ".join(f"{k} {v}" for k, v in c["recall"].items()))
    retest = c.get("test_retest")
    if retest:
        lines.append(
            f"  test-retest over {retest['files']} files: exact agreement "
            f"{retest['exact_agreement']}, Spearman (samples 1 vs 2) "
            f"{retest['spearman_first_two']}, mean std {retest['mean_std']}"
        )
    top = c.get("ceiling")
    if top:
        lines.append(
            f"  human ceiling: alpha ({top['level']}) among {top['raters']} raters "
            f"{_value(top['alpha_raters'])}, with the judge as one more rater "
            f"{top['alpha_with_judge']}; rater pairs agree exactly on "
            f"{top['rater_pair_exact_agreement']}"
        )
    return lines


def _one(report: dict[str, Any]) -> list[str]:
    lines = [
        f"calibration of {report['judge']} on rubric {report['rubric']} "
        f"({report['rubric_hash']}), {report['samples']} sample(s) per file",
        f"labelled set: {report['set']}"
        + (f" · {len(report['raters'])} human raters" if report.get("raters") else ""),
        f"{report.get('calls', 0)} calls made, {report.get('from_cache', 0)} from cache",
    ]
    for name, c in report["criteria"].items():
        lines += _criterion(name, c)
    for control, per in (report.get("controls") or {}).items():
        for name, entry in per.items():
            share = entry["same_as_audio"]
            shown = "n/a" if share is None else f"{100 * share:.0f}%"
            extra = (
                f", follows the other audio on {100 * entry['follows_donor']:.0f}%"
                if entry.get("follows_donor") is not None
                else ""
            )
            lines.append(
                f"control {control}, {name}: the same answer as with the real audio on {shown} "
                f"of {entry['files']} files{extra} (a judge that listens: low)"
            )
    lines.append("")
    lines += [f"WARNING: {w}" for w in report.get("warnings", [])]
    lines.append(f"verdict: {report['verdict']}")
    return lines


def render_calibration(report: dict[str, Any]) -> str:
    """The report as plain text for the terminal."""
    if "judges" not in report:
        return "\n".join(_one(report))
    lines: list[str] = []
    for i, one in enumerate(report["judges"]):
        lines += [f"=== judge {i + 1}: {one['judge']} ===", *_one(one), ""]
    for pair in report["between_judges"]:
        a, b = (report["judges"][i]["judge"] for i in pair["judges"])
        lines.append(f"=== agreement between {a} and {b} (real clips) ===")
        for name, c in pair["criteria"].items():
            parts = [f"{name}: {c['files']} files, exact {c['exact_agreement']}"]
            if "within_one" in c:
                parts.append(f"within one {c['within_one']}")
            parts += [f"{label} {_value(c[key])}" for key, label in STATISTICS if key in c]
            lines.append("  " + "; ".join(parts))
    lines += ["", f"verdict: {report['verdict']}"]
    return "\n".join(lines)
