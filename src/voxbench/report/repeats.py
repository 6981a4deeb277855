"""Rich renderings of repeat groups: the summary of K runs, and two groups compared."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from voxbench.scoring.repeats import RepeatComparison, RepeatSummary


def _interval(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f" [{ci[0]:.0%}–{ci[1]:.0%}]"


def _name(dimension: str) -> str:
    return "[b]strict per-turn pass[/b]" if dimension == "strict_pass" else dimension


def repeat_summary_table(summary: RepeatSummary, title: str) -> Table:
    """Per dimension: mean pass rate with its interval, run spread, pass@K, pass^K, flips."""
    k = len(summary.runs)
    table = Table(
        title=escape(title),
        title_justify="left",
        caption=(
            f"{k} runs. mean: pooled over runs and turns, 95% interval with runs and turns as "
            f"clusters. pass@{k}: the turn passed in at least one run; pass^{k}: in all. "
            "flips: turns passed in some runs and failed in others."
        ),
    )
    for col in ("dimension", "mean [95% CI]", "per run", f"pass@{k}", f"pass^{k}", "flips"):
        table.add_column(col, justify="left" if col == "dimension" else "right")
    for d in summary.dimensions:
        mean = "—" if d.mean_rate is None else f"{d.mean_rate:.1%}{_interval(d.ci95)}"
        runs = " ".join("—" if r is None else f"{r:.0%}" for r in d.run_rates)
        table.add_row(
            _name(d.dimension),
            mean,
            runs,
            "—" if k not in d.pass_at else f"{d.pass_at[k]:.0%}",
            "—" if k not in d.pass_hat else f"{d.pass_hat[k]:.0%}",
            str(len(d.unstable_turns)),
        )
    return table


def unstable_turns_table(summary: RepeatSummary) -> Table:
    """The turns whose outcome flipped between runs, with what flipped."""
    table = Table(title="unstable turns", title_justify="left")
    for col in ("turn", "dimensions (passed/decided runs)"):
        table.add_column(col)
    per_turn = {
        (d.dimension, t.turn): t for d in summary.dimensions for t in d.per_turn if t.unstable
    }
    for turn, dims in summary.unstable.items():
        parts = [f"{d} {per_turn[(d, turn)].passed}/{per_turn[(d, turn)].decided}" for d in dims]
        table.add_row(escape(turn), escape(", ".join(parts)))
    return table


def repeat_comparison_table(comparison: RepeatComparison, title: str) -> Table:
    """Two repeat groups per dimension: means, the difference, the run-permutation test."""
    table = Table(
        title=escape(title),
        title_justify="left",
        caption=f"{comparison.test}; A: {comparison.runs_a} runs, B: {comparison.runs_b} runs",
    )
    for col in ("dimension", "A mean", "B mean", "B − A", "paired turns", "p", "smallest p"):
        table.add_column(col, justify="left" if col == "dimension" else "right")
    for d in comparison.dimensions:
        p = "—" if d.p_value is None else f"{d.p_value:.3g}"
        if d.p_value is not None and d.p_value < 0.05:
            p = f"[b]{p}[/b]"
        table.add_row(
            _name(d.dimension),
            "—" if d.a_rate is None else f"{d.a_rate:.1%}{_interval(d.a_ci95)}",
            "—" if d.b_rate is None else f"{d.b_rate:.1%}{_interval(d.b_ci95)}",
            "—" if d.difference is None else f"{d.difference:+.1%}",
            str(d.paired_turns),
            p,
            "—" if d.smallest_p is None else f"{d.smallest_p:.3g}",
        )
    return table
