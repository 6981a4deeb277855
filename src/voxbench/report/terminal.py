"""Rich renderings of scorecards and runs for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from voxbench.core.measures import LatencySummary
from voxbench.core.records import (
    DimensionScore,
    EndState,
    Judgment,
    Rate,
    Scorecard,
    TurnRecord,
)
from voxbench.scoring.compare import Comparison


def _rate(score: DimensionScore | None) -> str:
    if score is None:
        return "—"
    text = "—"
    if score.rate is not None:
        text = f"{score.passed}/{score.scored} {score.rate:.0%}"
        if score.ci95 is not None:
            text += f" [{score.ci95[0]:.0%}–{score.ci95[1]:.0%}]"
    if score.undecided:
        text += f" [yellow]· {score.undecided} undecided[/yellow]"
    if score.absorbed_note:
        text += f" [cyan]· {score.absorbed_note}[/cyan]"
    return text


def _strict(card: Scorecard) -> str:
    text = f"[b]{_rate(card.strict_pass)}[/b]"
    if card.strict_pass_note:
        text += f"\n[bold red]{escape(card.strict_pass_note)}[/bold red]"
    return text


def _judged(card: Scorecard, kind: str) -> str:
    if card.judged is None:
        return "—"
    dims = getattr(card.judged, kind)
    return ", ".join(dims) if dims else "—"


def _share(value: Rate | None) -> str:
    if value is None or value.rate is None:
        return "—"
    return f"{value.passed}/{value.scored} {value.rate:.0%}"


def _end_state(value: EndState | None) -> str:
    if value is None:
        return "—"
    if value.passed:
        return "[green]as expected[/green]"
    # The full diff is in report.md and scorecard.json; the table stays readable.
    return f"[red]differs[/red] in {len(value.diff)} place(s): " + escape(
        _clip("; ".join(value.diff), 80)
    )


def scorecards_table(cards: Sequence[Scorecard], title: str = "Scorecard") -> Table:
    """Scorecards side by side: one column per run."""
    notes = [
        f"{c.target}: {line}" if len(cards) > 1 else line
        for c in cards
        if (line := c.undecided_summary()) is not None
    ]
    notes += [
        f"{c.target}: strict pass is {c.strict_pass_note}"
        if len(cards) > 1
        else f"strict pass is {c.strict_pass_note}"
        for c in cards
        if c.strict_pass_note
    ]
    table = Table(
        title=title,
        title_justify="left",
        caption="\n".join(notes) or None,
        caption_justify="left",
        caption_style="bold yellow" if any(c.too_many_undecided for c in cards) else "yellow",
    )
    # fold: in a narrow terminal a word too long for its column (a metric, a target name)
    # goes on over two lines instead of being cut to "…"
    table.add_column("", overflow="fold")
    for card in cards:
        table.add_column(card.target, justify="right", overflow="fold")
    dims: list[str] = []
    for card in cards:
        dims += [d.dimension for d in card.dimensions if d.dimension not in dims]
    table.add_row("[b]strict per-turn pass[/b]", *(_strict(c) for c in cards))
    for label, kind in (
        ("judged by code", "deterministic"),
        ("judged by an LLM", "llm"),
        ("judged from audio", "analysis"),
        ("not judged", "not_judged"),
    ):
        if any(c.judged is not None and getattr(c.judged, kind) for c in cards):
            table.add_row(label, *(_judged(c, kind) for c in cards))
    if any(c.scoring_rules != "voxbench" for c in cards):
        table.add_row("scoring rules", *(escape(c.scoring_rules) for c in cards))
    for dim in dims:
        table.add_row(dim, *(_rate(c.dimension(dim)) for c in cards))
    checks = [c.checks for c in cards]
    for label, key in (
        ("tool use over tool turns", "tool_use_over_tool_turns"),
        ("tool use over all turns", "tool_use_over_all_turns"),
    ):
        rates = [getattr(c, key) if c else None for c in checks]
        if any(r is not None for r in rates):
            table.add_row(label, *(_share(r) for r in rates))
    if any(c.checks is not None for c in cards):
        for label, num, den in (
            ("required calls on time", "required_calls_on_time", "required_calls"),
            ("facts covered", "facts_covered", "facts"),
            ("state checks passed", "state_checks_passed", "state_checks"),
        ):
            table.add_row(
                label,
                *(
                    f"{getattr(c.checks, num)}/{getattr(c.checks, den)}" if c.checks else "—"
                    for c in cards
                ),
            )
    if any(c.checks and (c.checks.calls_early or c.checks.calls_late) for c in cards):
        table.add_row(
            "calls early / late",
            *(
                f"{c.checks.calls_early} / {c.checks.calls_late}" if c.checks else "—"
                for c in cards
            ),
        )
    for label, key in (
        ("missing calls", "missing_calls"),
        ("wrong-argument calls", "wrong_argument_calls"),
        ("forbidden calls made", "forbidden_calls_made"),
        ("spurious calls", "spurious_calls"),
        ("false claims", "false_claims"),
        ("duplicate calls", "duplicate_calls"),
        ("state failures absorbed", "state_failures_absorbed"),
        ("speech WER heard vs transcript (mean)", "speech_wer_mean"),
        ("turns whose audio ≠ transcript", "speech_uncorroborated_turns"),
    ):
        values = [getattr(c, key) if c else None for c in checks]
        if any(v is not None for v in values):
            table.add_row(label, *("—" if v is None else str(v) for v in values))
    if any(c.checks and c.checks.end_state for c in cards):
        table.add_row(
            "end state", *(_end_state(c.checks.end_state if c.checks else None) for c in cards)
        )
    for key in ("no_response", "error", "retried", "reconnected", "ended_early", "judge_failures"):
        if any(getattr(c.counts, key) for c in cards):
            table.add_row(key.replace("_", " "), *(str(getattr(c.counts, key)) for c in cards))
    metrics: list[str] = []
    for card in cards:
        metrics += [m for m in card.latency if m not in metrics]
    for metric in metrics:
        table.add_row(
            f"{metric} p50 / p95 (ms)",
            *(_p50_p95(c.latency.get(metric)) for c in cards),
        )
    return table


def turns_table(
    records: Sequence[TurnRecord], judgments: Sequence[Judgment], verbose: bool = False
) -> Table:
    """One row per turn: what the user said, what the agent said and did, and verdicts."""
    by_turn: dict[str, list[Judgment]] = {}
    for j in judgments:
        by_turn.setdefault(j.turn, []).append(j)
    table = Table(show_lines=True)
    for col in ("turn", "user", "agent (transcript; heard)", "tool calls", "verdict"):
        table.add_column(col, overflow="fold")
    width = None if verbose else 160
    for rec in records:
        calls = "\n".join(
            f"{c.name}({', '.join(f'{k}={v}' for k, v in c.arguments.items())})"
            + (
                f" → {c.result.get('error')}"
                if isinstance(c.result, dict) and c.result.get("status") == "error"
                else ""
            )
            + (" [dup]" if c.is_duplicate else "")
            for c in rec.tool_calls
        )
        verdicts = []
        for j in by_turn.get(rec.turn, []):
            if j.absorbed_by:
                mark = "[cyan]↪[/cyan]"
            elif j.passed:
                mark = "[green]✓[/green]"
            else:
                mark = "[yellow]?[/yellow]" if j.passed is None else "[red]✗[/red]"
            line = f"{mark} {j.dimension}"
            if j.absorbed_by:
                line += f" (counted on {j.absorbed_by})"
            if j.passed is False:
                line += ": " + ("; ".join(j.evidence) or j.reasoning)
            verdicts.append(line)
        if rec.status != "ok":
            verdicts.insert(
                0, f"[red]{rec.status}[/red]" + (f": {'; '.join(rec.errors)}" if rec.errors else "")
            )
        # Words from the conversation are data: escape them so "[...]" is never read as markup.
        said = escape(rec.assistant_text if width is None else _clip(rec.assistant_text, width))
        if rec.heard_text is not None:  # audio runs: what local ASR heard, too
            heard = rec.heard_text if width is None else _clip(rec.heard_text, width)
            said = f"{said}\n[dim]heard: {escape(heard)}[/dim]"
        if rec.nudge is not None:  # the harness's follow-up: shown, never scored
            answer = (
                rec.nudge.assistant_text
                if width is None
                else _clip(rec.nudge.assistant_text, width)
            )
            said += f"\n[dim]after the harness nudge {escape(repr(rec.nudge.user_text))}: {escape(answer)}[/dim]"
            calls += "".join(
                f"\n{c.name} (after the nudge, not scored)" for c in rec.nudge.tool_calls
            )
        table.add_row(
            escape(rec.turn),
            escape(rec.user_text if width is None else _clip(rec.user_text, width)),
            said,
            escape(calls),
            "\n".join(verdicts),
        )
    return table


def _p50_p95(summary: LatencySummary | None) -> str:
    if summary is None or summary.p50 is None or summary.p95 is None:
        return "—"
    return f"{summary.p50 * 1000:.0f} / {summary.p95 * 1000:.0f}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _side(passed: int, scored: int, rate: float | None, absorbed: int) -> str:
    text = f"{passed}/{scored}" + (f" {rate:.0%}" if rate is not None else "")
    if absorbed:
        text += f" [cyan]· {absorbed} caused by earlier misses[/cyan]"
    return text


def comparison_table(comparison: Comparison) -> Table:
    """Per-dimension rates of two runs, their difference and the paired test."""
    caption = [comparison.test]
    for side, note in (("A", comparison.strict_note_a), ("B", comparison.strict_note_b)):
        if note:
            caption.append(f"{side}'s strict pass is {note}")
    table = Table(
        title=f"{comparison.benchmark}: {comparison.target_a} (A) vs {comparison.target_b} (B)",
        title_justify="left",
        caption="\n".join(caption),
    )
    for col in ("dimension", "A", "B", "B − A", "paired", "only A / only B", "p"):
        table.add_column(col, justify="left" if col == "dimension" else "right")
    for d in comparison.dimensions:
        diff = "—" if d.difference is None else f"{d.difference:+.1%}"
        p = f"{d.p_value:.3g}"
        if d.p_value < 0.05:
            p = f"[b]{p}[/b]"
        table.add_row(
            "[b]strict per-turn pass[/b]" if d.dimension == "strict_pass" else d.dimension,
            _side(d.a_passed, d.a_scored, d.a_rate, d.a_absorbed),
            _side(d.b_passed, d.b_scored, d.b_rate, d.b_absorbed),
            diff,
            str(d.paired_turns),
            f"{d.only_a_passed} / {d.only_b_passed}",
            p,
        )
    return table
