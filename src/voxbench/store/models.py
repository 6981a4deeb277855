"""What the results store holds: one row per run, its scores and latencies, and the
leaderboard cells built from them."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from voxbench.core.results import RunKind

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
