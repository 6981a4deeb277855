"""From an ``EvalConfig`` to the work: which records of which task each model answers, and how.

Everything the config says is resolved here, once, into ``Job``s the engine runs: task and
group names expanded, metrics validated, filters merged (a task's own over the top level),
records selected, generation params and prompts merged (task < model < overrides, field by
field), and prompt templates rendered per record.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from voxbench.core.errors import ConfigError
from voxbench.metrics.answers import LETTERS
from voxbench.metrics.registry import METRICS, ScoringContext, check_prerequisites, get_metric
from voxbench.metrics.sql import schema_text
from voxbench.tasks.config import EvalConfig, Filters, ModelConfig, TaskSelection
from voxbench.tasks.datasets.hf import local_copy_format
from voxbench.tasks.datasets.readers import Record, dataset_fingerprint, select_records
from voxbench.tasks.engine.models import Api, Prompted, model_api
from voxbench.tasks.spec import Generation, Prompt, TaskEntry, TaskRegistry, TaskSpec
from voxbench.tasks.sql_database import check_sql_task, database_for

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class Job:
    """One model answering one task's selected records."""

    task: TaskEntry
    model: ModelConfig
    api: Api
    metrics: list[str]
    records: list[Record]
    generation: Generation
    prompt: Prompt
    tools: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        """(task name, model name)."""
        return (self.task.name, self.model.name)

    @property
    def spec(self) -> TaskSpec:
        """The task's spec."""
        return self.task.spec

    def prompted(self, record: Record) -> Prompted:
        """The prompt, instructions and generation params of one record."""
        return Prompted(
            prompt=self._render(self.prompt.user or "", record),
            system=self._render(self.prompt.system or "", record),
            generation=self.generation,
            reference=record.reference,
            language=record.language,
            voice=self.model.output_audio.voice if self.model.output_audio else None,
        )

    def chunk_prompts(self, record: Record, count: int) -> list[str] | None:
        """The user prompt of each of the ``count`` chunks of the record's clip
        (``long_audio.chunk_prompt``); None when the task has none or the clip is whole."""
        given = self.spec.long_audio.chunk_prompt
        if given is None or count < 2:
            return None
        templates = [given] * count if isinstance(given, str) else given
        prompt = self._render(self.prompt.user or "", record)
        return [
            self._render(
                templates[min(i, len(templates) - 1)],
                record,
                {"index": str(i + 1), "count": str(count), "prompt": prompt},
            )
            for i in range(count)
        ]

    def _render(self, template: str, record: Record, extra: dict[str, str] | None = None) -> str:
        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if extra and name in extra:
                return extra[name]
            if name == "choices":
                return _choices_text(self._choices(record))
            if name == "tools":
                return json.dumps(self.record_tools(record), ensure_ascii=False)
            if name == "labels":
                return ", ".join(self.spec.labels)
            if name == "schema" and self.spec.sql is not None:
                return schema_text(database_for(self.spec.sql, record, self.task.file))
            if name in record.columns:
                found = record.columns[name]
                return found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)
            return match.group(0)  # not a placeholder we know: literal braces stay

        # One pass: text coming from a record is never expanded again.
        return _PLACEHOLDER.sub(value, template)

    def _choices(self, record: Record) -> list[str]:
        column = self.spec.columns.choices
        found = record.columns.get(column) if column else None
        return [str(c) for c in found] if isinstance(found, list) else []

    @property
    def judged_metrics(self) -> list[str]:
        """The metrics a judge scores (the LLM judge, or the audio judge for those that hear
        the spoken answer)."""
        return [m for m in self.metrics if METRICS[m].judged]

    @property
    def text_judged(self) -> bool:
        """Whether the LLM (text) judge grades this job's replies."""
        return any(not METRICS[m].hears_audio for m in self.judged_metrics)

    @property
    def audio_judged(self) -> bool:
        """Whether the audio judge hears this job's spoken answers."""
        return any(METRICS[m].hears_audio and METRICS[m].hear is None for m in self.judged_metrics)

    def judge_material(self, record: Record, prediction: str) -> dict[str, Any]:
        """What the judge is shown about one reply (as data, never as instructions)."""
        asked = self.prompted(record)
        material: dict[str, Any] = {
            "task": self.spec.description or self.task.name,
            "instruction": asked.prompt,
        }
        if asked.system:
            material["context"] = asked.system
        question = record.columns.get(self.spec.columns.question or "")
        if question is not None and str(question).strip():
            material["question"] = question if isinstance(question, str) else str(question)
        choices = self._choices(record)
        if choices:
            material["choices"] = _choices_text(choices)
        return {**material, "reference": record.reference, "prediction": prediction}

    def record_tools(self, record: Record) -> list[dict[str, Any]]:
        """The tools offered with ``record``: its ``columns.tools`` column, else the task's."""
        if self.spec.columns.tools is None:
            return self.tools
        return record_tools(record, self.spec.columns.tools, self.task.file)

    @property
    def every_turn(self) -> bool:
        """Whether every turn of a multi-turn record is scored (``turns.score: every``)."""
        return self.spec.turns is not None and self.spec.turns.score == "every"

    def turn_contexts(
        self, record: Record, references: list[str | None]
    ) -> list[ScoringContext | None]:
        """What the metrics need to score each turn's reply: its reference reply (the last
        turn: the record's reference); None for a turn without one."""
        base = self.context(record)
        last = len(references) - 1
        return [
            replace(base, reference=record.reference)
            if i == last
            else (replace(base, reference=ref) if ref is not None else None)
            for i, ref in enumerate(references)
        ]

    def context(self, record: Record) -> ScoringContext:
        """What the metrics need to score a reply to ``record``."""
        target = record.columns.get(self.spec.columns.target_language or "", None)
        tools = self.record_tools(record)
        return ScoringContext(
            reference=record.reference,
            language=record.language,
            target_language=str(target or self.spec.target_language or record.language),
            answer=self.spec.answer,
            labels=tuple(self.spec.labels),
            choices=tuple(self._choices(record)),
            tool_schemas={t["name"]: t.get("parameters", {}) for t in tools},
            label_map=dict(self.spec.label_map),
            columns=dict(record.columns),
            **self._sql_context(record),
        )

    def _sql_context(self, record: Record) -> dict[str, Any]:
        sql = self.spec.sql
        if sql is None:
            return {}
        return {
            "database": database_for(sql, record, self.task.file),
            "query_timeout_s": sql.timeout_s,
        }


def record_tools(record: Record, column: str, file: Path) -> list[dict[str, Any]]:
    """A record's tools column (a JSON string or a list of function schemas) as a list."""
    value = record.columns.get(column)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"record {record.id}: column {column!r} is not JSON ({exc.msg})",
                file=file,
                field="columns.tools",
            ) from exc
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) for t in value
    ):
        raise ConfigError(
            f"record {record.id}: column {column!r} holds no list of tools",
            file=file,
            field="columns.tools",
            expected='a JSON list of {"name": ..., "parameters": {...}} objects',
        )
    return value


def _choices_text(choices: list[str]) -> str:
    return "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices))


def _merged(model: type[Generation] | type[Prompt], *layers: Any) -> Any:
    """Later layers' set fields over earlier ones."""
    data: dict[str, Any] = {}
    for layer in layers:
        if layer is not None:
            data.update({k: v for k, v in layer.model_dump().items() if v is not None})
    return model(**data)


def _filters(top: Filters, own: Filters | None) -> Filters:
    if own is None:
        return top
    return Filters(**{**top.model_dump(), **own.model_dump(exclude_unset=True)})


@dataclass
class Plan:
    """Every job of a run, and what resolved them."""

    config: EvalConfig
    registry: TaskRegistry
    jobs: list[Job]
    groups: dict[str, list[str]]
    """Every task or group name the config mentions → its tasks (for aggregates)."""
    local_copies: dict[str, Path] = field(default_factory=dict)
    """Hub task → the local copy of its dataset read instead (``dataset_dirs``)."""

    def datasets(self) -> dict[str, dict[str, Any]]:
        """Per task: its dataset reference, content fingerprint and record count."""
        out: dict[str, dict[str, Any]] = {}
        for job in self.jobs:
            if job.task.name in out:
                continue
            spec = job.spec
            local = self.local_copies.get(job.task.name)
            out[job.task.name] = {
                "family": job.task.family,
                "description": spec.description,
                "file": str(job.task.file),
                "dataset": spec.dataset.model_dump(exclude_none=True),
                "fingerprint": dataset_fingerprint(spec, local),
                "records": len(job.records),
                "metrics": job.metrics,
                "licence": spec.licence,
                "size": spec.size,
                "source_url": spec.source_url,
            }
            if local is not None:
                out[job.task.name]["local_copy"] = {
                    "path": str(local),
                    "format": local_copy_format(local, spec.dataset.config),
                }
        return out


def build_plan(
    config: EvalConfig, *, base_dir: Path | None = None, tasks_dirs: list[Path] | None = None
) -> Plan:
    """Resolve ``config`` (paths relative to ``base_dir``) into jobs."""
    base_dir = base_dir or Path.cwd()
    folders = [base_dir / d for d in config.tasks_dirs] + list(tasks_dirs or [])
    registry = TaskRegistry(folders)
    chosen: dict[str, TaskSelection] = {}  # a later mention of a task wins
    for i, item in enumerate(config.tasks):
        selection = TaskSelection(name=item) if isinstance(item, str) else item
        for name in registry.expand(selection.name, field=f"tasks[{i}]"):
            chosen[name] = selection
    groups: dict[str, list[str]] = {
        item if isinstance(item, str) else item.name: [] for item in config.tasks
    }
    for name in groups:
        groups[name] = registry.expand(name, field="tasks")
    for agg_index, agg in enumerate(config.aggregate):
        names = agg.tasks if isinstance(agg.tasks, list) else list(agg.tasks)
        for name in names:
            groups.setdefault(name, registry.expand(name, field=f"aggregate[{agg_index}].tasks"))
        get_metric(agg.metric, field=f"aggregate[{agg_index}].metric")
        if isinstance(agg.tasks, dict):
            _one_weight_per_task(agg.tasks, groups, field=f"aggregate[{agg_index}].tasks")
    for o_index, override in enumerate(config.overrides):
        if override.task is not None:
            registry.expand(override.task, field=f"overrides[{o_index}].task")
        if override.model is not None and override.model not in {m.name for m in config.models}:
            raise ConfigError(
                f"override names unknown model {override.model!r}",
                field=f"overrides[{o_index}].model",
                expected="a models[].name: " + ", ".join(m.name for m in config.models),
            )
    local_copies = _local_copies(config, registry, base_dir)
    apis = {m.name: model_api(m, field=f"models[{i}].model") for i, m in enumerate(config.models)}
    for i, m in enumerate(config.models):
        if m.output_audio is not None and apis[m.name] != "chat":
            raise ConfigError(
                f"{m.model} answers in text ({apis[m.name]}): it cannot answer aloud",
                field=f"models[{i}].output_audio",
                expected="a chat model (api: chat) that speaks, e.g. openai/gpt-4o-audio-preview",
            )
    if config.judge is not None:
        from voxbench.tasks.judge import check_judge  # the judges' modules: only when used

        check_judge(config.judge)
    jobs: list[Job] = []
    for name, selection in chosen.items():
        entry = registry.get(name)
        metrics = selection.metrics or entry.spec.metrics
        for metric in metrics:
            found = get_metric(metric, field=f"tasks: {name}.metrics", file=entry.file)
            if found.hears_audio and found.hear is None:
                from voxbench.tasks.audio_judge_metric import check_audio_judge

                check_audio_judge(config.audio_judge, entry.spec.audio_judge, task=name,
                                  file=entry.file)  # fmt: skip
            elif found.judged and not found.hears_audio and config.judge is None:
                raise ConfigError(
                    f"task {name} uses the judge metric {metric}, and the config has no judge",
                    field="judge",
                    expected="a judge: {model: provider/model} block",
                )
        if entry.spec.turns is not None:
            _check_multi_turn(config, name)
            if entry.spec.turns.score == "every":
                judged = [m for m in metrics if METRICS[m].judged]
                if judged:
                    raise ConfigError(
                        f"task {name} scores every turn: {', '.join(judged)} grades only a "
                        "record's last reply",
                        field="turns.score",
                        file=entry.file,
                        expected="score: last, or metrics computed from the text",
                    )
        records = select_records(
            entry.spec,
            _filters(config.filters, selection.filters),
            seed=config.seed,
            task=name,
            local_copy=local_copies.get(name),
            file=entry.file,
        )
        _check_metric_columns(entry, metrics, records)
        if entry.spec.columns.tools is not None:  # every record's tools readable, before asking
            for record in records:
                record_tools(record, entry.spec.columns.tools, entry.file)
        if "sql_execution_match" in metrics:
            check_sql_task(entry.spec, entry.file, records)
        tools = _tools(entry)
        for model in config.models:
            matching = [
                o
                for o in config.overrides
                if (o.model is None or o.model == model.name)
                and (o.task is None or name in registry.expand(o.task, field="overrides"))
            ]
            generation = _merged(
                Generation,
                entry.spec.generation,
                model.generation,
                *(o.generation for o in matching),
            )
            prompt = _merged(Prompt, entry.spec.prompt, *(o.prompt for o in matching))
            jobs.append(
                Job(
                    entry,
                    model,
                    apis[model.name],
                    list(metrics),
                    records,
                    generation,
                    prompt,
                    tools,
                )
            )
    check_prerequisites([m for job in jobs for m in job.metrics])
    return Plan(config, registry, jobs, groups, local_copies)


def _local_copies(config: EvalConfig, registry: TaskRegistry, base_dir: Path) -> dict[str, Path]:
    """``dataset_dirs`` checked: each names a Hub task and an existing folder."""
    out: dict[str, Path] = {}
    for task, folder in config.dataset_dirs.items():
        where = f"dataset_dirs.{task}"
        if task not in registry.names:
            raise ConfigError(
                f"dataset_dirs names unknown task {task!r}",
                field=where,
                expected="a task name: " + ", ".join(registry.names),
            )
        entry = registry.get(task)
        if entry.spec.dataset.hub is None:
            raise ConfigError(
                f"task {task} does not read a Hub dataset: a local copy is for Hub tasks",
                field=where,
                expected="a task whose dataset is hub: org/name",
            )
        path = (base_dir / Path(folder).expanduser()).resolve()
        if not path.is_dir():
            raise ConfigError(
                f"local copy {path} of {entry.spec.dataset.hub} (task {task}) does not exist",
                field=where,
                expected="a folder holding the dataset saved with save_to_disk or its parquet files",
            )
        local_copy_format(path, entry.spec.dataset.config)  # an unusable folder fails now
        out[task] = path
    return out


def _check_metric_columns(entry: TaskEntry, metrics: list[str], records: list[Record]) -> None:
    """Every column a metric reads is in every selected record (an error naming it, not a
    crash in the middle of scoring)."""
    for metric in metrics:
        for column in METRICS[metric].columns:
            missing = next((r for r in records if column not in r.columns), None)
            if missing is not None:
                raise ConfigError(
                    f"metric {metric} reads the column {column!r}, and record {missing.id} of "
                    f"task {entry.name} has none (it has: {', '.join(map(str, missing.columns))})",
                    file=entry.file,
                    field="metrics",
                )


def _check_multi_turn(config: EvalConfig, task: str) -> None:
    """No model of a run with the multi-turn ``task`` is asked to answer it aloud."""
    for i, model in enumerate(config.models):
        if model.output_audio is not None:
            raise ConfigError(
                f"task {task} is multi-turn: {model.model} cannot answer it aloud",
                field=f"models[{i}].output_audio",
                expected="no output_audio for a run with multi-turn tasks",
            )


def _one_weight_per_task(
    weights: dict[str, float], groups: dict[str, list[str]], *, field: str
) -> None:
    """``ConfigError`` when two names of an aggregate give one task different weights."""
    given: dict[str, tuple[str, float]] = {}
    for name, weight in weights.items():
        if weight < 0:
            raise ConfigError(f"{name} has a negative weight ({weight:g})", field=field)
        for task in groups[name]:
            earlier = given.get(task)
            if earlier is not None and earlier[1] != weight:
                raise ConfigError(
                    f"task {task} gets weight {earlier[1]:g} from {earlier[0]} and "
                    f"{weight:g} from {name}",
                    field=field,
                    expected="one weight per task: name the task itself, or groups that do "
                    "not overlap",
                )
            given[task] = (name, weight)


def _tools(entry: TaskEntry) -> list[dict[str, Any]]:
    if entry.spec.tools is None:
        return []
    from voxbench.benchmarks.loader import load_benchmark

    benchmark = load_benchmark(entry.spec.tools.benchmark)
    return [t.model_dump() for t in benchmark.tools]
