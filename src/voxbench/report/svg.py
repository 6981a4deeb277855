"""Small inline SVG plots for the HTML reports: distributions, a turn-taking timeline, rate bars.

Every plot is a ``Markup`` string of one ``<svg>`` element (no external plotting library, no
script): text inside is escaped here, so a turn id or an issue label can never become markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from markupsafe import Markup, escape

PALETTE = ("#2563eb", "#ea580c", "#16a34a", "#9333ea")
"""Series colours, in order (A, B, …)."""


def _num(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering ``lo``–``hi``."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    step = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if raw <= step * mult:
            step *= mult
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def rate_bar_svg(rate: float | None, ci: Sequence[float] | None, *, width: int = 160) -> Markup:
    """A pass rate as a bar, with its 95% interval as a whisker."""
    h = 14
    parts = [
        f'<svg class="ratebar" width="{width}" height="{h}" viewBox="0 0 {width} {h}" role="img">',
        f'<rect x="0" y="3" width="{width}" height="8" fill="#e5e7eb"/>',
    ]
    if rate is not None:
        colour = "#16a34a" if rate >= 0.9 else "#ca8a04" if rate >= 0.6 else "#dc2626"
        parts.append(f'<rect x="0" y="3" width="{_num(rate * width)}" height="8" fill="{colour}"/>')
    if ci is not None:
        lo, hi = (_num(v * width) for v in ci)
        parts += [
            f'<line x1="{lo}" x2="{hi}" y1="7" y2="7" stroke="#111827" stroke-width="1.5"/>',
            f'<line x1="{lo}" x2="{lo}" y1="2" y2="12" stroke="#111827"/>',
            f'<line x1="{hi}" x2="{hi}" y1="2" y2="12" stroke="#111827"/>',
        ]
    label = "no decided turns" if rate is None else f"{rate:.1%}"
    if ci is not None:
        label += f" (95% CI {ci[0]:.1%}–{ci[1]:.1%})"
    parts.append(f"<title>{escape(label)}</title></svg>")
    return Markup("".join(parts))


def distribution_svg(
    series: dict[str, Sequence[float]],
    *,
    title: str,
    width: int = 560,
    height: int = 200,
    bins: int = 24,
) -> Markup:
    """Histograms of latencies (seconds, shown in ms) on shared bins, one colour per series,
    overlaid, with each series' median as a dashed line."""
    data = {
        name: np.asarray([v for v in values if v is not None], dtype=float) * 1000
        for name, values in series.items()
    }
    left, right, bottom = 44, 12, 34
    top = 24 + 13 * len(data)  # the title, then one legend line per series
    height += 13 * len(data)
    plot_w, plot_h = width - left - right, height - top - bottom
    head = (
        f'<svg class="plot" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}">'
        f'<text x="{left}" y="15" class="plot-title">{escape(title)}</text>'
    )
    everything = np.concatenate([d for d in data.values() if d.size] or [np.zeros(0)])
    if everything.size == 0:
        return Markup(
            head + f'<text x="{left}" y="{top + plot_h / 2}" class="muted">no data</text></svg>'
        )
    lo, hi = float(everything.min()), float(everything.max())
    if hi - lo < 1:
        lo, hi = lo - 5, hi + 5
    edges = np.linspace(lo, hi, bins + 1)
    counts = {name: np.histogram(d, bins=edges)[0] for name, d in data.items()}
    peak = max(int(c.max()) for c in counts.values()) or 1

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    def y(c: float) -> float:
        return top + plot_h - c / peak * plot_h

    parts = [head]
    base = top + plot_h
    parts.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{base}" y2="{base}" stroke="#9ca3af"/>'
    )
    for t in _ticks(lo, hi):
        parts.append(
            f'<line x1="{_num(x(t))}" x2="{_num(x(t))}" y1="{base}" y2="{base + 4}" '
            f'stroke="#9ca3af"/><text x="{_num(x(t))}" y="{base + 16}" class="tick" '
            f'text-anchor="middle">{_num(t)}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w}" y="{height - 4}" class="tick" text-anchor="end">ms</text>'
        f'<text x="{left - 6}" y="{top + 8}" class="tick" text-anchor="end">{peak}</text>'
        f'<text x="{left - 6}" y="{base}" class="tick" text-anchor="end">0</text>'
    )
    bar_w = plot_w / bins
    for i, (name, c) in enumerate(counts.items()):
        colour = PALETTE[i % len(PALETTE)]
        for b, n in enumerate(c):
            if n:
                parts.append(
                    f'<rect x="{_num(left + b * bar_w + 0.5)}" y="{_num(y(n))}" '
                    f'width="{_num(max(bar_w - 1, 1))}" height="{_num(base - y(n))}" '
                    f'fill="{colour}" fill-opacity="0.5">'
                    f"<title>{escape(name)}: {n} turns, {_num(edges[b])}–{_num(edges[b + 1])} ms"
                    "</title></rect>"
                )
        values = data[name]
        if values.size:
            med = float(np.median(values))
            parts.append(
                f'<line x1="{_num(x(med))}" x2="{_num(x(med))}" y1="{top}" y2="{base}" '
                f'stroke="{colour}" stroke-dasharray="4 3" stroke-width="1.5">'
                f"<title>{escape(name)} median {_num(med)} ms</title></line>"
            )
    legend_x = left
    for i, (name, values) in enumerate(data.items()):
        label = f"{name}: n={values.size}"
        if values.size:
            p50, p90 = np.percentile(values, [50, 90])
            label += f", p50 {_num(p50)} ms, p90 {_num(p90)} ms"
        parts.append(
            f'<text x="{legend_x}" y="{30 + 13 * i}" class="legend" '
            f'fill="{PALETTE[i % len(PALETTE)]}">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


TIMELINE_WIDTH = 12_000
"""Pixels a long run's timeline is drawn on (it scrolls sideways)."""


@dataclass
class TimelineTurn:
    """One turn on the turn-taking timeline (seconds on the recording)."""

    turn: str
    start: float
    end: float
    user: tuple[float, float] | None = None
    agent: tuple[float, float] | None = None
    overlaps: list[tuple[float, float]] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    tag: float | None = None
    """Where the turn's marker tone was found, when tone tags were recorded."""


def timeline_svg(
    turns: Sequence[TimelineTurn],
    *,
    duration: float,
    unprompted: Sequence[tuple[float, float]] = (),
    px_per_second: float | None = None,
) -> Markup:
    """Both channels' speech per turn, overlaps in red, tags and issues, on one time axis;
    each turn links to its drilldown (``#turn-<id>``)."""
    if px_per_second is None:
        # Short runs get room to read each turn; long ones stay a scrollable strip.
        px_per_second = max(4.0, min(16.0, TIMELINE_WIDTH / max(duration, 1.0)))
    left, lane_h = 56, 18
    user_y, agent_y, issue_y = 30, 54, 90
    height = 112
    width = int(left + max(duration, 1.0) * px_per_second + 20)

    def x(t: float) -> str:
        return _num(left + max(t, 0.0) * px_per_second)

    def w(a: float, b: float) -> str:
        return _num(max((b - a) * px_per_second, 1.0))

    parts = [
        f'<svg class="timeline" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img" aria-label="turn-taking timeline">',
        f'<text x="4" y="{user_y + 13}" class="lane">user</text>',
        f'<text x="4" y="{agent_y + 13}" class="lane">agent</text>',
    ]
    for t in _ticks(0, duration, count=max(2, int(duration // 10))):
        parts.append(
            f'<line x1="{x(t)}" x2="{x(t)}" y1="{user_y - 4}" y2="{agent_y + lane_h + 4}" '
            f'stroke="#f3f4f6"/><text x="{x(t)}" y="{height - 4}" class="tick" '
            f'text-anchor="middle">{_num(t)} s</text>'
        )
    for turn in turns:
        tid = escape(turn.turn)
        parts.append(
            f'<a href="#turn-{tid}"><rect x="{x(turn.start)}" y="12" '
            f'width="{w(turn.start, turn.end)}" height="{agent_y + lane_h - 8}" '
            f'class="turn-window"><title>turn {tid}: {_num(turn.start)}–{_num(turn.end)} s'
            f"</title></rect>"
            f'<text x="{x(turn.start)}" y="22" class="turn-label">{tid}</text></a>'
        )
        if turn.user is not None:
            parts.append(
                f'<rect x="{x(turn.user[0])}" y="{user_y}" width="{w(*turn.user)}" '
                f'height="{lane_h}" class="seg-user"><title>turn {tid} user speech '
                f"{_num(turn.user[0])}–{_num(turn.user[1])} s</title></rect>"
            )
        if turn.agent is not None:
            parts.append(
                f'<rect x="{x(turn.agent[0])}" y="{agent_y}" width="{w(*turn.agent)}" '
                f'height="{lane_h}" class="seg-agent"><title>turn {tid} agent speech '
                f"{_num(turn.agent[0])}–{_num(turn.agent[1])} s</title></rect>"
            )
        for a, b in turn.overlaps:
            parts.append(
                f'<rect x="{x(a)}" y="{user_y}" width="{w(a, b)}" '
                f'height="{agent_y + lane_h - user_y}" class="seg-overlap">'
                f"<title>turn {tid} overlap {_num(a)}–{_num(b)} s</title></rect>"
            )
        if turn.tag is not None:
            parts.append(
                f'<line x1="{x(turn.tag)}" x2="{x(turn.tag)}" y1="{agent_y - 4}" '
                f'y2="{agent_y + lane_h + 4}" class="tag"><title>turn {tid} tag tone at '
                f"{_num(turn.tag)} s</title></line>"
            )
        if turn.issues:
            label = ", ".join(i.split(" (")[0] for i in turn.issues)
            parts.append(
                f'<text x="{x(turn.start)}" y="{issue_y}" class="issue">{escape(label)}'
                f"<title>{escape('; '.join(turn.issues))}</title></text>"
            )
    for a, b in unprompted:
        parts.append(
            f'<rect x="{x(a)}" y="{agent_y}" width="{w(a, b)}" height="{lane_h}" '
            f'class="seg-unprompted"><title>unprompted agent speech {_num(a)}–{_num(b)} s'
            "</title></rect>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


@dataclass
class CurvePoint:
    """One point of a degradation curve: its x label, value and 95% interval."""

    label: str
    value: float | None
    ci: tuple[float, float] | None = None


def curve_svg(
    series: dict[str, Sequence[CurvePoint]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    percent: bool = True,
    width: int = 560,
    height: int = 240,
) -> Markup:
    """Degradation curves: each series' value at each rung of a ladder (categorical x, in the
    order given), joined by lines, with its 95% interval as a whisker."""
    labels = list(dict.fromkeys(p.label for points in series.values() for p in points))
    values = [
        v
        for points in series.values()
        for p in points
        for v in (p.value, *(p.ci or ()))
        if v is not None
    ]
    left, right, bottom = 52, 16, 44
    top = 24 + 13 * len(series)
    height += 13 * len(series)
    plot_w, plot_h = width - left - right, height - top - bottom
    parts = [
        f'<svg class="plot" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}">'
        f'<text x="{left}" y="15" class="plot-title">{escape(title)}</text>'
    ]
    if not values or not labels:
        parts.append(f'<text x="{left}" y="{top + plot_h / 2}" class="muted">no data</text></svg>')
        return Markup("".join(parts))
    lo, hi = min(0.0, min(values)), max(values)
    hi = hi if hi > lo else lo + 1.0
    scale = 100.0 if percent else 1.0

    def x(i: int) -> float:
        return left + (i + 0.5) / len(labels) * plot_w

    def y(v: float) -> float:
        return top + plot_h - (v - lo) / (hi - lo) * plot_h

    base = top + plot_h
    parts.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{base}" y2="{base}" stroke="#9ca3af"/>'
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{base}" stroke="#9ca3af"/>'
    )
    for t in _ticks(lo * scale, hi * scale):
        ty = y(t / scale)
        parts.append(
            f'<line x1="{left - 4}" x2="{left}" y1="{_num(ty)}" y2="{_num(ty)}" stroke="#9ca3af"/>'
            f'<text x="{left - 6}" y="{_num(ty + 4)}" class="tick" text-anchor="end">'
            f"{_num(t)}</text>"
        )
    for i, label in enumerate(labels):
        parts.append(
            f'<text x="{_num(x(i))}" y="{base + 16}" class="tick" text-anchor="middle">'
            f"{escape(label)}</text>"
        )
    parts.append(
        f'<text x="{left + plot_w}" y="{height - 4}" class="tick" text-anchor="end">'
        f"{escape(x_label)}</text>"
        f'<text x="4" y="{top - 6}" class="tick">{escape(y_label)}</text>'
    )
    for s, (name, points) in enumerate(series.items()):
        colour = PALETTE[s % len(PALETTE)]
        at = {p.label: p for p in points}
        line = [
            f"{_num(x(i))},{_num(y(at[lab].value))}"  # type: ignore[arg-type]
            for i, lab in enumerate(labels)
            if lab in at and at[lab].value is not None
        ]
        if len(line) > 1:
            parts.append(
                f'<polyline points="{" ".join(line)}" fill="none" stroke="{colour}" '
                'stroke-width="1.5"/>'
            )
        for i, lab in enumerate(labels):
            p = at.get(lab)
            if p is None or p.value is None:
                continue
            text = f"{name} at {lab}: {_num(p.value * scale)}"
            if p.ci is not None:
                a, b = y(p.ci[0]), y(p.ci[1])
                parts.append(
                    f'<line x1="{_num(x(i))}" x2="{_num(x(i))}" y1="{_num(a)}" y2="{_num(b)}" '
                    f'stroke="{colour}"/>'
                )
                text += f" (95% CI {_num(p.ci[0] * scale)}–{_num(p.ci[1] * scale)})"
            parts.append(
                f'<circle cx="{_num(x(i))}" cy="{_num(y(p.value))}" r="3" fill="{colour}">'
                f"<title>{escape(text)}</title></circle>"
            )
        parts.append(
            f'<text x="{left}" y="{30 + 13 * s}" class="legend" fill="{colour}">'
            f"{escape(name)}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))
