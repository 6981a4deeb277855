"""``voxbench tasks import-config au-harness``: an AU-Harness run config → an ``eval.yaml``.

Every key of the AU-Harness config lands in one of three lists: *mapped* (and where to),
*not mapped* (and why), and *ignored by AU-Harness itself* — the keys its code validated or
documented but never applied (facts from reading its source), so a user sees what their old
runs really did. Task and metric names go through ``importers.au_harness_names`` and are kept only
when the live registry (and ``METRICS``) has them. ``${VAR}`` references are kept as written
(``$VAR`` becomes ``${VAR}``); a literal token is never written: it becomes a
``${AU_HARNESS_TOKEN_<NAME>}`` reference the user sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import read_yaml, validate
from voxbench.importers import au_harness_names as names
from voxbench.metrics.registry import METRICS
from voxbench.providers.registry import Role, find_provider
from voxbench.tasks import au_harness as au_tasks
from voxbench.tasks.config import EvalConfig
from voxbench.tasks.spec import TaskRegistry, TaskSpec

_ENV_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}")
PLACEHOLDER_TOKENS = frozenset({"empty", "none", "null", "dummy", "not-needed", "no-key", "-"})
"""``auth_token`` values that stand for no key (vLLM's examples say ``EMPTY``): written as
they are, not turned into an environment variable to set."""
_BARE_ENV = re.compile(r"\$(?!\{)([A-Za-z_][A-Za-z0-9_]*)")
_JINJA = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

AU_DEFAULT_CHUNK_SECONDS = 30
AU_DEFAULT_JUDGE_MODEL = "gpt-4o-mini"


@dataclass
class ImportReport:
    """What became of each key: mapped (→ where), not mapped (why), ignored by AU-Harness."""

    mapped: list[tuple[str, str]] = field(default_factory=list)
    unmapped: list[tuple[str, str]] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)
    """Keys AU-Harness itself never applied (dead in its code), with what it did instead."""
    notes: list[str] = field(default_factory=list)
    """Where the converted config behaves differently from the AU-Harness run."""

    def lines(self) -> list[str]:
        """The report, grouped, one line per key."""
        out = [f"Mapped ({len(self.mapped)}):"]
        out += [f"  {key} → {where}" for key, where in self.mapped]
        out.append(f"Not mapped ({len(self.unmapped)}):")
        out += [f"  {key}: {why}" for key, why in self.unmapped]
        out.append(f"Ignored by AU-Harness itself ({len(self.ignored)}):")
        out += [f"  {key}: {what}" for key, what in self.ignored]
        out.append(f"Behaves differently in voxbench ({len(self.notes)}):")
        out += [f"  {note}" for note in self.notes]
        return out


@dataclass
class ImportedConfig:
    """The converted config (an ``EvalConfig`` mapping) and the report."""

    config: dict[str, Any]
    report: ImportReport

    @property
    def runnable(self) -> bool:
        """At least one model and one task were mapped (else the file needs editing first)."""
        return bool(self.config.get("models")) and bool(self.config.get("tasks"))

    def yaml_text(self, source: Path) -> str:
        """The eval.yaml: a header, the report as comments, the config."""
        head = [
            f"# Converted from the AU-Harness config {source.name} by",
            "# `voxbench tasks import-config au-harness`. What became of each key:",
            *(f"#   {line}" for line in self.report.lines()),
        ]
        body = yaml.safe_dump(self.config, sort_keys=False, allow_unicode=True, width=100)
        return "\n".join(head) + "\n" + body


def import_au_harness(path: Path, *, tasks_dirs: list[Path] | None = None) -> ImportedConfig:
    """Convert the AU-Harness config in ``path``; ``ConfigError`` only when it cannot be read."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError("an AU-Harness config must be a mapping of keys", file=path)
    return _Converter(data, TaskRegistry(tasks_dirs or [])).convert()


def is_task_file(path: Path) -> bool:
    """Whether ``path`` holds an AU-Harness *task* (``task_name``), not a run config."""
    data = read_yaml(path)
    return au_tasks.is_au_harness(data) and bool(data.get(au_tasks.TASK_KEY))


@dataclass
class ImportedTask:
    """An AU-Harness task file as a voxbench task file (``TaskSpec`` mapping) and its notes."""

    name: str
    spec: dict[str, Any]
    notes: list[str]

    @property
    def file_name(self) -> str:
        """What the file must be called: a voxbench task is named by its file's stem."""
        return f"{self.name}.yaml"

    def report_lines(self) -> list[str]:
        """What differs from the AU-Harness task, one line each."""
        return [
            f"Task {self.name} → {self.file_name} (put it in a folder named in tasks_dirs)",
            f"Behaves differently in voxbench ({len(self.notes)}):",
            *(f"  {note}" for note in self.notes),
        ]

    def yaml_text(self, source: Path) -> str:
        """The task file: a header, the notes as comments, the spec."""
        head = [
            f"# Converted from the AU-Harness task {source.name} by",
            "# `voxbench tasks import-config au-harness`.",
            *(f"#   {line}" for line in self.report_lines()),
        ]
        body = yaml.safe_dump(self.spec, sort_keys=False, allow_unicode=True, width=100)
        return "\n".join(head) + "\n" + body


def import_au_harness_task(path: Path) -> ImportedTask:
    """Convert a user's own AU-Harness task file (its ``extends`` resolved from its folder);
    ``ConfigError`` with the reason when it has no voxbench equivalent."""
    found = au_tasks.convert(path, path.parent)
    if found is None:
        raise ConfigError("an AU-Harness base file, not a task (no task_name)", file=path)
    if found.spec is None:
        raise ConfigError(
            f"the AU-Harness task {found.name!r} has no voxbench equivalent: {found.reason}",
            file=path,
        )
    validate(TaskSpec, found.spec, file=path, what="converted AU-Harness task")
    return ImportedTask(found.name, found.spec, found.notes)


def env_ref(text: str) -> str:
    """``$VAR`` (which AU-Harness also substituted) written as ``${VAR}``."""
    return _BARE_ENV.sub(r"${\1}", text)


def token_var(owner: str) -> str:
    """The variable a literal token of ``owner`` (a model name, ``judge``) is asked from."""
    return "AU_HARNESS_TOKEN_" + re.sub(r"[^A-Za-z0-9]+", "_", owner).strip("_").upper()


class _Converter:
    def __init__(self, data: dict[str, Any], registry: TaskRegistry) -> None:
        self.data = data
        self.registry = registry
        self.report = ImportReport()
        self.out: dict[str, Any] = {}
        self.name_of: dict[str, str] = {}
        """AU-Harness model ``name`` → the voxbench model name."""
        self.names_of_model: dict[str, list[str]] = {}
        """AU-Harness model ``model`` string → the voxbench model names serving it."""

    # -- helpers ----------------------------------------------------------------------------

    def mapped(self, key: str, where: str) -> None:
        self.report.mapped.append((key, where))

    def unmapped(self, key: str, why: str) -> None:
        self.report.unmapped.append((key, why))

    def ignored(self, key: str, what: str) -> None:
        self.report.ignored.append((key, what))

    def note(self, text: str) -> None:
        if text not in self.report.notes:
            self.report.notes.append(text)

    def secret(self, value: Any, owner: str, key: str) -> str | None:
        """An ``api_key`` value: a ``${VAR}`` reference, never the literal token."""
        if value is None or value == "":
            return None
        text = env_ref(str(value)).strip()
        if text.lower().startswith("bearer "):
            text = text[7:].strip()  # AU-Harness stripped a leading "Bearer "
        if _ENV_REF.fullmatch(text):
            return text
        if text.lower() in PLACEHOLDER_TOKENS:
            self.note(
                f"{key}: {text!r} is a placeholder, not a secret (a local server takes any "
                "token): written as is, no environment variable needed"
            )
            return text
        var = token_var(owner)
        self.note(
            f"{key} held a literal token: it is not written; the config reads ${{{var}}} — "
            f"set {var} in the environment (or .env)"
        )
        return f"${{{var}}}"

    def resolve_task(self, name: str, key: str) -> list[str]:
        """Voxbench task or group names for an AU-Harness task or group, or [] (reported)."""
        known_tasks = set(self.registry.names)
        known_groups = set(self.registry.groups)
        if name in names.NO_EQUIVALENT:
            self.unmapped(f"{key} {name}", names.NO_EQUIVALENT[name])
            return []
        noted = names.task_candidates_noted(name)
        candidates = tuple(c for c, _ in noted)
        # The task of that very name first (an AU-Harness tasks folder given: the user's own).
        for candidate, caveat in ((name, ""), *noted):
            if candidate in known_tasks:
                if caveat:
                    self.note(f"{name} → {candidate}: {caveat}")
                return [candidate]
        groups = [g for g in names.GROUPS.get(name, ()) if g in known_groups]
        if groups:
            self.note(
                f"group {name} → {', '.join(groups)}: voxbench's group holds its own tasks, "
                "not AU-Harness's folder"
            )
            return groups
        if name in known_groups:
            return [name]
        if name in names.SUBGROUPS:
            members = [t for t in sorted(known_tasks) if names.SUBGROUPS[name].fullmatch(t)]
            if members:
                self.note(
                    f"group {name} → the {len(members)} tasks of voxbench's registry it "
                    f"stands for ({', '.join(members)})"
                )
                return members
        looked = ", ".join(dict.fromkeys([*candidates, *names.GROUPS.get(name, ())]))
        why = "no equivalent task or group in the registry"
        self.unmapped(f"{key} {name}", f"{why} (looked for: {looked})" if looked else why)
        return []

    def resolve_metric(self, name: str, key: str) -> list[str] | None:
        """Voxbench metrics for an AU-Harness metric ([] when none; reported)."""
        mapping = names.METRICS.get(name)
        if mapping is None:
            if name in METRICS:
                return [name]
            self.unmapped(f"{key} {name}", "not an AU-Harness metric")
            return []
        present = [m for m in mapping.names if m in METRICS]
        missing = [m for m in mapping.names if m not in METRICS]
        if missing:
            self.unmapped(
                f"{key} {name}",
                f"→ {', '.join(missing)}, which this voxbench's metrics do not include",
            )
        if present and mapping.note:
            self.note(f"{name} → {', '.join(present)}: {mapping.note}")
        return present

    def model_names(self, value: str, key: str, *, au_matches: str) -> list[str]:
        """Voxbench model names an override's ``model`` meant; AU matched on ``au_matches``."""
        if au_matches == "model" and value in self.names_of_model:
            return self.names_of_model[value]
        if au_matches == "name" and value in self.name_of:
            return [self.name_of[value]]
        if value in self.name_of:
            return [self.name_of[value]]
        if value in self.names_of_model:
            return self.names_of_model[value]
        self.unmapped(key, f"names no model of this config ({value!r})")
        return []

    # -- the conversion ---------------------------------------------------------------------

    def convert(self) -> ImportedConfig:
        handlers = {
            "models": self.models,
            "task_metric": self.task_metric,
            "filter": self.filter_singular,
            "filters": self.filters_plural,
            "aggregate": self.aggregate,
            "judge_settings": self.judge,
            "generation_params_override": self.generation_overrides,
            "prompt_overrides": self.prompt_overrides,
            "temperature_overrides": self.temperature_overrides,
            "logging": self.logging,
        }
        self.data, placeholders = _fill_placeholders(self.data)
        if placeholders:
            self.note(
                "placeholders became environment references: "
                + ", ".join(f"{p} → ${{{v}}}" for p, v in placeholders.items())
                + " — set them (or edit the file) before running"
            )
        self.models(self.data.get("models"))
        for key, value in self.data.items():
            if key == "models":
                continue
            if key in handlers:
                handlers[key](value)
            elif key == "dataset_metric":
                self.dataset_metric(value)
            elif key == "judge_properties":
                self.judge_properties(value)
            else:
                self.unmapped(key, "not a key AU-Harness reads")
        self.check_judge()
        if "task_metric" not in self.data and "dataset_metric" not in self.data:
            self.unmapped("task_metric", "missing: AU-Harness requires it; no task was written")
        if any(_ENV_REF.search(str(v)) for v in _strings(self.data)) or any(
            _BARE_ENV.search(str(v)) for v in _strings(self.data)
        ):
            self.note(
                "${VAR} references are kept; an unset variable is an error naming the key "
                "(AU-Harness sent the literal text)"
            )
        config = {k: self.out[k] for k in _ORDER if k in self.out and self.out[k] != {}}
        imported = ImportedConfig(config, self.report)
        if imported.runnable:
            # The schema itself (no ${VAR} substitution): a failure here is the importer's bug.
            validate(EvalConfig, config, file="(imported config)", what="eval config")
        else:
            self.note(
                "no model or no task could be mapped: add them before `voxbench tasks run` "
                "accepts the file"
            )
        return imported

    def check_judge(self) -> None:
        """A judge metric with no judge written: say so (``tasks run`` would stop on it)."""
        if "judge" in self.out:
            return
        judged: set[str] = set()
        for item in self.out.get("tasks", []):
            if isinstance(item, dict):
                pairs = [(item["name"], m) for m in item["metrics"]]
            else:
                pairs = []
                for task in self.registry.expand(item, field="tasks"):
                    try:
                        pairs += [(task, m) for m in self.registry.get(task).spec.metrics]
                    except ConfigError:  # a broken task file is `tasks run`'s to report
                        continue
            judged |= {t for t, m in pairs if METRICS[m].judged and not METRICS[m].hears_audio}
        if judged:
            self.unmapped(
                "judge_settings",
                f"missing, and {', '.join(sorted(judged))} use a judge metric: add a "
                "judge: {model: provider/model} block before running",
            )

    def models(self, value: Any) -> None:
        if not isinstance(value, list) or not value:
            self.unmapped("models", "missing or not a list: no model was written")
            self.out["models"] = []
            return
        converted: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
        for i, raw in enumerate(value):
            key = f"models[{i}]"
            if not isinstance(raw, dict):
                self.unmapped(key, "not a mapping")
                continue
            model = self.one_model(raw, key)
            if model is not None:
                converted.append((i, raw, model))
        self.out["models"] = self.pool_shards(converted)

    def one_model(self, raw: dict[str, Any], key: str) -> dict[str, Any] | None:
        name, au_model, kind = raw.get("name"), raw.get("model"), raw.get("inference_type")
        if not name or not au_model:
            self.unmapped(key, "needs name and model (AU-Harness requires both)")
            return None
        name, au_model = str(name), str(au_model)
        if _ENV_REF.fullmatch(name):
            # A name is written as is (it names files): the placeholder's own name stands in.
            name = name[2:-1].split(":-")[0].lower()
            self.note(f"{key}.name: a placeholder; the model is called {name}")
        out: dict[str, Any] = {"name": name}
        self.mapped(f"{key}.name", f"{key}.name")
        if kind == "vllm":
            out["model"] = f"vllm/{au_model}"
            out["api"] = "chat"
            where = "vllm/… (OpenAI-compatible chat)"
        elif kind == "openai":
            out["model"] = f"azure-openai/{au_model}"
            out["api"] = "chat"
            where = "azure-openai/… chat (AU-Harness's openai type is Azure OpenAI)"
        elif kind == "gemini":
            provider = find_provider("gemini")
            if provider is None or Role.AUDIO_COMPLETION not in provider.roles:
                self.unmapped(key, "inference_type gemini: no gemini provider is registered")
                return None
            out["model"] = "gemini/" + au_model.removeprefix("google/")
            out["api"] = "chat"
            where = "gemini/… (the Gemini API, key GEMINI_API_KEY or GOOGLE_API_KEY)"
        elif kind == "transcription":
            out["model"] = f"openai/{au_model}"
            out["api"] = "transcription"
            where = "openai/… with api: transcription (/audio/transcriptions)"
        else:
            self.unmapped(
                f"{key}.inference_type",
                f"{kind!r} is not one of openai, vllm, gemini, transcription: model skipped",
            )
            return None
        self.mapped(f"{key}.model + inference_type", f"{key}.model {out['model']} ({where})")
        for field_name, raw_value in raw.items():
            try:
                self.model_field(field_name, raw_value, raw, out, key, kind)
            except BadValue as exc:
                self.unmapped(f"{key}.{field_name}", str(exc))
        self.name_of[name] = name
        return out

    def model_field(
        self, field_name: str, value: Any, raw: dict[str, Any], out: dict[str, Any], key: str,
        kind: str,
    ) -> None:  # fmt: skip
        path = f"{key}.{field_name}"
        if field_name in ("name", "model", "inference_type"):
            return
        if field_name == "url":
            if kind == "gemini":
                self.unmapped(path, "gemini is reached through the Gemini API, not a URL")
            elif value:
                out["base_url"] = env_ref(str(value))
                self.mapped(path, f"{key}.base_url")
        elif field_name == "auth_token":
            if kind == "gemini":
                self.ignored(path, "unused for gemini: AU-Harness authenticated with Google ADC")
                return
            secret = self.secret(value, str(raw["name"]), path)
            if secret is not None:
                out["api_key"] = secret
                self.mapped(path, f"{key}.api_key ({secret})")
        elif field_name == "batch_size":
            out["max_concurrency"] = _whole(value, minimum=1)
            self.mapped(path, f"{key}.max_concurrency (requests in flight)")
        elif field_name == "timeout":
            out["timeout_s"] = _number(value, positive=True)
            self.mapped(path, f"{key}.timeout_s")
        elif field_name == "retry_attempts":
            out["retries"] = max(0, _whole(value, minimum=1) - 1)
            self.mapped(
                path, f"{key}.retries: {out['retries']} (AU-Harness counted the first try too)"
            )
        elif field_name == "chunk_size":
            same = (
                " (the same as voxbench's usual 30 s)" if value == AU_DEFAULT_CHUNK_SECONDS else ""
            )
            self.unmapped(
                path,
                f"{value} s per chunk for every task of this model: voxbench sets "
                f"long_audio.max_seconds per task in the task file, not per model or in "
                f"eval.yaml overrides{same}",
            )
        elif field_name == "api_version":
            self.unmapped(path, "set AZURE_OPENAI_API_VERSION in the environment instead")
        elif field_name in ("location", "project_id"):
            self.unmapped(
                path, "Vertex AI: voxbench's gemini provider calls the Gemini API with an API key"
            )
        elif field_name == "reasoning_effort":
            self.unmapped(path, "voxbench's generation params are temperature and max_tokens")
        elif field_name == "delay":
            self.ignored(path, "documented as a pause before each call; AU-Harness never used it")
        elif field_name == "postprocessor":
            self.ignored(path, "read by AU-Harness, never used")
        else:
            self.unmapped(path, "not a model key AU-Harness reads")

    def pool_shards(
        self, converted: list[tuple[int, dict[str, Any], dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        """AU-Harness shards a dataset over models sharing a ``model`` string: one pool here."""
        by_model: dict[tuple[str, str], list[tuple[int, dict[str, Any], dict[str, Any]]]] = {}
        for item in converted:
            _, raw, out = item
            by_model.setdefault((out["model"], out["api"]), []).append(item)
        result: list[dict[str, Any]] = []
        taken = {out["name"] for _, _, out in converted}
        for items in by_model.values():
            au_model = str(items[0][1]["model"])
            if len(items) == 1 or not all(out.get("base_url") for _, _, out in items):
                for _, _, out in items:
                    result.append(out)
                    self.names_of_model.setdefault(au_model, []).append(out["name"])
                continue
            pooled_name = au_model if au_model not in taken else f"{au_model}-pool"
            pooled = {k: v for k, v in items[0][2].items() if k not in _PER_ENDPOINT}
            pooled["name"] = pooled_name
            pooled["endpoints"] = [
                {k: out[k] for k in ("base_url", "api_key", "max_concurrency") if k in out}
                for _, _, out in items
            ]
            for k in ("timeout_s", "retries"):
                values = {out.get(k) for _, _, out in items}
                if len(values) > 1:
                    self.note(
                        f"{pooled_name}: its endpoints had different {k}; the first's is used"
                    )
            members = [str(raw["name"]) for _, raw, _ in items]
            for member in members:
                self.name_of[member] = pooled_name
            self.names_of_model[au_model] = [pooled_name]
            indices = ", ".join(f"models[{i}]" for i, _, _ in items)
            self.mapped(
                indices,
                f"one model {pooled_name} with {len(items)} endpoints sharing one work queue "
                f"(AU-Harness sharded the records over them by batch_size, keyed by model)",
            )
            result.append(pooled)
        return result

    def task_metric(self, value: Any, name: str = "task_metric") -> None:
        if not isinstance(value, list):
            self.unmapped(name, "not a list of [task, metric] pairs: no task written")
            return
        wanted: dict[str, set[str] | None] = {}
        for i, pair in enumerate(value):
            key = f"{name}[{i}]"
            pair = _string_pair(pair)
            if not (isinstance(pair, list | tuple) and len(pair) == 2):
                self.unmapped(key, "not a [task, metric] pair")
                continue
            task, metric = str(pair[0]), str(pair[1])
            targets = self.resolve_task(task, key)
            if not targets:
                continue
            if metric == "all":
                metrics = None
            else:
                found = self.resolve_metric(metric, key)
                if not found:
                    continue
                metrics = set(found)
            for target in targets:
                if target in wanted and (wanted[target] is None or metrics is None):
                    wanted[target] = None
                elif target in wanted:
                    wanted[target] = {*wanted[target], *metrics}  # type: ignore[misc]
                else:
                    wanted[target] = None if metrics is None else set(metrics)
            shown = "its own metrics" if metrics is None else ", ".join(sorted(metrics))
            self.mapped(f"{key} [{task}, {metric}]", f"tasks: {', '.join(targets)} ({shown})")
        tasks: list[Any] = []
        for target, metrics in wanted.items():
            if metrics is None:
                tasks.append(target)
            else:
                tasks.append({"name": target, "metrics": sorted(metrics)})
        self.out["tasks"] = tasks

    def dataset_metric(self, value: Any) -> None:
        """The README's name for ``task_metric`` (and its ``"[task, metric]"`` strings)."""
        self.ignored(
            "dataset_metric",
            "the name AU-Harness's README used; its code requires task_metric and never read "
            "dataset_metric"
            + ("" if "task_metric" in self.data else " (a run with only it stopped there)"),
        )
        if "task_metric" in self.data:
            self.unmapped("dataset_metric", "task_metric is given too: it is the one converted")
            return
        self.note("dataset_metric: converted as task_metric, which it was meant to be")
        self.task_metric(value, "dataset_metric")

    def judge_properties(self, value: Any) -> None:
        """The judge block's name before AU-Harness renamed it ``judge_settings``."""
        self.ignored(
            "judge_properties",
            "the judge block's old name (AU-Harness renamed it judge_settings); its code no "
            "longer reads it",
        )
        if "judge_settings" in self.data:
            self.unmapped(
                "judge_properties", "judge_settings is given too: it is the one converted"
            )
            return
        self.note("judge_properties: converted as judge_settings, its current name")
        self.judge(value, "judge_properties")

    def filter_singular(self, value: Any) -> None:
        self.guarded("filter", value, self._filter_singular)

    def filters_plural(self, value: Any) -> None:
        self.guarded("filters", value, self._filters_plural)

    def guarded(self, name: str, value: Any, handler: Any) -> None:
        """Run ``handler`` key by key: a bad value is reported and the key skipped."""
        if not isinstance(value, dict):
            self.unmapped(name, "not a mapping")
            return
        for key, item in value.items():
            try:
                handler(key, item)
            except BadValue as exc:
                self.unmapped(f"{name}.{key}", str(exc))

    def _filter_singular(self, key: str, item: Any) -> None:
        path = f"filter.{key}"
        filters = self.out.setdefault("filters", {})
        if key == "num_samples":
            filters["num_samples"] = _whole(item, minimum=1)
            self.mapped(path, "filters.num_samples")
            self.note(
                "num_samples: AU-Harness took the FIRST N records; voxbench draws a seeded "
                "random sample of N (seed: 0), so the records differ"
            )
        elif key in ("length_filter", "length"):
            self.ignored(
                path,
                "never applied: AU-Harness read filter.length and accepted only a tuple, "
                "which YAML cannot give — every clip was kept",
            )
            self.length(item, path, filters)
        else:
            self.unmapped(path, "not a filter AU-Harness reads")

    def _filters_plural(self, key: str, item: Any) -> None:
        path = f"filters.{key}"
        filters = self.out.setdefault("filters", {})
        found = self.data.get("filter")
        live = found if isinstance(found, dict) else {}
        if key == "num_samples":
            self.ignored(
                path,
                "validated only: AU-Harness's preprocessors read filter.num_samples "
                "(singular), so every record ran",
            )
            if "num_samples" in live:
                self.unmapped(path, "filter.num_samples is the one converted")
            else:
                filters["num_samples"] = _whole(item, minimum=1)
                self.mapped(path, "filters.num_samples (flagged: now applied)")
        elif key == "length_filter":
            self.ignored(path, "validated only: never applied, every clip was kept")
            if "length_filter" in live or "length" in live:
                self.unmapped(path, "filter.length_filter is the one converted")
            else:
                self.length(item, path, filters)
        elif key == "language":
            if not isinstance(item, str) or not item:
                raise BadValue(f"{item!r} is not a language code")
            filters["language"] = [item]
            self.mapped(path, "filters.language")
            self.note(
                "filters.language: AU-Harness kept the tasks whose language matched and "
                "crashed on any other; voxbench keeps the records in that language"
            )
        elif key == "accented":
            self.unmapped(
                path,
                "AU-Harness chose tasks by their accented flag (and crashed on any other); "
                "voxbench tasks have no such flag: list the accented tasks by name",
            )
        else:
            self.unmapped(path, "not a filter AU-Harness reads")

    def length(self, item: Any, path: str, filters: dict[str, Any]) -> None:
        if not (isinstance(item, list | tuple) and len(item) == 2):
            self.unmapped(path, "not a [min_s, max_s] pair")
            return
        low, high = _number(item[0]), _number(item[1], positive=True)
        if low > 0:
            filters["min_duration_s"] = low
        filters["max_duration_s"] = high
        self.mapped(
            path,
            "filters.min_duration_s/max_duration_s (flagged: AU-Harness never applied it, "
            "voxbench does)",
        )

    def aggregate(self, value: Any) -> None:
        if not isinstance(value, list):
            self.unmapped("aggregate", "not a list of [metric, [tasks]] pairs")
            return
        out: list[dict[str, Any]] = []
        for i, item in enumerate(value):
            key = f"aggregate[{i}]"
            if not (isinstance(item, list | tuple) and len(item) == 2):
                self.unmapped(key, "not a [metric, [tasks]] pair")
                continue
            metric, tasks = str(item[0]), item[1]
            tasks = [tasks] if isinstance(tasks, str) else list(tasks or [])
            targets = list(
                dict.fromkeys(t for task in tasks for t in self.resolve_task(str(task), key))
            )
            metrics = self.resolve_metric(metric, key) or []
            if not targets or not metrics:
                self.unmapped(key, "nothing left to aggregate after mapping")
                continue
            for m in metrics:
                name = f"{m} - {', '.join(str(t) for t in tasks)}"
                out.append({"name": name, "metric": m, "tasks": targets})
            self.mapped(key, "aggregate (an equal-weight mean over the tasks, as AU-Harness did)")
        if out:
            self.out["aggregate"] = out
        raw_models = [m for m in self.data.get("models") or [] if isinstance(m, dict)]
        strings = [m.get("model") for m in raw_models]
        hidden = [
            str(m.get("name"))
            for m in raw_models
            if m.get("name") != m.get("model") and strings.count(m.get("model")) == 1
        ]
        if hidden:
            self.ignored(
                "aggregate",
                "AU-Harness looked aggregates up by each model's `model` string while scores "
                f"were keyed by `name`: for {', '.join(hidden)} its runs never showed them",
            )

    def judge(self, value: Any, block: str = "judge_settings") -> None:
        if not isinstance(value, dict):
            self.unmapped(block, "not a mapping")
            return
        judge: dict[str, Any] = {}
        kind = value.get("judge_type")
        provider = {"openai": "azure-openai", "vllm": "vllm"}.get(str(kind))
        model = env_ref(str(value.get("judge_model") or AU_DEFAULT_JUDGE_MODEL))
        if provider is None and _ENV_REF.fullmatch(str(kind)):
            provider = "vllm"
            self.note(
                f"{block}.judge_type {kind}: a placeholder; the judge is written as vllm/… "
                "(an OpenAI-compatible server at judge_api_endpoint): write azure-openai/… "
                "instead for AU-Harness's openai type"
            )
        if provider is None:
            self.unmapped(
                f"{block}.judge_type",
                f"{kind!r}: AU-Harness takes openai (Azure OpenAI) or vllm: no judge written",
            )
            return
        judge["model"] = f"{provider}/{model}"
        self.mapped(f"{block}.judge_type + judge_model", f"judge.model {judge['model']}")
        for key, item in value.items():
            try:
                self.judge_setting(key, item, judge, block)
            except BadValue as exc:
                self.unmapped(f"{block}.{key}", str(exc))
        self.out["judge"] = judge

    def judge_setting(
        self, key: str, item: Any, judge: dict[str, Any], block: str = "judge_settings"
    ) -> None:
        path = f"{block}.{key}"
        if key in ("judge_type", "judge_model"):
            return
        if key == "judge_api_endpoint":
            judge["base_url"] = env_ref(str(item))
            self.mapped(path, "judge.base_url")
        elif key == "judge_api_key":
            secret = self.secret(item, "judge", path)
            if secret is not None:
                judge["api_key"] = secret
                self.mapped(path, f"judge.api_key ({secret})")
        elif key == "judge_concurrency":
            judge["max_concurrency"] = _whole(item, minimum=1)
            self.mapped(path, "judge.max_concurrency")
        elif key == "judge_temperature":
            self.unmapped(path, "voxbench's judge always asks at temperature 0")
        elif key == "judge_api_version":
            self.unmapped(path, "set AZURE_OPENAI_API_VERSION in the environment instead")
        elif key == "judge_prompt_model_override":
            self.ignored(path, "never applied: AU-Harness's judge read prompt_override")
        else:
            self.unmapped(path, "not a judge setting AU-Harness reads")

    def overrides_for(
        self, entry: dict[str, Any], key: str, *, au_matches: str
    ) -> list[dict[str, Any]] | None:
        """The (task, model) scopes of one override entry (None: nothing left)."""
        tasks: list[str | None] = [None]
        models: list[str | None] = [None]
        if entry.get("task"):
            tasks = list(self.resolve_task(str(entry["task"]), f"{key}.task"))
            if not tasks:
                return None
        if entry.get("model"):
            models = list(
                self.model_names(str(entry["model"]), f"{key}.model", au_matches=au_matches)
            )
            if not models:
                return None
        scopes = []
        for task in tasks:
            for model in models:
                scope: dict[str, Any] = {}
                if task is not None:
                    scope["task"] = task
                if model is not None:
                    scope["model"] = model
                scopes.append(scope)
        return scopes

    def add_overrides(self, scopes: list[dict[str, Any]], block: dict[str, Any]) -> None:
        self.out.setdefault("overrides", []).extend({**s, **block} for s in scopes)

    def generation_overrides(self, value: Any) -> None:
        if not isinstance(value, list):
            self.unmapped("generation_params_override", "not a list")
            return
        for i, entry in enumerate(value):
            key = f"generation_params_override[{i}]"
            params = entry.get("generation_params") if isinstance(entry, dict) else None
            if not isinstance(params, dict):
                self.unmapped(key, "no generation_params mapping")
                continue
            generation = self.generation(params, f"{key}.generation_params")
            if not generation:
                continue
            scopes = self.overrides_for(entry, key, au_matches="model")
            if scopes is None:
                continue
            self.add_overrides(scopes, {"generation": generation})
            self.mapped(key, "overrides[].generation")
            self.note(
                "generation_params_override: AU-Harness REPLACED the task's whole generation "
                "params with the best-matching override (a missing temperature became 0.7, "
                "max_completion_tokens 4096) and matched models by `model`, not `name`; "
                "voxbench merges every matching override field by field over the task's own"
            )

    def generation(self, params: dict[str, Any], key: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, item in params.items():
            try:
                if name == "temperature":
                    out["temperature"] = _number(item)
                elif name in ("max_completion_tokens", "max_tokens", "max_gen_tokens"):
                    out["max_tokens"] = _whole(item, minimum=1)
                    if name == "max_gen_tokens":
                        self.note(
                            f"{key}.max_gen_tokens: the README's name, which AU-Harness's "
                            "OpenAI call dropped (it sent max_completion_tokens); voxbench "
                            "applies it as max_tokens"
                        )
                else:
                    self.unmapped(f"{key}.{name}", "voxbench sends temperature and max_tokens only")
            except BadValue as exc:
                self.unmapped(f"{key}.{name}", str(exc))
        return out

    def prompt_overrides(self, value: Any) -> None:
        if not isinstance(value, dict):
            self.unmapped("prompt_overrides", "not a mapping")
            return
        self.ignored(
            "prompt_overrides",
            "never applied: AU-Harness validated user_prompt/system_prompt but looked up "
            "user_prompts/system_prompts (and matched `model` where it validated `name`) — "
            "your old runs used each task's own prompt",
        )
        for kind, entries in value.items():
            role = {"user_prompt": "user", "system_prompt": "system"}.get(kind)
            if role is None or not isinstance(entries, list):
                self.unmapped(f"prompt_overrides.{kind}", "not user_prompt or system_prompt list")
                continue
            for i, entry in enumerate(entries):
                key = f"prompt_overrides.{kind}[{i}]"
                if not isinstance(entry, dict) or not entry.get("prompt"):
                    self.unmapped(key, "no prompt")
                    continue
                text, placeholders = _JINJA.subn(r"{\1}", str(entry["prompt"]))
                if placeholders:
                    self.note(
                        f"{key}: Jinja {{{{ x }}}} placeholders became voxbench's {{x}} "
                        "(a record column of that name)"
                    )
                scopes = self.overrides_for(entry, key, au_matches="name")
                if scopes is None:
                    continue
                self.add_overrides(scopes, {"prompt": {role: text}})
                self.mapped(
                    key,
                    f"overrides[].prompt.{role} (flagged: AU-Harness never applied it — "
                    "voxbench will)",
                )
                if role == "user":
                    self.note(
                        "a user prompt override replaces the task's prompt in voxbench "
                        "(AU-Harness meant it as the prefix of the dataset's instruction)"
                    )

    def temperature_overrides(self, value: Any) -> None:
        self.ignored(
            "temperature_overrides",
            "validated only, never used by AU-Harness: your old runs kept the tasks' temperatures",
        )
        if not isinstance(value, list):
            self.unmapped("temperature_overrides", "not a list")
            return
        for i, entry in enumerate(value):
            key = f"temperature_overrides[{i}]"
            if not isinstance(entry, dict) or "temperature" not in entry:
                self.unmapped(key, "no temperature")
                continue
            try:
                temperature = _number(entry["temperature"])
            except BadValue as exc:
                self.unmapped(f"{key}.temperature", str(exc))
                continue
            scopes = self.overrides_for(entry, key, au_matches="name")
            if scopes is None:
                continue
            self.add_overrides(scopes, {"generation": {"temperature": temperature}})
            self.mapped(
                key,
                "overrides[].generation.temperature (flagged: AU-Harness never applied it — "
                "voxbench will)",
            )

    def logging(self, value: Any) -> None:
        keys = list(value) if isinstance(value, dict) else []
        for key in keys or [""]:
            self.unmapped(
                f"logging.{key}".rstrip("."),
                "voxbench writes each run to output_dir (runs/tasks/<timestamp>_<id>/: "
                "run.json, records.jsonl, scores.json, report.md); no log file to name",
            )


class BadValue(ValueError):
    """A key's value AU-Harness would take but voxbench cannot (reported, the key skipped)."""


_PLACEHOLDER = re.compile(r"<\s*([A-Za-z][A-Za-z0-9_ -]*?)\s*>")


def _fill_placeholders(
    data: Any, found: dict[str, str] | None = None
) -> tuple[Any, dict[str, str]]:
    """Whole-value ``<MODEL_NAME>`` placeholders (AU-Harness's shipped run configs) as
    ``${MODEL_NAME}`` references, and which were found."""
    found = {} if found is None else found
    if isinstance(data, dict):
        return {k: _fill_placeholders(v, found)[0] for k, v in data.items()}, found
    if isinstance(data, list):
        return [_fill_placeholders(v, found)[0] for v in data], found
    if isinstance(data, str):
        match = _PLACEHOLDER.fullmatch(data.strip())
        if match:
            var = re.sub(r"[^A-Za-z0-9]+", "_", match.group(1)).strip("_").upper()
            found[data.strip()] = var
            return f"${{{var}}}", found
    return data, found


def _string_pair(pair: Any) -> Any:
    """``"[task, metric]"`` (the string form AU-Harness's README shows) as a pair."""
    if isinstance(pair, str):
        inner = pair.strip()
        if inner.startswith("[") and inner.endswith("]"):
            parts = [p.strip().strip("'\"") for p in inner[1:-1].split(",")]
            if len(parts) == 2 and all(parts):
                return parts
    return pair


def _whole(value: Any, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise BadValue(f"{value!r} is not a whole number")
    if value < minimum:
        raise BadValue(f"{value!r} is below {minimum}")
    return int(value)


def _number(value: Any, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadValue(f"{value!r} is not a number")
    if value < 0 or (positive and value == 0):
        raise BadValue(f"{value!r} must be {'above' if positive else 'at least'} 0")
    return float(value)


_ORDER = ("models", "tasks", "filters", "aggregate", "overrides", "judge", "tasks_dirs")
_PER_ENDPOINT = frozenset({"base_url", "api_key", "max_concurrency"})


def _strings(data: Any) -> list[str]:
    if isinstance(data, dict):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return [data] if isinstance(data, str) else []
