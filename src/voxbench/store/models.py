"""What the results store holds: one row per run, its scores and latencies, and the
leaderboard cells built from them."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from voxbench.core.results import RunKind

UNDECIDED_LIMIT = 0.2
"""A leaderboard cell whose score left more than this share of its units undecided (the
judge gave no verdict) is shown but not ranked: its rate rests on too few decisions. The
same limit as a scorecard's ``too_many_undecided``."""

RESULT_STATUSES = ("success", "finished")
"""Run statuses whose scores count: a conversation run's ``success``, a task run's ``finished``."""


class Result(BaseModel):
    """One score of one (benchmark, target) pair in a run, with its 95% interval.

    A conversation run has one pair (its benchmark and target); a task run has one per
    task × model, an FDB scoring one per category × target."""

    benchmark: str
    target: str
    dimension: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    unit: str = ""
    """``%`` for rates and percentages, ``s`` for times, empty for plain numbers."""
    higher_is_better: bool | None = True
    """None when the direction depends on the category (FDB's take-over rate)."""
    headline: bool = False
    """The pair's main score, the one the leaderboard shows."""
    note: str | None = None
    """What a reader must know before setting the score beside another (a strict pass over
    tool use only: ``tool use only — not comparable``)."""
    undecided: int | None = None
    """Units the judge left undecided (not in ``n``); None when the score has no judge."""

    @property
    def decided_share(self) -> float | None:
        """``n`` over the units judged, decided or not; None when nothing was undecided-able."""
        return decided_share(self.n, self.undecided)


def decided_share(n: int | None, undecided: int | None) -> float | None:
    """The share of judged units that were decided: ``n / (n + undecided)``."""
    if not undecided or n is None:
        return None if undecided is None else 1.0
    return n / (n + undecided)


class Latency(BaseModel):
    """Percentiles of one latency metric of a run (seconds)."""

    metric: str
    count: int = 0
    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None


class RunRow(BaseModel):
    """One indexed run: what was run, how it ended, where its artifacts are, its scores."""

    run_id: str
    kind: RunKind
    benchmark: str
    benchmark_hash: str | None = None
    target: str
    mode: str | None = None
    status: str
    started_at: str | None = None
    ended_at: str | None = None
    path: str
    judges: list[str] = Field(default_factory=list)
    versions: dict[str, str] = Field(default_factory=dict)
    results: list[Result] = Field(default_factory=list)
    latency: list[Latency] = Field(default_factory=list)
    signature: str = ""
    """Sizes and times of the files read: an unchanged signature needs no re-index."""

    @property
    def run_path(self) -> Path:
        return Path(self.path)

    def headline(self) -> Result | None:
        """The first headline score (a conversation run's strict pass rate)."""
        return next((r for r in self.results if r.headline), None)


class RunFilters(BaseModel):
    """Which runs to list or rank; every field left None matches everything."""

    benchmark: str | None = None
    target: str | None = None
    kind: RunKind | None = None
    mode: str | None = None
    judge: str | None = None
    """A judge label, or a part of one (``llm`` matches ``llm:openai/gpt-4o-mini``)."""
    since: str | None = None
    """Runs started on or after this ISO date (``2026-11-01``)."""
    until: str | None = None
    """Runs started on or before this ISO date (the whole day counts)."""
    status: str | None = None
    limit: int | None = None


class LeaderRow(BaseModel):
    """One leaderboard cell: a target on a benchmark, from its latest (or best) run."""

    benchmark: str
    target: str
    dimension: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    unit: str = ""
    higher_is_better: bool | None = True
    note: str | None = None
    run_id: str
    kind: RunKind
    mode: str | None = None
    judges: list[str] = Field(default_factory=list)
    started_at: str | None = None
    runs: int = 1
    """How many finished runs of this target on this benchmark match the filters."""
    path: str | None = None
    """Where the cell's run is (a viewer links only to the runs under the folder it serves)."""
    undecided: int | None = None
    """Units the judge left undecided (not in ``n``)."""
    ranked: bool = True
    """False when more than ``UNDECIDED_LIMIT`` of the units were undecided: the cell is
    shown with its decided share, never ranked (nor picked as a target's best run)."""

    @property
    def decided_share(self) -> float | None:
        """``n`` over the units judged, decided or not."""
        return decided_share(self.n, self.undecided)


class Skipped(BaseModel):
    """A directory that looks like a run but cannot be indexed, and why."""

    path: str
    reason: str


class IndexReport(BaseModel):
    """What ``index_tree`` / ``index_run`` did."""

    indexed: list[str] = Field(default_factory=list)
    """Run ids written (new or changed)."""
    unchanged: list[str] = Field(default_factory=list)
    skipped: list[Skipped] = Field(default_factory=list)

    def merge(self, other: IndexReport) -> None:
        self.indexed += other.indexed
        self.unchanged += other.unchanged
        self.skipped += other.skipped
