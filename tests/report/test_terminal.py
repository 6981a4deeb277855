"""The terminal scorecard and comparison: what was judged, strict pass that is not
comparable, and absorbed failures shown as such (issue 12 items 1 and 12)."""

from __future__ import annotations

from rich.console import Console

from voxbench.core.records import Judgment, TurnRecord, TurnTimings
from voxbench.report.terminal import comparison_table, scorecards_table
from voxbench.scoring.compare import compare_runs
from voxbench.scoring.scorecard import build_scorecard

from ..scoring.test_scorecard import _fact_free_benchmark


def rendered(table) -> str:  # noqa: ANN001 - a rich Table
    console = Console(record=True, width=240, color_system=None)
    console.print(table)
    return console.export_text()


def records(n: int) -> list[TurnRecord]:
    return [
        TurnRecord(turn=str(i), index=i, user_text="u", timings=TurnTimings(start=0.0))
        for i in range(n)
    ]


def test_show_marks_a_tool_use_only_strict_pass_and_lists_what_was_not_judged() -> None:
    judgments = [Judgment(turn=t, dimension="tool_use", passed=True) for t in "01"]
    card = build_scorecard(
        run_id="r",
        benchmark="b",
        target="t",
        records=records(2),
        judgments=judgments,
        rule_table=_fact_free_benchmark(),
    )
    text = rendered(scorecards_table([card]))
    assert "2/2 100%" in text and "tool use only — not comparable" in text
    assert "judged by code" in text and "instruction_following, kb_grounding" in text


def test_absorbed_failures_read_as_caused_by_earlier_misses_in_show_and_compare() -> None:
    recs = records(41)
    a = [Judgment(turn="0", dimension="tool_use", passed=False)]
    a += [
        Judgment(turn=str(i), dimension="state", passed=True, absorbed_by="turn 0 tool_use")
        for i in range(1, 41)
    ]
    b = [Judgment(turn="0", dimension="tool_use", passed=True)]
    b += [Judgment(turn=str(i), dimension="state", passed=True) for i in range(1, 41)]
    card_a = build_scorecard(run_id="a", benchmark="b", target="A", records=recs, judgments=a)
    card_b = build_scorecard(run_id="b", benchmark="b", target="B", records=recs, judgments=b)
    text = rendered(scorecards_table([card_a]))
    assert "0/40 0%" in text and "40 caused by earlier misses" in text
    comparison = compare_runs(card_a, recs, a, card_b, recs, b)
    state = next(d for d in comparison.dimensions if d.dimension == "state")
    assert (state.a_passed, state.a_absorbed, state.b_passed) == (0, 40, 40)
    shown = rendered(comparison_table(comparison))
    assert "0/40 0% · 40 caused by earlier misses" in shown and "40/40 100%" in shown


def test_a_narrow_terminal_cuts_no_name_short() -> None:
    """At 60 columns the demo's two-target card printed ``first_audio_late…``: a long name
    now goes on over two lines, and the table still fits."""
    from voxbench.core.records import LatencySummary

    summary = LatencySummary(count=2, p50=0.5, p95=0.9)
    cards = [
        build_scorecard(
            run_id=name, benchmark="b", target=name, records=records(2), judgments=[]
        ).model_copy(update={"latency": {"first_audio_latency": summary}})
        for name in ("local/oracle", "cascade/local/baseline")
    ]
    console = Console(record=True, width=60, color_system=None)
    console.print(scorecards_table(cards))
    text = console.export_text()
    assert "…" not in text and "first_audio_late" in text and "baseline"[-3:] in text
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 60
    assert all(line.endswith(("┓", "┃", "┩", "│", "┘")) for line in lines[1:])  # not cropped
