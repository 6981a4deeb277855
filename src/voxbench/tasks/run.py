"""``run_tasks``: plan, run the engine into a run directory, pool the scores, write the outputs."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from voxbench.core.errors import RunError
from voxbench.core.names import ModelSpec
from voxbench.core.results import TaskRunInfo, TaskScores
from voxbench.core.taskrun import RUN_JSON, TaskRunDirectory
from voxbench.core.versions import run_versions
from voxbench.metrics.registry import metric_setup
from voxbench.providers.ratelimit import LocalPacer, current_pacer, install_pacer
from voxbench.tasks.config import EvalConfig, parse_config
from voxbench.tasks.engine.cache import ResponseCache
from voxbench.tasks.engine.work_queue import Engine, Progress
from voxbench.tasks.perturb import perturbed_plan
from voxbench.tasks.plan import Job, Plan, build_plan
from voxbench.tasks.scores import compute_scores

CACHE_FILE = "cache.sqlite"
AUDIO_JUDGMENTS_DIR = "audio-judgments"
"""The audio judge's cached judgments, beside the response cache (shared by the runs there)."""


@dataclass
class TaskRunResult:
    """What a run produced."""

    run: TaskRunDirectory
    plan: Plan
    scores: dict[str, Any]
    requests: int
    """Endpoint calls made by this invocation (0 when everything came from the cache)."""
    cached: int = 0
    """Records this invocation answered from the response cache."""
    inference: dict[str, Any] = field(default_factory=dict)
    """This invocation's inference phase (``run.json``'s ``inference``)."""


def run_tasks(
    config: EvalConfig | None,
    config_text: str,
    *,
    config_file: Path | None = None,
    base_dir: Path | None = None,
    tasks_dirs: list[Path] | None = None,
    dataset_dirs: dict[str, Path] | None = None,
    resume: Path | None = None,
    progress: Progress | None = None,
    on_plan: Callable[[Plan], None] | None = None,
    endpoint_factory: Any = None,
    sharded: Callable[[TaskRunDirectory], Answered] | None = None,
    use_cache: bool = True,
    perturb: str | None = None,
) -> TaskRunResult:
    """Run ``config`` into a new run directory, or continue ``resume`` (its own config).

    ``sharded`` answers the missing records elsewhere instead of in this process (the Ray
    executor, ``scale.task_shards``): it leaves their rows in the run's shard files
    (``run_shard``), which are merged into ``records.jsonl`` before the scores are computed.
    ``dataset_dirs`` (``--dataset-dir``) add to and win over the config's ``dataset_dirs``;
    ``run.json`` keeps them all, absolute, so a resumed or sharded run reads the same copies.
    ``use_cache=False`` (``--no-cache``) asks every request again (the new replies are
    stored); ``run.json``'s ``no_cache`` says so to the shards of a sharded run.
    ``perturb`` (``--perturb``, a ``voxbench.audio.perturb`` spec): the models hear every
    record's clip through it (``tasks.perturb``); ``run.json``'s ``perturbations`` keeps its
    canonical spelling (a resumed run hears what it heard before).
    """
    if resume is None and config is None:
        raise ValueError("run_tasks needs a config unless it resumes a run")
    if resume is not None and perturb is not None:
        raise RunError("a resumed task run hears what it heard before: --perturb is its own")
    spoken = "none"
    if perturb is not None:
        from voxbench.audio.perturb import parse_perturbations  # numpy tables: only when asked

        spoken = str(parse_perturbations(perturb))
    if resume is not None:
        run = TaskRunDirectory.open(resume)
        info = run.info()
        config, config_text, config_file, base_dir, tasks_dirs = config_of_run(info, resume)
    assert config is not None
    base_dir = base_dir or (config_file.parent if config_file else Path.cwd())
    if dataset_dirs:
        given = {task: str(Path(folder).resolve()) for task, folder in dataset_dirs.items()}
        config = config.model_copy(update={"dataset_dirs": {**config.dataset_dirs, **given}})
    plan = build_plan(config, base_dir=base_dir, tasks_dirs=tasks_dirs)
    # The judge's key is checked before anything is run or written.
    judge_client = None
    if config.judge is not None and any(j.text_judged for j in plan.jobs):
        from voxbench.tasks.judge import make_judge_client

        judge_client = make_judge_client(config.judge)
    if on_plan is not None:
        on_plan(plan)
    # A resumed run stays where it is (and finds the cache beside it).
    output_dir = run.path.parent if resume is not None else Path(config.output_dir).resolve()
    if resume is None:
        run = TaskRunDirectory.create(output_dir)
        info = {
            "id": run.path.name,
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "status": "running",
            "config_file": str(config_file) if config_file else None,
            "config_text": config_text,
            "base_dir": str(base_dir.resolve()),
            "tasks_dirs": [str(p) for p in tasks_dirs or []],
            "dataset_dirs": {t: str(p) for t, p in plan.local_copies.items()},
            "seed": config.seed,
            "perturbations": None if spoken == "none" else spoken,
            "models": [
                {
                    "name": j.model.name,
                    "model": j.model.model,
                    "api": j.api,
                    "endpoints": len(j.model.pool()),
                    "spec": ModelSpec.from_name(
                        j.model.model,
                        role="task model",
                        label=j.model.name,
                        endpoints=[e.base_url for e in j.model.pool()],
                    ).model_dump(mode="json"),
                }
                for j in {j.model.name: j for j in plan.jobs}.values()
            ],
            "tasks": plan.datasets(),
            "metric_setup": metric_setup(sorted({m for j in plan.jobs for m in j.metrics})),
            "versions": run_versions(),
        }
    with run.lock():
        run.merge_shards()  # rows a killed sharded run left in its shard files
        previous = run.rows()
        done = {(r["task"], r["model"], r["id"]) for r in previous if r.get("error") is None}
        info = {
            **info,
            "status": "running",
            "resumed": info.get("resumed", 0) + (resume is not None),
        }
        info.pop("no_cache", None)
        if not use_cache:
            info["no_cache"] = True
        run.write_info(info)
        # A local run's rows as records.jsonl holds them: those there before, then each one
        # appended (not read back and parsed again: ~40 ms for 6,000 rows).
        written: list[dict[str, Any]] | None = None
        try:
            if sharded is None:
                run.open_records()
                written = list(previous)

                def append(rows: list[dict[str, Any]]) -> None:
                    run.append(rows)
                    written.extend(rows)

                pacing = config.pacing()
                pacer = install_pacer(LocalPacer(pacing)) if pacing else current_pacer()
                try:
                    answered = answer_records(
                        plan, config, run, append, done, judge_client,
                        progress=progress, endpoint_factory=endpoint_factory,
                        use_cache=use_cache,
                    )  # fmt: skip
                finally:
                    install_pacer(pacer)
            else:
                # Made (WAL, table) before the shards open it at once: their first writes
                # could otherwise meet another's schema change and fail as locked.
                ResponseCache(output_dir / CACHE_FILE).close()
                with _following_shards(run, plan, progress):
                    answered = sharded(run)
        except BaseException:
            info["status"] = "interrupted"
            run.write_info(info)
            raise
        finally:
            run.close_records()
            run.merge_shards()
        rows = written if written is not None else run.rows()
        scores = compute_scores(plan, rows)
        info = {
            **info,
            "status": "finished",
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        info.update(answered.judges)
        if answered.inference:
            info["inference"] = answered.inference
        run.write_info(info)
        from voxbench.report.tasks import markdown_report  # the end's modules: after the requests
        from voxbench.store import index_finished_run

        report = markdown_report(
            TaskRunInfo.model_validate(info), TaskScores.model_validate(scores)
        )
        run.write_outputs(rows, scores, report)
    index_finished_run(run.path)
    return TaskRunResult(run, plan, scores, answered.requests, answered.cached, answered.inference)


@dataclass
class Answered:
    """What answering a run's records cost."""

    requests: int
    judges: dict[str, Any] = field(default_factory=dict)
    """``run.json``'s ``judge`` / ``audio_judge`` entries (model and counts)."""
    cached: int = 0
    """Records answered from the response cache."""
    inference: dict[str, Any] = field(default_factory=dict)
    """The inference phase (``InferencePhase.as_info``): ``run.json``'s ``inference``."""


def merged_inference(phases: list[dict[str, Any]]) -> dict[str, Any]:
    """The shards' inference phases as one run's: counts added, the first request's and the
    last answer's times, the largest shard's high-water mark (``max_in_flight``: per shard)."""
    phases = [p for p in phases if p]
    if not phases:
        return {}
    firsts = [p["first_request"] for p in phases if p.get("first_request")]
    lasts = [p["last_answer"] for p in phases if p.get("last_answer")]
    first, last = (min(firsts), max(lasts)) if firsts and lasts else (None, None)
    seconds = None
    if first and last:
        span = datetime.fromisoformat(last) - datetime.fromisoformat(first)
        seconds = round(span.total_seconds(), 3)
    requests = sum(p.get("requests", 0) for p in phases)
    return {
        "first_request": first,
        "last_answer": last,
        "seconds": seconds,
        **{k: sum(p.get(k, 0) for p in phases) for k in ("records", "requests", "retries")},
        "cached": sum(p.get("cached", 0) for p in phases),
        "max_in_flight": max(p.get("max_in_flight", 0) for p in phases),
        "requests_per_s": round(requests / seconds, 2) if seconds else None,
    }


def config_of_run(
    info: dict[str, Any], where: Path
) -> tuple[EvalConfig, str, Path | None, Path, list[Path]]:
    """The config a run was started with: parsed, its text, file, base and task folders."""
    config_text = info["config_text"]
    config_file = Path(info["config_file"]) if info.get("config_file") else None
    config = parse_config(config_text, file=config_file or f"{where}/run.json#config_text")
    if info.get("dataset_dirs"):  # the local copies the run read, --dataset-dir ones included
        config = config.model_copy(update={"dataset_dirs": info["dataset_dirs"]})
    return (
        config,
        config_text,
        config_file,
        Path(info["base_dir"]),
        [Path(p) for p in info.get("tasks_dirs", [])],
    )


def answer_records(
    plan: Plan,
    config: EvalConfig,
    run: TaskRunDirectory,
    append: Callable[[list[dict[str, Any]]], None],
    done: set[tuple[str, str, str]],
    judge_client: Any,
    *,
    progress: Progress | None = None,
    endpoint_factory: Any = None,
    use_cache: bool = True,
) -> Answered:
    """Answer and score every planned record not in ``done``, rows to ``append`` (the
    response cache and audio judgments beside the run directory; ``use_cache=False``: the
    cache is written, not read)."""
    output_dir = run.path.parent
    plan = perturbed_plan(plan, run.info().get("perturbations"), config.seed)
    cache = ResponseCache(output_dir / CACHE_FILE, read=use_cache)
    try:
        kwargs = {"endpoint_factory": endpoint_factory} if endpoint_factory else {}
        judge = None
        if judge_client is not None:
            assert config.judge is not None
            from voxbench.tasks.judge import TaskJudge

            judge = TaskJudge(config.judge, cache, judge_client)
        audio_judge = None
        if config.audio_judge is not None and any(j.audio_judged for j in plan.jobs):
            from voxbench.tasks.audio_judge_metric import AnswerJudge

            audio_judge = AnswerJudge(config.audio_judge, output_dir / AUDIO_JUDGMENTS_DIR)
        engine = Engine(
            plan,
            cache,
            append,
            done=done,
            progress=progress,
            judge=judge,
            audio_judge=audio_judge,
            run_dir=run.path,
            **kwargs,
        )
        asyncio.run(engine.run())
    finally:
        cache.close()
    judges: dict[str, Any] = {}
    if judge is not None:
        judges["judge"] = {"model": judge.config.model, **asdict(judge.stats)}
    if audio_judge is not None:
        judges["audio_judge"] = {"model": audio_judge.config.model, **asdict(audio_judge.stats)}
    inference = engine.phase.as_info(engine.requests, engine.cached, engine.answered)
    return Answered(engine.requests, judges, engine.cached, inference)


def find_run(name: str, output_dir: Path = Path("runs/tasks")) -> TaskRunDirectory:
    """A run by path, or by directory name under ``output_dir``."""
    for candidate in (Path(name), output_dir / name):
        if (candidate / RUN_JSON).is_file():
            return TaskRunDirectory.open(candidate)
    raise RunError(f"no task run {name!r} (a run directory, or a name under {output_dir})")


SHARD_POLL_S = 0.25
"""How often the driver reads what the shards have written (for the progress bars)."""


@contextlib.contextmanager
def _following_shards(
    run: TaskRunDirectory, plan: Plan, progress: Progress | None
) -> Iterator[None]:
    """Report each row the shards append, as ``progress`` would see it from a local run."""
    if progress is None:
        yield
        return
    # looked up by a row's task and model (None where a row lacks one: no job)
    jobs: dict[tuple[str | None, str | None], Job] = {job.key: job for job in plan.jobs}
    tail = run.shard_tail()
    stop = threading.Event()

    seen: set[tuple[Any, Any, Any]] = set()

    def report() -> None:
        for row in tail.new_rows():
            job = jobs.get((row.get("task"), row.get("model")))
            key = (row.get("task"), row.get("model"), row.get("id"))
            if job is not None and key not in seen:
                seen.add(key)
                progress(job, row)

    def follow() -> None:
        while not stop.wait(SHARD_POLL_S):
            report()

    thread = threading.Thread(target=follow, name="voxbench-shard-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        report()  # the rows written since the last poll
