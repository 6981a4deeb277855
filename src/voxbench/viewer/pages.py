"""What the viewer's pages show, read from the run directories (never written to).

Each function returns plain values for a Jinja2 template; the templates escape every
string, so text from a run (a transcript holding ``<script>``) is shown as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from voxbench.core.errors import VoxbenchError
from voxbench.core.records import Judgment, Scorecard, TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.core.secrets import redact, redact_text
from voxbench.scoring.compare import Comparison, compare_runs
from voxbench.store import LeaderRow, Result, RunRow


@dataclass(frozen=True)
class Links:
    """Where a viewer page's links point: the served viewer's routes, or a static bundle's
    files (``live`` False: no filters form, no compare picker, no polling)."""

    home: str = "/"
    runs: str = "/runs"
    static: str = "/static/"
    live: bool = True
    bundle: bool = False

    def run(self, run_id: str) -> str:
        if self.bundle:
            return f"run/{bundle_folder(run_id)}/index.html"
        return f"/run/{quote(run_id, safe='')}/"


SERVED = Links()
BUNDLED = Links(home="index.html", runs="runs.html", static="static/", live=False, bundle=True)


def bundle_folder(run_id: str) -> str:
    """A run's folder name in a bundle (any character a file system may refuse replaced)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", run_id)


@dataclass
class TurnView:
    """One turn of a conversation run, as the run page lists it."""

    record: TurnRecord
    verdicts: list[Judgment]
    audio_from: float | None = None
    audio_to: float | None = None

    @property
    def failed(self) -> bool:
        return any(j.passed is False for j in self.verdicts)

    def tool_calls(self) -> list[tuple[str, str, str]]:
        """(name, arguments, result) of each call, as redacted JSON text."""
        return [(c.name, _json(c.arguments), _json(c.result)) for c in self.record.tool_calls]


@dataclass
class RunPage:
    """The fallback run page: the run's scores and, for a conversation, every turn."""

    row: RunRow
    card: Scorecard | None = None
    turns: list[TurnView] = field(default_factory=list)
    recording: str | None = None
    files: list[str] = field(default_factory=list)
    problem: str | None = None


def run_page(row: RunRow) -> RunPage:
    """Read what the run page shows; a run still being written shows what it has so far."""
    path = row.run_path
    page = RunPage(row=row, files=_files(path))
    if row.kind != "conversation":
        return page
    run = RunDirectory(path)
    try:
        records = run.turns()
        judgments = run.judgments() or []
        page.card = run.scorecard()
    except VoxbenchError as exc:
        page.problem = str(exc)
        return page
    by_turn: dict[str, list[Judgment]] = {}
    for j in judgments:
        by_turn.setdefault(j.turn, []).append(j)
    if run.has_recording:
        page.recording = RunDirectory.RECORDING
    for record in records:
        view = TurnView(record=record, verdicts=by_turn.get(record.turn, []))
        if page.recording is not None:
            # The recording is sample-aligned to the run clock: a turn plays from its start
            # to its end.
            view.audio_from = record.timings.start
            view.audio_to = record.timings.end
        page.turns.append(view)
    return page


@dataclass
class CompareSide:
    """One run's side of a compared turn: what it said, whether it failed, where to hear it."""

    record: TurnRecord
    failed: bool
    audio: str | None = None
    """The run's recording from the turn's start to its end (a URL), in audio runs."""


@dataclass
class ComparePage:
    """Two runs side by side: per-dimension deltas with the paired test, turn by turn."""

    a: RunRow
    b: RunRow
    comparison: Comparison | None = None
    rows: list[tuple[str, str, CompareSide | None, CompareSide | None]] = field(
        default_factory=list
    )
    """(turn, user text, A's side, B's side)."""
    scores: list[tuple[str, Result | None, Result | None]] = field(default_factory=list)
    """Other kinds: (what is scored, A's score, B's score), matched as ``score_pairs`` says."""
    problem: str | None = None


def score_pairs(a: RunRow, b: RunRow) -> list[tuple[str, Result | None, Result | None]]:
    """A's and B's scores side by side, each row one (benchmark, model, metric).

    Two runs of one model each compare model against model (the usual question: did B's model
    do better than A's?); runs holding several models (a task run of three) pair each model
    with itself, so a number is never set beside another model's."""
    single = len({r.target for r in a.results}) <= 1 and len({r.target for r in b.results}) <= 1

    def key(r: Result) -> tuple[str, ...]:
        return (r.benchmark, r.dimension) if single else (r.benchmark, r.target, r.dimension)

    rows: dict[tuple[str, ...], list[Result | None]] = {}
    for side, results in ((0, a.results), (1, b.results)):
        for r in results:
            rows.setdefault(key(r), [None, None])[side] = r
    out = []
    for k, (ra, rb) in rows.items():
        label = " · ".join(k)
        out.append((label, ra, rb))
    return out


def compare_page(a: RunRow, b: RunRow) -> ComparePage:
    """Compare two judged conversation runs (other kinds: their scores side by side)."""
    page = ComparePage(a=a, b=b)
    if a.kind != "conversation" or b.kind != "conversation":
        page.scores = score_pairs(a, b)
        return page
    try:
        run_a, run_b = RunDirectory(a.run_path), RunDirectory(b.run_path)
        turns_a, turns_b = run_a.turns(), run_b.turns()
        card_a, card_b = run_a.scorecard(), run_b.scorecard()
        judged_a, judged_b = run_a.judgments(), run_b.judgments()
    except VoxbenchError as exc:
        page.problem = str(exc)
        return page
    if card_a and card_b and judged_a is not None and judged_b is not None:
        page.comparison = compare_runs(card_a, turns_a, judged_a, card_b, turns_b, judged_b)
    else:
        page.problem = "both runs must be judged for the paired comparison"
    side_a = _sides(a, run_a, turns_a, judged_a or [])
    side_b = _sides(b, run_b, turns_b, judged_b or [])
    for turn in dict.fromkeys([*side_a, *side_b]):
        first = side_a.get(turn) or side_b[turn]
        page.rows.append((turn, first.record.user_text, side_a.get(turn), side_b.get(turn)))
    return page


def _sides(
    row: RunRow, run: RunDirectory, turns: list[TurnRecord], judgments: list[Judgment]
) -> dict[str, CompareSide]:
    failed = {j.turn for j in judgments if j.passed is False}
    recording = (
        f"/run/{quote(row.run_id, safe='')}/{RunDirectory.RECORDING}" if run.has_recording else None
    )
    out = {}
    for t in turns:
        audio = None
        if recording is not None:
            audio = f"{recording}#t={t.timings.start:.3f}"
            if t.timings.end is not None:
                audio += f",{t.timings.end:.3f}"
        out[t.turn] = CompareSide(record=t, failed=t.turn in failed, audio=audio)
    return out


KIND_TITLES = {
    "conversation": "Conversation benchmarks",
    "tasks": "Audio tasks",
    "fdb": "Full duplex",
}
"""The leaderboard's sections, one per run kind, in this order: each kind has its metrics."""


@dataclass
class Board:
    """One run kind's leaderboard as a matrix: one row per target, one column per benchmark."""

    kind: str
    title: str
    benchmarks: list[str]
    targets: list[str]
    cells: dict[tuple[str, str], LeaderRow]
    best: set[tuple[str, str]] = field(default_factory=set)
    """(target, benchmark) of each column's best ranked cell (an unranked one never is)."""


def boards(rows: list[LeaderRow]) -> list[Board]:
    """Lay leaderboard cells out as targets × benchmarks, one matrix per run kind, so a
    conversation pass rate never shares a table with a task's WER."""
    order = list(KIND_TITLES)
    kinds = sorted({r.kind for r in rows}, key=lambda k: (order.index(k) if k in order else 9, k))
    out = []
    for kind in kinds:
        mine = [r for r in rows if r.kind == kind]
        out.append(
            Board(
                kind=kind,
                title=KIND_TITLES.get(kind, kind),
                benchmarks=sorted({r.benchmark for r in mine}),
                targets=sorted({r.target for r in mine}),
                cells={(r.target, r.benchmark): r for r in mine},
                best=_best(mine),
            )
        )
    return out


def _best(rows: list[LeaderRow]) -> set[tuple[str, str]]:
    """Each benchmark's best ranked cell, by its metric's direction, where two or more ranked
    cells have a value (one alone is not "best" of anything) and no other ties it."""
    out = set()
    for benchmark in {r.benchmark for r in rows}:
        ranked = [
            r
            for r in rows
            if r.benchmark == benchmark
            and r.ranked
            and r.value is not None
            and r.higher_is_better is not None
        ]
        if len(ranked) < 2:
            continue
        pick = max if ranked[0].higher_is_better else min
        top = pick(ranked, key=lambda r: r.value or 0.0)
        if sum(r.value == top.value for r in ranked) == 1:  # a tie has no best
            out.add((top.target, top.benchmark))
    return out


def _files(path: Path) -> list[str]:
    try:
        return sorted(p.name for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    except OSError:
        return []


def _json(value: Any) -> str:
    return redact_text(json.dumps(redact(value), ensure_ascii=False, sort_keys=True))
