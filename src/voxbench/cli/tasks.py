"""``voxbench tasks list|run|show|import-config``: audio-task evaluation (models × tasks × metrics)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from voxbench.cli.console import make_console
from voxbench.cli.tables import Column, Listing, print_listings
from voxbench.core.errors import ConfigError, RunIncompleteError
from voxbench.core.results import TaskScores
from voxbench.core.taskrun import SCORES

app = typer.Typer(
    help="Evaluate audio models on audio tasks (ASR, translation, spoken QA, ...).",
    no_args_is_help=True,
)


@app.command("list")
def list_command(
    tasks_dir: list[Path] = typer.Option([], "--tasks-dir", help="Extra task registry folders."),
    group: str | None = typer.Option(
        None,
        "--group",
        "--family",
        help="Only the tasks of this group: a family (folder), builtin (the offline suite), all.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the listings as JSON on stdout (tasks, metrics, models)."
    ),
) -> None:
    """Task families, tasks, their datasets, sizes, metrics and licences; the metrics; the models."""
    from voxbench.cli.tables import Column, Listing, print_listings
    from voxbench.metrics.registry import METRICS
    from voxbench.providers.registry import Role, providers_for
    from voxbench.tasks.datasets.suite import BUILTIN_LICENCE, builtin_size
    from voxbench.tasks.spec import TaskRegistry

    registry = TaskRegistry(tasks_dir)
    names = registry.expand(group, field="--group") if group else registry.names
    tasks = Listing(
        "tasks",
        "Tasks (groups: their folders, builtin, and all)",
        [
            Column("task", name=True),
            Column("family", name=True),
            Column("dataset", name=True),
            Column("size"),
            Column("metrics"),
            Column("licence"),
        ],
    )
    for name in sorted(names, key=lambda n: (registry.get(n).family, n)):
        entry = registry.get(name)
        spec = entry.spec
        tasks.add(
            task=name,
            family=entry.family,
            dataset=spec.dataset_label,
            size=builtin_size(spec.dataset.builtin) if spec.dataset.builtin else spec.size,
            metrics=list(spec.metrics),
            licence=spec.licence or (BUILTIN_LICENCE if spec.dataset.builtin else ""),
            source_url=spec.source_url,
            answer=spec.answer,
            description=spec.description,
            **({"notes": list(entry.notes)} if entry.notes else {}),
        )
    metrics = Listing(
        "metrics",
        "Metrics",
        [Column("metric", name=True), Column("better"), Column("what")],
    )
    for metric in METRICS.values():
        metrics.add(
            metric=metric.name,
            better="higher" if metric.higher_is_better else "lower",
            what=metric.description,
        )
    models = Listing(
        "models",
        "Models (model: provider/name)",
        [Column("provider", name=True), Column("api"), Column("description")],
    )
    models.add(
        provider="local/oracle",
        api=["oracle"],
        description="answers each record's reference (a pipeline check: 100%)",
    )
    for provider in providers_for(Role.AUDIO_COMPLETION, Role.ASR):
        apis = [
            a
            for a, r in (("chat", Role.AUDIO_COMPLETION), ("transcription", Role.ASR))
            if r in provider.roles
        ]
        models.add(provider=provider.name, api=apis, description=provider.description)
    print_listings([tasks, metrics, models], as_json=as_json, console=make_console())
    if registry.not_loaded:
        # Another harness's tasks with no equivalent here: on stderr, so --json stays JSON.
        errors = make_console(stderr=True)
        errors.print(
            f"Not loaded ({len(registry.not_loaded)} AU-Harness tasks with no voxbench "
            "equivalent):",
            highlight=False,
        )
        for name, found in sorted(registry.not_loaded.items()):
            errors.print(
                f"  {escape(name)}: {escape(found.reason)}", highlight=False, soft_wrap=True
            )


@app.command("run")
def run_command(
    config: Path | None = typer.Argument(
        None,
        help="eval.yaml; without one, the built-in offline suite with local/oracle and local/whisper-tiny.en.",
    ),
    resume: Path | None = typer.Option(
        None,
        "--resume",
        help="Continue this run (a run directory or its name): nothing done is redone.",
    ),
    tasks_dir: list[Path] = typer.Option([], "--tasks-dir", help="Extra task registry folders."),
    dataset_dir: list[str] = typer.Option(
        [],
        "--dataset-dir",
        metavar="TASK=DIR",
        help="Read Hub task TASK from DIR, a local copy (save_to_disk or Hub parquet files); repeatable.",
    ),
    executor: str = typer.Option(
        "local",
        "--executor",
        help="local (this process) or ray (the records in shards, one Ray task each).",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: auto, ray://host:10001, or none for a local Ray.",
    ),
    no_cache: bool = typer.Option(
        False,
        "--no-cache",
        help="Ask every request again instead of reusing the cached answers (they are replaced).",
    ),
    perturb: str | None = typer.Option(
        None,
        "--perturb",
        metavar="SPEC",
        help="The models hear every clip perturbed, e.g. noise:pink@10dB+codec:mulaw+loss:5% "
        "(README: Perturbations); the run is its own condition.",
    ),
) -> None:
    """Run models × tasks × metrics; write runs/tasks/<timestamp>_<id>/ and print the table."""
    from voxbench.tasks.config import DEFAULT_CONFIG_TEXT, load_config, parse_config
    from voxbench.tasks.run import find_run, run_tasks

    dataset_dirs = _dataset_dirs(dataset_dir)
    if resume is not None and dataset_dirs:
        raise ConfigError(
            "--dataset-dir cannot change a resumed run: it reads the copies it started with",
            field="--dataset-dir",
        )
    sharded = None
    if executor != "local" or ray_address:  # a local run needs none of scale's imports (~1 s)
        from voxbench.scale.executors import make_executor

        chosen = make_executor(executor, ray_address=ray_address)
        if chosen.name == "ray":
            from voxbench.scale.ray_executor import RayExecutor
            from voxbench.scale.task_shards import ray_shards

            assert isinstance(chosen, RayExecutor)
            sharded = ray_shards(chosen)
    if resume is not None:
        resume = find_run(str(resume)).path
        parsed, text = None, ""
    elif config is not None:
        parsed, text = load_config(config)
    else:
        text = DEFAULT_CONFIG_TEXT
        parsed = parse_config(text, file="(built-in suite)")
    console = make_console()
    progress = _Progress(make_console(stderr=True))  # stderr: stdout carries results alone
    started = time.perf_counter()
    try:
        result = run_tasks(
            parsed,
            text,
            config_file=config,
            tasks_dirs=list(tasks_dir),
            dataset_dirs=dataset_dirs,
            resume=resume,
            progress=progress.update,
            on_plan=progress.start,
            sharded=sharded,
            use_cache=not no_cache,
            perturb=perturb,
        )
    finally:
        progress.stop()
    seconds = time.perf_counter() - started
    run_info = result.run.run_info()
    _print_table(
        TaskScores.model_validate(result.scores),
        [m.name for m in run_info.models],
        console,
        run_info.perturbations,
    )
    from_cache = f", {result.cached} answers from the cache" if result.cached else ""
    console.print(
        f"{result.requests} model requests{from_cache} in {seconds:.1f} s"
        f" → {escape(str(result.run.path))}",
        highlight=False,
        soft_wrap=True,  # the path stays whole, to copy
    )
    unscored = unscored_cells(TaskScores.model_validate(result.scores))
    if unscored:
        raise RunIncompleteError(
            f"{len(unscored)} task × model × metric cell(s) have no scored record: "
            + "; ".join(unscored)
            + " (`voxbench tasks run --resume` retries the records that failed)"
        )


def unscored_cells(scores: TaskScores) -> list[str]:
    """The cells (task · model · metric) that had records but scored none of them — every
    record failed or was undecided — each with why. Such a run exits 4, not 0: a table of
    dashes is not a result."""
    out = []
    for task, models in scores.tasks.items():
        for model, cell in models.items():
            if not cell.records:
                continue
            for name, metric in cell.metrics.items():
                if metric.n:
                    continue
                why = [f"{cell.errors} failed"] if cell.errors else []
                if metric.undecided:
                    why.append(f"{metric.undecided} undecided")
                if cell.missing:
                    why.append(f"{cell.missing} missing")
                reason = ", ".join(why) or "no record scored"
                out.append(f"{task} · {model} · {name} ({reason} of {cell.records})")
    return out


def _dataset_dirs(given: list[str]) -> dict[str, Path]:
    """``--dataset-dir TASK=DIR`` options as task → folder (a later one for a task wins)."""
    out: dict[str, Path] = {}
    for item in given:
        task, sep, folder = item.partition("=")
        if not sep or not task.strip() or not folder.strip():
            raise ConfigError(
                f"--dataset-dir {item!r} is not TASK=DIR",
                field="--dataset-dir",
                expected="a task name, '=', and a folder, e.g. librispeech_test_clean=./ls_clean",
            )
        out[task.strip()] = Path(folder.strip()).expanduser()
    return out


class _Progress:
    """One bar per (task, model): records done of total, errors, records per second."""

    def __init__(self, out: Console) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[errors]} errors · {task.fields[rate]}/s"),
            console=out,
            transient=True,
        )
        self.ids: dict[tuple[str, str], Any] = {}
        self.counts: dict[tuple[str, str], list[int]] = {}
        self.t0 = time.perf_counter()

    def start(self, plan: Any) -> None:
        for job in plan.jobs:
            self.ids[job.key] = self.bars.add_task(
                f"{job.task.name} · {job.model.name}", total=len(job.records), errors=0, rate="0"
            )
            self.counts[job.key] = [0, 0]
        self.bars.start()

    def update(self, job: Any, row: dict[str, Any]) -> None:
        count = self.counts[job.key]
        count[0] += 1
        count[1] += row["error"] is not None
        rate = count[0] / max(1e-9, time.perf_counter() - self.t0)
        self.bars.update(self.ids[job.key], advance=1, errors=count[1], rate=f"{rate:.1f}")

    def stop(self) -> None:
        self.bars.stop()


def _print_table(
    scores: TaskScores, models: list[str], console: Console, perturbed: str | None = None
) -> None:
    """The scores as a table in a terminal wide enough, one block per row in a narrower one,
    aligned lines when piped: task and metric names are never cut. A perturbed run's title
    names what the models heard."""
    from voxbench.report.tasks import table_rows

    columns = [Column("task", name=True), Column("metric", name=True)]
    columns += [Column(f"model_{i}", header=model) for i, model in enumerate(models)]
    title = "Scores (0–100, 95% CI, n scored)"
    if perturbed:
        title += f" heard through {perturbed}"
    listing = Listing("scores", title, columns)
    for row in table_rows(scores, models):
        listing.add(**{c.key: text for c, text in zip(columns, row, strict=True)})
    print_listings([listing], console=console)


def _failed(row: dict[str, Any]) -> bool:
    if row.get("error"):
        return True
    for stats in row.get("scores", {}).values():
        if stats.get("correct") == 0 or stats.get("errors", 0) > 0:
            return True
    return False


@app.command("show")
def show_command(
    run: str = typer.Argument(..., help="A task run directory (or its name under runs/tasks)."),
    failures: bool = typer.Option(
        False, "--failures", help="Only errors and records scored wrong."
    ),
    task: str | None = typer.Option(None, "--task", help="Only this task."),
    model: str | None = typer.Option(None, "--model", help="Only this model."),
    html: bool = typer.Option(
        False, "--html", help="Also write report.html: the table and the worst records."
    ),
    embed_audio: bool = typer.Option(
        False, "--embed-audio", help="With --html: put the clips into the page."
    ),
) -> None:
    """Per-record table: audio, reference, prediction, scores (errors shown as errors)."""
    from voxbench.core.taskrun import latest_rows
    from voxbench.tasks.run import find_run

    found = find_run(run)
    info = found.info()
    rows = list(latest_rows(found.rows()).values())
    rows = [
        r
        for r in rows
        if (task is None or r["task"] == task)
        and (model is None or r["model"] == model)
        and (not failures or _failed(r))
    ]
    console = make_console()
    console.print(
        f"[b]{escape(info['id'])}[/b] · {info['status']} · started {info['started']} · "
        f"{len(rows)} records shown",
        soft_wrap=True,
    )
    if info.get("perturbations"):
        console.print(
            f"perturbed: every clip heard through {escape(info['perturbations'])}",
            highlight=False,
            soft_wrap=True,
        )
    inference = found.run_info().inference
    if inference is not None:
        console.print(_inference_text(inference), highlight=False, soft_wrap=True)
    columns = [Column(name, name=True) for name in ("task", "model", "id", "audio")]
    columns += [Column("reference"), Column("prediction"), Column("scores")]
    records = Listing("records", "Records", columns)
    for r in rows:
        error = r["error"]
        records.add(
            task=r["task"],
            model=r["model"],
            id=r["id"],
            audio=Path(r["audio"]).name,
            reference=r["reference"],
            prediction=(
                f"error ({error['category']}): {error['message']}"
                if error
                else r["prediction"] or "(empty)"
            ),
            scores=_score_text(r["scores"]),
        )
    # A table where it fits, a block per record in a narrow terminal, a line each when piped.
    print_listings([records], console=console)
    if (found.path / SCORES).is_file():
        console.print()
        run_info = found.run_info()
        _print_table(
            found.score_table(), [m.name for m in run_info.models], console, run_info.perturbations
        )
    if html:
        from voxbench.report.tasks_html import write_tasks_html

        page = write_tasks_html(found.path, embed_audio=embed_audio)
        console.print(f"report: {escape(str(page))}", soft_wrap=True)


@app.command("import-config")
def import_config_command(
    source: str = typer.Argument(..., help="The harness the config comes from: au-harness."),
    config: Path = typer.Argument(..., help="Its run configuration (YAML)."),
    output: Path | None = typer.Option(
        None, "--out", help="Write the eval.yaml here (default: print it on stdout)."
    ),
    tasks_dir: list[Path] = typer.Option(
        [], "--tasks-dir", help="Extra task registry folders to map task names onto."
    ),
) -> None:
    """Convert another harness's run config into an eval.yaml; print what became of each key."""
    import os

    from voxbench.core.errors import ConfigError
    from voxbench.importers.au_harness import import_au_harness, is_task_file

    if source != "au-harness":
        raise ConfigError(
            f"unknown config source {source!r}", field="SOURCE", expected="au-harness"
        )
    if is_task_file(config):
        _import_task_file(config, output)
        return
    imported = import_au_harness(config, tasks_dirs=list(tasks_dir))
    if tasks_dir:
        base = (output or Path("eval.yaml")).resolve().parent
        imported.config["tasks_dirs"] = [
            os.path.relpath(d.resolve(), base).replace(os.sep, "/") for d in tasks_dir
        ]
    text = imported.yaml_text(config)
    report = make_console(stderr=output is None)
    for line in imported.report.lines():
        report.print(escape(line), highlight=False, soft_wrap=True)
    if output is None:
        typer.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    ready = "" if imported.runnable else " (no task or model mapped: edit it before running)"
    report.print(f"wrote {escape(str(output))}{ready}", highlight=False, soft_wrap=True)


def _import_task_file(source: Path, output: Path | None) -> None:
    """An AU-Harness task file → a voxbench task file (``--out`` a file or a folder)."""
    from voxbench.importers.au_harness import import_au_harness_task

    imported = import_au_harness_task(source)
    report = make_console(stderr=output is None)
    for line in imported.report_lines():
        report.print(escape(line), highlight=False, soft_wrap=True)
    text = imported.yaml_text(source)
    if output is None:
        typer.echo(text, nl=False)
        return
    target = output / imported.file_name if output.is_dir() else output
    target.write_text(text, encoding="utf-8")
    report.print(f"wrote {escape(str(target))}", highlight=False, soft_wrap=True)
    if target.stem != imported.name:
        report.print(
            f"note: the task is called {escape(target.stem)} there (a task is named by its "
            f"file); name the file {escape(imported.file_name)} to keep {escape(imported.name)}",
            highlight=False,
            soft_wrap=True,
        )


def _inference_text(phase: Any) -> str:
    """The last pass's inference phase in one line (``run.json``'s ``inference``)."""
    text = (
        f"inference: {phase.records} records, {phase.requests} requests "
        f"({phase.retries} retries, {phase.cached} from the cache), "
        f"at most {phase.max_in_flight} in flight"
    )
    if phase.first_request and phase.last_answer:
        rate = f", {phase.requests_per_s:g}/s" if phase.requests_per_s else ""
        text += (
            f"; first request {phase.first_request}, last answer {phase.last_answer}"
            f" ({phase.seconds:g} s{rate})"
        )
    return text


def _score_text(scores: dict[str, Any]) -> str:
    from voxbench.report.tasks import record_verdicts

    marks = {"right": "✓", "wrong": "✗", "undecided": "?"}
    return " ".join(
        name if verdict is None else f"{name}={marks.get(verdict, verdict)}"
        for name, verdict in record_verdicts(scores)
    )
