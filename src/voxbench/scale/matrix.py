"""Evaluation matrices: targets × benchmarks × modes × repeats, resumable by content.

``plan.yaml`` (every key is checked; an unknown one is an error naming the file and the key's
path)::

    targets:
      - local/oracle                                  # a name, or:
      - {name: gpt, target: openai/gpt-4o-mini, options: {temperature: 0.7}}
    benchmarks: [smoke, {benchmark: conference, only_turns: "0-19"}]
    modes: [text]                                     # text and/or audio
    repeats: 3                                        # seeds seed..seed+K-1
    seed: 0
    runs_dir: runs/matrix
    max_concurrency: 4                                # cells in flight
    providers: {openai: {max_concurrency: 2}}         # per target provider
    rate_limits:                                      # per endpoint, for each key
      - {endpoint: https://api.openai.com, requests_per_second: 5, burst: 2}
    run: {turn_timeout: 60}                           # any run-config key, for every cell
    judge: {model: openai/gpt-4o-mini, base_url: null}  # an LLM judge for conversation runs
    perturbations: [clean, noise:pink@10dB, codec:mulaw+loss:5%]   # an axis (issue 31)

``perturbations`` is an axis of its own: every audio-mode group, FDB corpus and task config runs
once under each spec (``clean``: none; ``voxbench.audio.perturb``), each its own condition
(``smoke (noise:pink@10dB)`` on the leaderboard); text-mode groups hear nothing and run clean
once. Without the key everything runs clean, at the paths it always had.

Each (target, benchmark, mode) is a repeat group at a path derived from its content — the
benchmark's content hash and the whole run config except the seed — so running the plan again
reuses every run that finished (same benchmark hash, target config and seed), resumes those
that were interrupted, and runs only what is missing; a changed benchmark or target option
is a new group. The matrix ends with one leaderboard (``leaderboard.json`` and
``leaderboard.md`` in ``runs_dir``).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.errors import ConfigError, VoxbenchError
from voxbench.core.names import SafeName, child_path
from voxbench.core.rundir import write_json_atomic, write_text_atomic
from voxbench.core.yamlfile import read_yaml, substitute_env, validate
from voxbench.judging.llm_judge import make_judge_client
from voxbench.providers.ratelimit import RateLimit, normalise_origin
from voxbench.providers.registry import Role, resolve_name
from voxbench.runner.config import RunConfig, build_config, canonical_perturbations
from voxbench.runner.launch import check_run_credentials
from voxbench.scale.cells import Cell, CellJudge, CellResult
from voxbench.scale.executors import Executor
from voxbench.scale.limits import CellCallback, Limits
from voxbench.scale.repeats import (
    REPEATS_FILE,
    RepeatGroup,
    finish_group,
    group_cells,
    plan_group,
    read_group,
    write_group,
)
from voxbench.tasks.config import EndpointRateLimit

LEADERBOARD_JSON = "leaderboard.json"
LEADERBOARD_MD = "leaderboard.md"
_PER_CELL_KEYS = frozenset(
    {"benchmark", "target", "base_url", "target_options", "mode", "seed", "runs_dir"}
)
"""Run-config keys the plan sets per cell (not allowed under ``run:``)."""


class TargetEntry(BaseModel):
    """A system under test of the matrix."""

    model_config = ConfigDict(extra="forbid")

    target: str
    name: SafeName | None = None
    """What the leaderboard calls it (default: the target): a name, never a path."""
    base_url: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.name or self.target


class BenchmarkEntry(BaseModel):
    """A conversation benchmark of the matrix (a built-in name or a package directory)."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    only_turns: str | None = None


class FdbEntry(BaseModel):
    """A Full-Duplex-Bench corpus of the matrix: every target drives it, then it is scored."""

    model_config = ConfigDict(extra="forbid")

    corpus: Path
    categories: list[str] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1)
    """At most this many samples of each category."""
    scoring: Literal["fdb-v1", "voxbench"] = "voxbench"
    realtime: bool | None = None
    """None: virtual time for in-process targets (as ``fdb run``)."""


class ProviderLimits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_concurrency: int = Field(ge=1)


def _perturbation_spec(spec: str) -> str:
    """One entry of ``perturbations``, canonical (``clean`` for none)."""
    try:
        canonical = canonical_perturbations(spec)
    except ConfigError as exc:
        raise ValueError(f"{exc.detail}; expected {exc.expected}") from None
    return canonical or "clean"


def _text_only() -> list[Literal["text", "audio"]]:
    return ["text"]


class MatrixPlan(BaseModel):
    """``plan.yaml``."""

    model_config = ConfigDict(extra="forbid")

    targets: list[TargetEntry | str] = Field(min_length=1)
    benchmarks: list[BenchmarkEntry | str] = Field(default_factory=list)
    """Conversation benchmarks."""
    fdb: list[FdbEntry] = Field(default_factory=list)
    """Full-Duplex-Bench corpora."""
    tasks: list[Path] = Field(default_factory=list)
    """Audio-task configs (``eval.yaml``), each run as written: its own models × tasks."""
    modes: list[Literal["text", "audio"]] = Field(default_factory=_text_only, min_length=1)
    repeats: int = Field(default=1, ge=1)
    seed: int = 0
    runs_dir: Path = Path("runs/matrix")
    max_concurrency: int = Field(default=4, ge=1)
    providers: dict[str, ProviderLimits] = Field(default_factory=dict)
    rate_limits: list[EndpointRateLimit] = Field(default_factory=list)
    run: dict[str, Any] = Field(default_factory=dict)
    """Run-config keys applied to every cell (``turn_timeout``, ``stt``, ``tts``…)."""
    judge: CellJudge | None = None
    """An LLM judge for the conversation runs (as ``voxbench judge --judge``); without one
    they are judged deterministically."""
    perturbations: list[Annotated[str, AfterValidator(_perturbation_spec)]] = Field(
        default_factory=list
    )
    """The perturbation axis: specs the cells run under (``clean``: none), canonical once
    loaded; empty: clean only."""

    def conditions(self) -> list[str | None]:
        """The perturbation axis as run: None for clean."""
        specs = dict.fromkeys(self.perturbations)  # each condition once
        return [None if s == "clean" else s for s in specs] or [None]

    @field_validator("run")
    @classmethod
    def _run_keys(cls, v: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(set(v) & _PER_CELL_KEYS)
        if clash:
            raise ValueError(
                f"{', '.join(clash)} is set by the matrix itself (targets, benchmarks, modes, "
                "seed), not under run"
            )
        unknown = sorted(set(v) - set(RunConfig.model_fields) - {"perturbations"})
        if unknown:
            raise ValueError(
                f"unknown run-config key {', '.join(unknown)}; allowed: "
                + ", ".join(sorted(set(RunConfig.model_fields) - _PER_CELL_KEYS))
            )
        return v

    @model_validator(mode="after")
    def _something_to_run(self) -> MatrixPlan:
        if not self.benchmarks and not self.fdb and not self.tasks:
            raise ValueError("the plan names no benchmark, no fdb corpus and no task config")
        if self.perturbations and ({"perturb", "perturbations"} & set(self.run)):
            raise ValueError("perturbations is the matrix's axis: not also under run")
        return self

    def target_entries(self) -> list[TargetEntry]:
        return [TargetEntry(target=t) if isinstance(t, str) else t for t in self.targets]

    def benchmark_entries(self) -> list[BenchmarkEntry]:
        return [BenchmarkEntry(benchmark=b) if isinstance(b, str) else b for b in self.benchmarks]

    def limits(self) -> Limits:
        return Limits(
            max_concurrency=self.max_concurrency,
            per_provider={k: v.max_concurrency for k, v in self.providers.items()},
            rate_limits={
                normalise_origin(r.endpoint): RateLimit(r.requests_per_second, r.burst)
                for r in self.rate_limits
            },
        )


def load_plan(path: Path) -> MatrixPlan:
    """Read and check ``plan.yaml``; relative paths in it are relative to the file."""
    data = substitute_env(read_yaml(path, what="matrix plan YAML"), file=path)
    plan = validate(MatrixPlan, data, file=path, what="matrix plan")
    base = path.parent
    runs_dir = plan.runs_dir if plan.runs_dir.is_absolute() else base / plan.runs_dir
    benchmarks: list[BenchmarkEntry | str] = []
    for entry in plan.benchmark_entries():
        local = base / entry.benchmark
        if not Path(entry.benchmark).is_absolute() and local.is_dir():
            entry = entry.model_copy(update={"benchmark": str(local.resolve())})
        benchmarks.append(entry)
    fdb = [
        e
        if e.corpus.is_absolute()
        else e.model_copy(update={"corpus": (base / e.corpus).resolve()})
        for e in plan.fdb
    ]
    tasks = [t if t.is_absolute() else (base / t).resolve() for t in plan.tasks]
    judge = plan.judge
    if judge is not None:  # the name its judgments carry; an unknown provider is said now
        try:
            _, parsed = resolve_name(judge.model, Role.TEXT_COMPLETION, field="judge.model")
        except ConfigError as exc:
            raise ConfigError(
                exc.detail, file=path, field="judge.model", expected=exc.expected
            ) from None
        judge = judge.model_copy(update={"model": f"{parsed.provider}/{parsed.model}"})
    return plan.model_copy(
        update={
            "runs_dir": runs_dir,
            "benchmarks": benchmarks,
            "fdb": fdb,
            "tasks": tasks,
            "judge": judge,
        }
    )


class MatrixGroup(BaseModel):
    """One (target, benchmark, mode) of the plan: a repeat group."""

    model_config = ConfigDict(extra="forbid")

    target: str
    benchmark: str
    mode: str
    path: Path
    group: RepeatGroup
    perturbations: str | None = None
    """What the target heard the user through (None: clean)."""


def content_key(config: RunConfig, benchmark_hash: str) -> str:
    """What makes two runs the same run, but for their seed: 12 hex digits."""
    described = config.model_dump(mode="json", exclude={"seed", "runs_dir"})
    text = json.dumps({"benchmark": benchmark_hash, "config": described}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def heard_as(benchmark: str, perturbations: str | None) -> str:
    """A benchmark, corpus or task as heard: ``smoke (noise:pink@10dB)`` (as the store shows
    it) when perturbed."""
    return f"{benchmark} ({perturbations})" if perturbations else benchmark


def _mode_conditions(plan: MatrixPlan) -> list[tuple[str, str | None]]:
    """(mode, perturbation) of each group: text mode hears nothing, so runs clean once."""
    out: list[tuple[str, str | None]] = []
    for mode in plan.modes:
        conditions = plan.conditions() if mode == "audio" else [None]
        out += [(mode, heard) for heard in conditions]
    return out


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-")[:48]


def plan_groups(plan: MatrixPlan, *, source: Path | None = None) -> list[MatrixGroup]:
    """Every group of the plan, each at its content-derived path (existing ones reused)."""
    out = []
    for target in plan.target_entries():
        for entry in plan.benchmark_entries():
            benchmark = load_benchmark(entry.benchmark)
            for mode, heard in _mode_conditions(plan):
                data: dict[str, Any] = {
                    **plan.run,
                    "benchmark": entry.benchmark,
                    "target": target.target,
                    "target_options": target.options,
                    "mode": mode,
                    "seed": plan.seed,
                    "runs_dir": plan.runs_dir,
                }
                if target.base_url:
                    data["base_url"] = target.base_url
                if entry.only_turns:
                    data["only_turns"] = entry.only_turns
                if heard is not None:
                    data["perturb"] = heard
                config = build_config(data, source=source)
                key = content_key(config, benchmark.content_hash)
                condition = f"{_slug(heard)}_" if heard else ""
                path = child_path(
                    plan.runs_dir, benchmark.id, f"{_slug(target.label)}_{mode}_{condition}{key}"
                )
                group = plan_group(config, plan.repeats, path, "matrix")
                if (path / REPEATS_FILE).is_file():
                    group = group.model_copy(update={"started_at": read_group(path).started_at})
                out.append(
                    MatrixGroup(
                        target=target.label,
                        benchmark=heard_as(benchmark.id, heard),
                        mode=mode,
                        path=path,
                        group=group,
                        perturbations=heard,
                    )
                )
    return out


class LeaderboardRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target: str
    benchmark: str
    mode: str
    runs: int
    finished: int
    perturbations: str | None = None
    strict_mean: float | None = None
    strict_ci95: tuple[float, float] | None = None
    strict_pass_hat: float | None = None
    """pass^K of the strict per-turn pass: turns passed in every run."""
    dimensions: dict[str, float | None] = Field(default_factory=dict)
    unstable_turns: int = 0
    group: str
    errors: dict[str, str] = Field(default_factory=dict)


class FdbLeaderboardRow(BaseModel):
    """One target on one category of an FDB corpus: each metric's mean."""

    model_config = ConfigDict(extra="forbid")

    target: str
    corpus: str
    category: str
    subset: str
    samples: int
    errors: int
    metrics: dict[str, float | None]
    out_dir: str
    perturbations: str | None = None


class TaskLeaderboardRow(BaseModel):
    """One model on one task of a task config: each metric's value (0–100) and interval."""

    model_config = ConfigDict(extra="forbid")

    config: str
    task: str
    model: str
    answered: int
    errors: int
    metrics: dict[str, float | None]
    ci95: dict[str, tuple[float, float] | None]
    run: str
    action: Literal["ran", "resumed", "reused"]
    perturbations: str | None = None


class Leaderboard(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repeats: int
    executor: str
    finished_at: str
    cells: dict[str, int]
    """How the cells went: ran, resumed, reused, error."""
    rows: list[LeaderboardRow]
    fdb: list[FdbLeaderboardRow] = Field(default_factory=list)
    fdb_failed: dict[str, str] = Field(default_factory=dict)
    """FDB sample (or shard) → why it could not be driven."""
    tasks: list[TaskLeaderboardRow] = Field(default_factory=list)
    judge: str | None = None
    """The LLM judge of the conversation runs (None: judged deterministically)."""


def run_matrix(
    plan: MatrixPlan,
    executor: Executor,
    *,
    source: Path | None = None,
    on_done: CellCallback | None = None,
) -> Leaderboard:
    """Run every cell of the plan that is not done yet, then rank the groups."""
    groups = plan_groups(plan, source=source)
    for g in groups:  # every key the matrix needs, before its first run
        check_run_credentials(g.group.config)
    if plan.judge is not None and groups:
        make_judge_client(plan.judge.model, base_url=plan.judge.base_url)
    cells: list[Cell] = []
    owners: list[int] = []
    for i, g in enumerate(groups):
        g.path.mkdir(parents=True, exist_ok=True)
        write_group(g.path, g.group.model_copy(update={"executor": executor.name}))
        for cell in group_cells(g.path, g.group):
            label = f"{g.target} · {cell.label.split(' · ', 1)[1]}"
            if g.perturbations:
                label += f" · heard through {g.perturbations}"
            cells.append(cell.model_copy(update={"label": label, "judge": plan.judge}))
            owners.append(i)
    results = executor.run(cells, plan.limits(), on_done)
    tally: dict[str, int] = {"ran": 0, "resumed": 0, "reused": 0, "error": 0}
    per_group: list[list[CellResult]] = [[] for _ in groups]
    for owner, result in zip(owners, results, strict=True):
        per_group[owner].append(result)
        tally["error" if result.status != "success" else result.action] += 1
    rows = []
    for g, group_results in zip(groups, per_group, strict=True):
        done = finish_group(
            g.path, g.group.model_copy(update={"executor": executor.name}), group_results
        )
        rows.append(_row(g, done, group_results))
    rows.sort(
        key=lambda r: (r.benchmark, r.mode, -(r.strict_mean if r.strict_mean is not None else -1))
    )
    fdb_rows, fdb_failed = run_fdb_entries(plan, executor)
    task_rows = run_task_entries(plan)
    board = Leaderboard(
        repeats=plan.repeats,
        executor=executor.name,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        cells=tally,
        rows=rows,
        fdb=fdb_rows,
        fdb_failed=fdb_failed,
        tasks=task_rows,
        judge=plan.judge.model if plan.judge is not None else None,
    )
    write_json_atomic(plan.runs_dir / LEADERBOARD_JSON, board.model_dump(mode="json"))
    write_text_atomic(plan.runs_dir / LEADERBOARD_MD, leaderboard_markdown(board))
    return board


def fdb_out_dir(
    plan: MatrixPlan, target: TargetEntry, entry: FdbEntry, heard: str | None = None
) -> Path:
    """Where a target's outputs on a corpus go: named by what makes them the same outputs
    (the corpus, the selection, the target and its options, the clock), so a second run of
    the plan finds the samples it drove and drives only the rest."""
    described = {
        "corpus": str(entry.corpus.resolve()),
        "categories": entry.categories,
        "limit": entry.limit,
        "realtime": entry.realtime,
        "target": target.target,
        "base_url": target.base_url,
        "options": target.options,
    }
    condition = ""
    if heard is not None:  # a clean pass keeps the path it always had
        described |= {"perturb": heard, "seed": plan.seed}
        condition = f"_{_slug(heard)}"
    key = hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:12]
    name = f"{_slug(target.label)}_{_slug(entry.corpus.name)}{condition}_{key}"
    return plan.runs_dir / "fdb" / name


def run_fdb_entries(
    plan: MatrixPlan, executor: Executor
) -> tuple[list[FdbLeaderboardRow], dict[str, str]]:
    """Drive every FDB corpus with every target (resuming per sample), score, rank."""
    from voxbench.fullduplex.scoring import score_directory
    from voxbench.fullduplex.stream import StreamOptions
    from voxbench.scale.fdb import FdbJob, drive_fdb
    from voxbench.targets.registry import canonical_name, target_provider

    rows: list[FdbLeaderboardRow] = []
    failed: dict[str, str] = {}
    for entry, target, heard in (
        (e, t, h) for e in plan.fdb for t in plan.target_entries() for h in plan.conditions()
    ):
        out = fdb_out_dir(plan, target, entry, heard)
        name = canonical_name(target.target)
        options = {k: plan.run[k] for k in ("stt", "tts") if plan.run.get(k)}
        job = FdbJob(
            corpus=entry.corpus, target=target.target, name=name, base_url=target.base_url,
            options={**options, **target.options}, benchmark=None, out_dir=out.resolve(),
            opts=StreamOptions(realtime=entry.realtime, perturb=heard, seed=plan.seed),
            with_clean=True,
            categories=tuple(entry.categories), limit=entry.limit,
            concurrency=plan.providers.get(target_provider(name), ProviderLimits(
                max_concurrency=plan.max_concurrency)).max_concurrency,
            in_process=target_provider(name) in ("local", "cascade"),
        )  # fmt: skip
        try:
            report = drive_fdb(job, executor)
            failed.update({str(k): v for k, v in report.failed.items()})
            if not (report.completed or report.resumed):
                continue
            scored = score_directory(out, mode=entry.scoring, target=name)
        except VoxbenchError as exc:  # this target on this corpus; the others go on
            failed[str(out)] = str(exc)
            continue
        for row in scored.summary.get("rows", []):
            rows.append(
                FdbLeaderboardRow(
                    target=target.label,
                    corpus=heard_as(entry.corpus.name, heard),
                    category=str(row.get("category")),
                    subset=str(row.get("subset", "")),
                    samples=int(row.get("samples", 0)),
                    errors=int(row.get("errors", 0)),
                    metrics={
                        m: (v.get("mean") if isinstance(v, dict) else None)
                        for m, v in row.get("metrics", {}).items()
                    },
                    out_dir=str(out),
                    perturbations=heard,
                )
            )
    rows.sort(key=lambda r: (r.corpus, r.category, r.subset, r.target))
    return rows, failed


def run_task_entries(plan: MatrixPlan) -> list[TaskLeaderboardRow]:
    """Run every task config of the plan in this process (its engine keeps each endpoint's
    requests in flight), each in a directory named by the config's content: a finished run
    of the same config is reused, an interrupted one resumed (nothing answered is asked
    again), anything else runs anew."""
    from voxbench.core.taskrun import RUN_JSON, TaskRunDirectory
    from voxbench.tasks.config import load_config
    from voxbench.tasks.run import run_tasks

    rows: list[TaskLeaderboardRow] = []
    for file, heard in ((f, h) for f in plan.tasks for h in plan.conditions()):
        config, text = load_config(file)
        key = hashlib.sha256(text.encode()).hexdigest()[:12]
        condition = f"_{_slug(heard)}" if heard else ""  # a clean run keeps its path
        output_dir = (plan.runs_dir / "tasks" / f"{_slug(file.stem)}{condition}_{key}").resolve()
        config = config.model_copy(update={"output_dir": str(output_dir)})
        previous = sorted(p for p in output_dir.glob("*") if (p / RUN_JSON).is_file())
        finished = [
            p for p in previous if TaskRunDirectory.open(p).info().get("status") == "finished"
        ]
        action: Literal["ran", "resumed", "reused"]
        if finished:
            run, action = TaskRunDirectory.open(finished[-1]), "reused"
        elif previous:
            run = run_tasks(None, "", resume=previous[-1]).run
            action = "resumed"
        else:
            run = run_tasks(config, text, config_file=file, base_dir=file.parent, perturb=heard).run
            action = "ran"
        for task, models in run.scores().get("tasks", {}).items():
            for model, scored in models.items():
                metrics = scored.get("metrics", {})
                rows.append(
                    TaskLeaderboardRow(
                        config=file.name, task=heard_as(task, heard), model=model,
                        answered=scored.get("answered", 0), errors=scored.get("errors", 0),
                        metrics={m: v.get("value") for m, v in metrics.items()},
                        ci95={m: tuple(v["ci"]) if v.get("ci") else None
                              for m, v in metrics.items()},
                        run=str(run.path), action=action, perturbations=heard,
                    )
                )  # fmt: skip
    return rows


def _row(g: MatrixGroup, done: RepeatGroup, results: list[CellResult]) -> LeaderboardRow:
    row = LeaderboardRow(
        target=g.target,
        benchmark=g.benchmark,
        mode=g.mode,
        runs=len(results),
        finished=sum(r.status == "success" for r in results),
        group=str(g.path),
        errors=done.errors,
        perturbations=g.perturbations,
    )
    summary = done.summary
    if summary is None:
        return row
    strict = summary.dimension("strict_pass")
    k = len(summary.runs)
    return row.model_copy(
        update={
            "strict_mean": strict.mean_rate if strict else None,
            "strict_ci95": strict.ci95 if strict else None,
            "strict_pass_hat": strict.pass_hat.get(k) if strict else None,
            "dimensions": {
                d.dimension: d.mean_rate for d in summary.dimensions if d.dimension != "strict_pass"
            },
            "unstable_turns": len(summary.unstable),
        }
    )


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def leaderboard_markdown(board: Leaderboard) -> str:
    """The leaderboard as a markdown table (``leaderboard.md``)."""
    dims = list(dict.fromkeys(d for r in board.rows for d in r.dimensions))
    k = board.repeats
    head = ["benchmark", "mode", "target", "strict pass (mean)", "95% CI", f"pass^{k}", *dims,
            "unstable turns", "runs"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in board.rows:
        ci = "—" if r.strict_ci95 is None else f"{r.strict_ci95[0]:.0%}–{r.strict_ci95[1]:.0%}"
        cells = [r.benchmark, r.mode, r.target, _pct(r.strict_mean), ci, _pct(r.strict_pass_hat),
                 *(_pct(r.dimensions.get(d)) for d in dims), str(r.unstable_turns),
                 f"{r.finished}/{r.runs}"]  # fmt: skip
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    for category in dict.fromkeys((frow.corpus, frow.category) for frow in board.fdb):
        fdb_rows = [frow for frow in board.fdb if (frow.corpus, frow.category) == category]
        metrics = list(dict.fromkeys(m for frow in fdb_rows for m in frow.metrics))
        head = ["target", "subset", "samples", "errors", *metrics]
        lines += ["", f"FDB {category[0]} · {category[1]}", ""]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for frow in fdb_rows:
            values = [
                "—" if frow.metrics.get(m) is None else f"{frow.metrics[m]:.3f}" for m in metrics
            ]
            cells = [frow.target, frow.subset, str(frow.samples), str(frow.errors), *values]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    for config in dict.fromkeys(trow.config for trow in board.tasks):
        task_rows = [trow for trow in board.tasks if trow.config == config]
        metrics = list(dict.fromkeys(m for trow in task_rows for m in trow.metrics))
        head = ["task", "model", "answered", "errors", *metrics]
        lines += ["", f"tasks {config}", ""]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for trow in task_rows:
            values = [
                "—" if trow.metrics.get(m) is None else f"{trow.metrics[m]:.2f}" for m in metrics
            ]
            cells = [trow.task, trow.model, str(trow.answered), str(trow.errors), *values]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
