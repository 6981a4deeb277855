"""Read a run directory of any kind into the rows the store holds.

Every kind is read through its typed contract in ``core``: a conversation run through
``RunDirectory`` (``RunInfo``, ``Scorecard``), a task run through ``TaskRunDirectory``
(``TaskRunInfo``, ``TaskScores``), an FDB scoring as an ``FdbSummary``; no schema is spelled
here a second time. A model is named by its one identity (``ModelSpec.identity``): the oracle
of a task run and of a conversation run is ``local/oracle`` in both.
Anything that does not read cleanly is a ``RunError`` naming the file: the caller reports
the directory and skips it, so a half-written run is never indexed as a result.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from voxbench.core.errors import RunError
from voxbench.core.records import RunInfo
from voxbench.core.results import TASK_RUN_SCHEMA, FdbStats, FdbSummary, fdb_summary_mode
from voxbench.core.rundir import RunDirectory
from voxbench.core.taskrun import RUN_JSON, SCORES, TaskRunDirectory
from voxbench.store.models import Latency, Result, RunRow

FDB_TIMINGS = frozenset({"latency", "stop_latency", "response_latency"})
"""FDB metrics that are times (seconds, lower is better)."""
FDB_POOLED_SUBSET = "all"
READERS_VERSION = "5"
"""Part of every signature: a store indexed by older readers (2: one identity per model; 3:
the undecided count of every score; 4: a perturbed run is its own condition; 5: so is a
perturbed task run or FDB scoring) re-reads each run once, so no row keeps an old reading."""
_M = TypeVar("_M", bound=BaseModel)


def is_run_dir(path: Path) -> bool:
    """Whether ``path`` holds a run of any kind (a ``run.json`` or an FDB summary)."""
    if (path / RunDirectory.RUN).is_file():
        return True
    return any(fdb_summary_mode(p.name) for p in _files(path))


def read_runs(path: Path) -> list[RunRow]:
    """The runs in directory ``path`` (an FDB directory scored in two modes holds two)."""
    path = path.resolve()
    rows: list[RunRow] = []
    run_file = path / RunDirectory.RUN
    if run_file.is_file():
        data = _json_object(run_file)
        if data.get("schema") == TASK_RUN_SCHEMA:
            rows.append(_task_run(path))
        else:
            rows.append(_conversation_run(path))
    for file in sorted(_files(path), key=lambda p: p.name):
        mode = fdb_summary_mode(file.name)
        if mode is not None:
            rows.append(_fdb_run(path, file, mode))
    if not rows:
        raise RunError(f"{path}: not a run directory (no {RunDirectory.RUN} or FDB summary)")
    return rows


def signature(files: list[Path]) -> str:
    """Sizes and modification times of ``files``: equal signatures mean nothing changed."""
    parts = []
    for file in files:
        try:
            st = file.stat()
        except OSError:
            parts.append(f"{file.name}:-")
            continue
        parts.append(f"{file.name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("|".join([READERS_VERSION, *parts]).encode()).hexdigest()[:32]


def signature_of(path: Path) -> str:
    """The signature of every file the readers look at in run directory ``path``."""
    run = RunDirectory(path)
    names = [run.run_file, run.scorecard_file, run.transcript_file, path / SCORES]
    names += sorted((p for p in _files(path) if fdb_summary_mode(p.name)), key=lambda p: p.name)
    return signature(names)


# -- conversation runs -----------------------------------------------------------------------


def _conversation_run(path: Path) -> RunRow:
    run = RunDirectory(path)
    info = run.info()
    run.turns()  # a corrupt transcript is a broken run, not one to rank
    card = None
    if run.scorecard_file.is_file():
        card = run.scorecard()
        if card is None:
            raise RunError(f"{run.scorecard_file}: not a readable scorecard (half-written?)")
        if card.run_id != info.run_id:
            raise RunError(
                f"{run.scorecard_file}: scores run {card.run_id!r}, but {run.run_file} "
                f"is run {info.run_id!r}"
            )
    results: list[Result] = []
    latency: list[Latency] = []
    judges: list[str] = []
    if card is not None:
        benchmark, target = _condition(info), info.target.name
        for score, headline in [(card.strict_pass, True)] + [(d, False) for d in card.dimensions]:
            results.append(
                Result(
                    benchmark=benchmark,
                    target=target,
                    dimension=score.dimension,
                    value=_percent(score.rate),
                    ci_low=_percent(score.ci95[0]) if score.ci95 else None,
                    ci_high=_percent(score.ci95[1]) if score.ci95 else None,
                    n=score.scored,
                    unit="%",
                    headline=headline,
                    note=card.strict_pass_note if headline else None,
                    undecided=score.undecided,
                )
            )
        latency = [
            Latency(
                metric=name,
                count=s.count,
                mean=s.mean,
                p50=s.p50,
                p90=s.p90,
                p95=s.p95,
                p99=s.p99,
            )
            for name, s in card.latency.items()
        ]
        judges = list(card.judges)
    return RunRow(
        run_id=info.run_id,
        kind="conversation",
        benchmark=_condition(info),
        benchmark_hash=info.benchmark_hash,
        target=info.target.name,
        mode=info.mode,
        status=info.status,
        started_at=info.started_at,
        ended_at=info.ended_at,
        path=str(path),
        judges=judges,
        versions=info.versions,
        results=results,
        latency=latency,
        signature=signature_of(path),
    )


def _condition(info: RunInfo) -> str:
    """The benchmark as the run heard it: a run whose user audio was perturbed is a condition
    of its own (``smoke (noise:pink@10dB)``), never a cell shared with clean runs."""
    return heard(info.benchmark, info.perturbations)


def heard(benchmark: str, perturbations: str | None) -> str:
    """``benchmark`` as a run heard it: ``smoke (noise:pink@10dB)`` when perturbed."""
    return f"{benchmark} ({perturbations})" if perturbations else benchmark


def _percent(rate: float | None) -> float | None:
    return None if rate is None else round(100 * rate, 4)


# -- audio-task runs -------------------------------------------------------------------------


def _task_run(path: Path) -> RunRow:
    run = TaskRunDirectory.open(path)
    info = run.run_info()
    results: list[Result] = []
    scores_file = run.path / SCORES
    if info.status == "finished":
        if not scores_file.is_file():
            raise RunError(
                f"{scores_file}: missing, though {run.path / RUN_JSON} says the run finished"
            )
        for task, per_model in run.score_table().tasks.items():
            for label, task_scores in per_model.items():
                for i, (metric, m) in enumerate(task_scores.metrics.items()):
                    results.append(
                        Result(
                            benchmark=heard(task, info.perturbations),
                            target=info.identity(label),
                            dimension=metric,
                            value=m.value,
                            ci_low=m.ci[0] if m.ci else None,
                            ci_high=m.ci[1] if m.ci else None,
                            n=m.n,
                            higher_is_better=m.higher_is_better,
                            headline=i == 0,
                            undecided=m.undecided,
                        )
                    )
    fingerprints = sorted(t.fingerprint for t in info.tasks.values())
    models = [spec.identity for spec in info.model_specs().values()]
    return RunRow(
        run_id=info.id,
        kind="tasks",
        benchmark=heard(",".join(info.tasks) or "tasks", info.perturbations),
        benchmark_hash=hashlib.sha256("|".join(fingerprints).encode()).hexdigest()[:16],
        target=",".join(models) or "?",
        mode="tasks",
        status=info.status,
        started_at=info.started,
        ended_at=info.finished,
        path=str(path),
        versions=info.versions,
        results=results,
        signature=signature_of(path),
    )


# -- FDB scorings ----------------------------------------------------------------------------


def _fdb_run(path: Path, file: Path, mode: str) -> RunRow:
    summary = _validate(FdbSummary, _json_object(file), file)
    if summary.mode != mode:
        raise RunError(f"{file}: says mode {summary.mode!r}, its name says {mode!r}")
    pooled = {(r.target, r.category) for r in summary.rows if r.subset == FDB_POOLED_SUBSET}
    results: list[Result] = []
    latency: list[Latency] = []
    for row in summary.rows:
        if (row.target, row.category) in pooled and row.subset != FDB_POOLED_SUBSET:
            continue  # the category's pooled row stands for its subsets
        for i, (metric, stats) in enumerate(row.metrics.items()):
            low, high = _normal_interval(stats)
            timing = metric in FDB_TIMINGS
            results.append(
                Result(
                    benchmark=heard(f"fdb/{row.category}", summary.perturbations),
                    target=row.target,
                    dimension=metric,
                    value=stats.mean,
                    ci_low=low,
                    ci_high=high,
                    n=stats.n,
                    unit="s" if timing else "",
                    higher_is_better=False if timing else None,
                    headline=i == 0,
                )
            )
            if timing:
                latency.append(
                    Latency(
                        metric=f"{row.category}/{metric}",
                        count=stats.n,
                        mean=stats.mean,
                        p50=stats.p50,
                        p90=stats.p90,
                        p99=stats.p99,
                    )
                )
    stamp = datetime.fromtimestamp(file.stat().st_mtime, UTC).isoformat(timespec="seconds")
    versions = {}
    if summary.asr:
        versions["asr"] = summary.asr
    if summary.vad_model and summary.vad_model.get("sha256"):
        versions["vad_model_sha256"] = summary.vad_model["sha256"]
    targets = sorted({r.target for r in summary.rows})
    return RunRow(
        run_id="fdb-" + hashlib.sha256(f"{path}|{mode}".encode()).hexdigest()[:12],
        kind="fdb",
        benchmark=heard("fdb", summary.perturbations),
        target=",".join(targets) or "?",
        mode=mode,
        status="success",
        started_at=stamp,
        ended_at=stamp,
        path=str(path),
        judges=[summary.judge.name] if summary.judge else [],
        versions=versions,
        results=results,
        latency=latency,
        signature=signature_of(path),
    )


def _normal_interval(stats: FdbStats) -> tuple[float | None, float | None]:
    """mean ± 1.96 standard errors (population std, as the summary gives it)."""
    if stats.mean is None or stats.std is None or stats.n < 2:
        return None, None
    half = 1.96 * stats.std / math.sqrt(stats.n)
    return stats.mean - half, stats.mean + half


# -- helpers ---------------------------------------------------------------------------------


def _files(path: Path) -> list[Path]:
    try:
        return [p for p in path.iterdir() if p.is_file()]
    except OSError:
        return []


def _json_object(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RunError(f"{file}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RunError(f"{file}: expected a JSON object")
    return data


def _validate(model: type[_M], data: dict[str, Any], file: Path) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise RunError(f"{file}: {where}: {problem['msg']}") from None
