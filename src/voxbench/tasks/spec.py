"""A task: which dataset, how to ask the model about each record, how to score the answer.

Tasks are YAML files in a registry (``tasks/registry/<family>/<task>.yaml`` plus user folders);
the task's name is the file's stem and its family the folder. ``extends:`` names a file
(relative to the task) or another task whose keys are merged underneath (mappings deep-merged,
the child wins). Files whose name starts with ``_`` are bases only, never tasks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from voxbench.core.errors import ConfigError
from voxbench.core.names import safe_name
from voxbench.core.yamlfile import read_yaml, validate
from voxbench.tasks import au_harness

REGISTRY_DIR = Path(__file__).parent / "registry"
"""The built-in tasks."""

BUILTIN_GROUP = "builtin"
"""The group of tasks whose dataset is built in: what runs offline with no config."""

AnswerKind = Literal["text", "label", "choice", "function_call"]


class Strict(BaseModel):
    """A schema block: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ReferencesFrom(Strict):
    """References joined from another config of the same Hub dataset (FLEURS translation:
    the French transcription of the utterance the English audio speaks)."""

    config: str
    """The config holding the references (same dataset, split and revision)."""
    column: str
    """Its column that becomes the record's reference."""
    key: str
    """The column both configs share that pairs a record with its reference (a record
    without a partner there is left out). (Not ``on``: YAML reads ``on`` as true.)"""


class DatasetRef(Strict):
    """Where a task's records come from: a built-in suite dataset, a local folder, or the Hub."""

    builtin: str | None = None
    """A dataset of the built-in offline suite (``tasks/data/<name>``), synthesized on first use."""
    path: str | None = None
    """A folder holding the audio files and the manifest (relative to the task file)."""
    manifest: str = "manifest.jsonl"
    """The manifest in that folder: ``.jsonl`` (one object a line) or ``.csv`` (a header row)."""
    format: Literal["manifest", "hf_disk", "parquet"] = "manifest"
    """``manifest``: audio files + the manifest; ``hf_disk``: a ``save_to_disk`` folder;
    ``parquet``: the parquet files under the folder (Hugging Face layout). The last two need
    the optional ``datasets`` package."""
    hub: str | None = None
    """A Hugging Face Hub dataset (``org/name``), loaded with ``datasets.load_dataset`` and
    kept in the Hugging Face cache: online the first time, offline after."""
    config: str | None = None
    """The Hub dataset's configuration (subset), e.g. a language."""
    revision: str | None = None
    """The Hub dataset's revision: a commit, tag or branch (pin it for reproducible runs)."""
    split: str | None = None
    """For ``hf_disk`` holding several splits, and for ``hub``, the one to read; for
    ``parquet``, the files whose name starts with it (``test`` → ``test-00000-of-00001.parquet``)."""
    references_from: ReferencesFrom | None = None
    """For a hub dataset: take each record's reference from another config of it."""

    @model_validator(mode="after")
    def _one_source(self) -> DatasetRef:
        if sum(x is not None for x in (self.builtin, self.path, self.hub)) != 1:
            raise ValueError("give exactly one of builtin, path or hub")
        if self.hub is None and (self.config is not None or self.revision is not None):
            raise ValueError("config and revision are for a hub dataset")
        if self.hub is not None and self.format != "manifest":
            raise ValueError("format is for a dataset under path, not a hub dataset")
        if self.hub is None and self.references_from is not None:
            raise ValueError("references_from is for a hub dataset")
        return self


class Columns(Strict):
    """Which manifest column holds what (absent optional columns are simply not used)."""

    id: str | None = "id"
    """The record's id; null for a dataset without one (many Hub mirrors): the row's
    position in the split (0, 1, …) is its id then."""
    audio: str = "audio"
    reference: str = "reference"
    language: str | None = "language"
    choices: str | None = None
    target_language: str | None = "target_language"
    """For translation: the language of the reference (picks sacrebleu's tokenizer)."""
    tools: str | None = None
    """For function calling: a column holding the record's own tools (a JSON list of function
    schemas, as BFCL stores them); ``{tools}`` in a prompt and the call match then use them."""
    question: str | None = None
    """The question asked about the audio, when the dataset has one as text (judge metrics
    show it to the judge)."""


class Prompt(Strict):
    """Prompt templates: ``{column}`` is replaced by the record's value, ``{choices}`` by the list."""

    system: str | None = None
    user: str | None = None


class Generation(Strict):
    """Generation parameters sent with each request (None leaves the provider's default)."""

    temperature: float | None = None
    max_tokens: int | None = Field(default=None, ge=1)


class LongAudio(Strict):
    """What to do with a clip longer than ``max_seconds``: cut it, or send it in chunks that
    end in silences (``tasks.engine.chunking``)."""

    policy: Literal["truncate", "chunk"] = "truncate"
    max_seconds: float = Field(default=30.0, gt=0)
    overlap_seconds: float = Field(default=1.0, ge=0)
    """How far a chunk reaches back into the last one where that one was cut hard (no
    silence to end it in); chunks ending in a silence do not overlap."""
    silence_window: float = Field(default=0.3, ge=0, lt=1)
    """The last part of each chunk (a fraction of ``max_seconds``) searched for a silence to
    end it in; 0 cuts every chunk hard at ``max_seconds``."""
    chunk_prompt: str | list[str] | None = None
    """The user prompt of each chunk of a chunked clip, instead of ``prompt.user``:
    ``{index}`` (from 1), ``{count}`` and ``{prompt}`` (the task's prompt) are filled in,
    and record columns as in ``prompt``; a list gives chunk i its i-th entry (the last
    entry serves the chunks beyond it)."""

    @model_validator(mode="after")
    def _overlap_fits(self) -> LongAudio:
        if self.policy == "chunk" and self.overlap_seconds >= self.max_seconds:
            raise ValueError("overlap_seconds must be shorter than max_seconds to chunk")
        if isinstance(self.chunk_prompt, list) and not self.chunk_prompt:
            raise ValueError("chunk_prompt: give at least one prompt")
        if self.chunk_prompt is not None and self.policy != "chunk":
            raise ValueError("chunk_prompt is for policy: chunk")
        return self


class Turns(Strict):
    """A multi-turn task: each record holds several user turns (audio and/or text), asked one
    after the other, each request carrying the whole conversation so far; the last reply is
    the record's prediction (scored against ``columns.reference``)."""

    audio: str | None = None
    """The column listing each user turn's audio file (null for a text-only turn)."""
    text: str | None = None
    """The column listing each user turn's text (null for an audio-only turn, which is sent
    with ``prompt.user``)."""
    replies: str | None = None
    """The column listing the reference assistant reply to each turn."""
    history: Literal["model", "reference"] = "model"
    """The assistant turns later requests carry: the model's own replies, or the reference
    replies (``replies``), which makes every turn's request independent of the model."""
    score: Literal["last", "every"] = "last"
    """Score the last reply only (against ``columns.reference``), or every turn's reply
    that has a reference (the last against ``columns.reference``, the others against
    ``replies``): the task's metrics then pool over turns."""

    @model_validator(mode="after")
    def _has_turns(self) -> Turns:
        if self.audio is None and self.text is None:
            raise ValueError("give the column of the turns' audio, text or both")
        if self.history == "reference" and self.replies is None:
            raise ValueError("history: reference needs the replies column")
        if self.score == "every" and self.replies is None:
            raise ValueError("score: every needs the replies column")
        return self


class Tools(Strict):
    """The tools a function-calling task offers: those of a built-in benchmark."""

    benchmark: str


class SqlDatabase(Strict):
    """Where ``sql_execution_match`` runs a record's SQL: one SQLite file, or a folder of
    ``<db_id>/<db_id>.sqlite`` (Spider's layout) picked by a column."""

    builtin: str | None = None
    """A database voxbench builds on first use (``metrics.sql.BUILTIN_DATABASES``)."""
    database: str | None = None
    """A ``.sqlite`` file or a folder of them (relative to the task file; ``${VAR}`` and ``~``
    expanded when the task runs)."""
    db_id_column: str | None = None
    """With a folder: the column naming the record's database."""
    timeout_s: float = Field(default=10.0, gt=0)
    """How long one query may run before it is interrupted."""

    @model_validator(mode="after")
    def _one_database(self) -> SqlDatabase:
        if (self.builtin is None) == (self.database is None):
            raise ValueError("give exactly one of builtin or database")
        return self


class AudioRubric(Strict):
    """What ``llm_judge_audio`` grades a task's spoken answers by (``voxbench rubric show``)."""

    rubric: str
    """A built-in rubric's name or a rubric file."""
    options: dict[str, str] = {}
    """The rubric's parameters, e.g. ``{target_emotion: cheerful}``."""


class TaskSpec(Strict):
    """One task file, after ``extends`` is resolved."""

    description: str = ""
    dataset: DatasetRef
    language: str = "en"
    """The language of records whose manifest has no language column."""
    target_language: str | None = None
    """For translation: the language of the references when the dataset has no column for it
    (``columns.target_language``): picks sacrebleu's tokenizer."""
    columns: Columns = Columns()
    prompt: Prompt = Prompt()
    answer: AnswerKind = "text"
    """How the reply is read: as text, as one of ``labels``, a choice letter, or tool calls."""
    labels: list[str] = []
    label_map: dict[str, str] = {}
    """Other spellings of the labels → the label (``neu: neutral``, ``angry: anger``): applied
    to the dataset's references and to the models' replies alike."""
    reference_label: Literal["exact", "mentioned"] = "exact"
    """How a label task's reference column holds the label: ``exact`` (the label or one of its
    ``label_map`` spellings), or ``mentioned`` in a sentence ("The speaker sounds happy.", as
    the AudioBench mirrors write it): the label it names first."""
    tools: Tools | None = None
    metrics: list[str] = Field(min_length=1)
    generation: Generation = Generation()
    long_audio: LongAudio = LongAudio()
    sample_rate: int = Field(default=16_000, gt=0)
    """The rate audio is sent at (resampled with soxr)."""
    audio_judge: AudioRubric | None = None
    """The rubric of ``llm_judge_audio`` (the config's ``audio_judge`` says who judges)."""
    sql: SqlDatabase | None = None
    """The database ``sql_execution_match`` runs the gold and predicted SQL on."""
    turns: Turns | None = None
    """Multi-turn records (``columns.audio`` is then unused)."""
    licence: str = ""
    """A one-line licence note of the dataset ("CC BY 4.0", "gated on the Hub: accept the
    terms"); every Hub task has one."""
    size: int | None = Field(default=None, ge=0)
    """Records in the dataset's split, when known (from its dataset card)."""
    source_url: str = ""
    """The dataset card's address."""

    @model_validator(mode="after")
    def _turns_are_whole_clips(self) -> TaskSpec:
        if self.turns is not None and self.long_audio.policy == "chunk":
            raise ValueError(
                "long_audio: a multi-turn task truncates long turns (policy: truncate)"
            )
        return self

    @property
    def dataset_label(self) -> str:
        """The dataset in one cell: ``builtin:<name>``, ``<org/name>[/<config>]:<split>[+<config of the references>]`` or
        ``<format>:<path>``."""
        ref = self.dataset
        if ref.builtin is not None:
            return f"builtin:{ref.builtin}"
        if ref.hub is not None:
            config = f"/{ref.config}" if ref.config else ""
            split = f":{ref.split}" if ref.split else ""
            joined = f"+{ref.references_from.config}" if ref.references_from else ""
            return f"{ref.hub}{config}{split}{joined}"
        return f"{ref.format}:{ref.path}"

    @model_validator(mode="after")
    def _label_map_targets(self) -> TaskSpec:
        if self.label_map and self.labels:
            unknown = sorted(set(self.label_map.values()) - set(self.labels))
            if unknown:
                raise ValueError(
                    f"label_map maps to {', '.join(unknown)}, which labels does not list"
                )
        if self.answer != "label" and (self.label_map or self.reference_label != "exact"):
            raise ValueError("label_map and reference_label are for a task with answer: label")
        if self.reference_label == "mentioned" and not self.labels:
            raise ValueError("reference_label: mentioned needs the labels to look for (labels:)")
        return self


@dataclass(frozen=True)
class TaskEntry:
    """A task found in a registry folder."""

    name: str
    family: str
    file: Path
    spec: TaskSpec
    notes: tuple[str, ...] = ()
    """How a task read from another harness's file differs from its run there."""


def _merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class TaskRegistry:
    """Every task in the built-in registry and the user's folders (later folders win).

    A user folder may also hold AU-Harness task files (``tasks.au_harness``): each is a task
    named by its ``task_name``, its ``base.yaml`` files bases only, and its folders groups as
    AU-Harness's are. One that has no voxbench equivalent is in ``not_loaded`` with the reason.
    """

    def __init__(self, folders: Iterable[Path] = ()) -> None:
        self.folders = [REGISTRY_DIR, *(Path(f) for f in folders)]
        self._files: dict[str, tuple[str, Path]] = {}
        self._groups: dict[str, list[str]] = {}
        self._au: dict[str, au_harness.Converted] = {}
        self.not_loaded: dict[str, au_harness.Converted] = {}
        """AU-Harness tasks with no voxbench equivalent (each says why)."""
        for root in self.folders:
            if not root.is_dir():
                raise ConfigError(f"task folder {root} does not exist", field="tasks_dirs")
            files = [f for f in sorted(root.rglob("*.yaml")) if not f.name.startswith("_")]
            if root != REGISTRY_DIR:
                files = self._add_au_harness(root, files)
            for file in files:
                # A task's name (the file's stem) becomes part of file names in a run.
                safe_name(file.stem, field="task name (the file's name)", file=file)
                self._add(file.stem, file.relative_to(root), file)
        self._groups["all"] = list(self._files)
        self._cache: dict[str, TaskEntry] = {}

    def _add(self, name: str, rel: Path, file: Path) -> None:
        family = rel.parts[0] if len(rel.parts) > 1 else "tasks"
        self._files[name] = (family, file)
        self.not_loaded.pop(name, None)
        for folder in rel.parts[:-1]:
            self._groups.setdefault(folder, []).append(name)

    def _add_au_harness(self, root: Path, files: list[Path]) -> list[Path]:
        """Take in the AU-Harness task files of a user folder; the voxbench task files left
        (not AU-Harness's, nor a file one of its tasks extends)."""
        files = sorted({*files, *root.rglob("*.yml")})
        au_files = [f for f in files if au_harness.is_au_harness(read_yaml(f))]
        bases: set[Path] = set()
        for file in au_files:
            found = au_harness.convert(file, root, bases)
            if found is None:
                continue  # a base file
            bases.discard(file.resolve())
            if found.spec is None:
                self.not_loaded[found.name] = found  # a task of that name elsewhere stays
                continue
            self._au[found.name] = found
            self._add(found.name, file.relative_to(root), file)
        taken = set(au_files)
        return [
            f for f in files if f not in taken and f.resolve() not in bases and f.suffix == ".yaml"
        ]

    @property
    def names(self) -> list[str]:
        """Every task name, sorted."""
        return sorted(self._files)

    @property
    def groups(self) -> dict[str, list[str]]:
        """Group (folder) name → its task names, sorted; ``all`` is every task, ``builtin``
        those of the built-in offline suite."""
        found = {g: sorted(set(ts)) for g, ts in self._groups.items()}
        found[BUILTIN_GROUP] = self.builtin_tasks()
        return dict(sorted(found.items()))

    def builtin_tasks(self) -> list[str]:
        """The tasks whose dataset is built in (synthesized offline): the default suite."""
        return [n for n in self.names if self.get(n).spec.dataset.builtin is not None]

    def expand(self, name: str, *, field: str) -> list[str]:
        """The tasks a task or group name stands for."""
        if name in self._files:
            return [name]
        if name == BUILTIN_GROUP:
            return self.builtin_tasks()
        if name in self._groups:
            return sorted(set(self._groups[name]))
        if name in self.not_loaded:
            found = self.not_loaded[name]
            raise ConfigError(
                f"the AU-Harness task {name!r} has no voxbench equivalent: {found.reason}",
                file=found.file,
                field=field,
            )
        raise ConfigError(
            f"unknown task or group {name!r}",
            field=field,
            expected="one of: " + ", ".join([*self.names, *sorted([*self._groups, BUILTIN_GROUP])]),
        )

    def get(self, name: str) -> TaskEntry:
        """The task called ``name``, its ``extends`` chain resolved and validated."""
        if name not in self._cache:
            family, file = self._files[name]
            converted = self._au.get(name)
            if converted is not None and converted.file == file:
                assert converted.spec is not None
                spec = validate(TaskSpec, converted.spec, file=file, what="AU-Harness task")
                self._cache[name] = TaskEntry(name, family, file, spec, tuple(converted.notes))
                return self._cache[name]
            data = self._resolve(file, [])
            spec = validate(TaskSpec, data, file=file, what="task")
            self._cache[name] = TaskEntry(name, family, file, spec)
        return self._cache[name]

    def _resolve(self, file: Path, chain: list[Path]) -> dict[str, Any]:
        if file in chain:
            loop = " → ".join(str(p) for p in [*chain, file])
            raise ConfigError(f"extends loops: {loop}", file=file, field="extends")
        data = read_yaml(file)
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError("a task file must be a mapping of keys", file=file)
        parent = data.pop("extends", None)
        if parent is None:
            return self._anchor_paths(data, file)
        if not isinstance(parent, str):
            raise ConfigError("extends must be a file or task name", file=file, field="extends")
        target = (file.parent / parent).resolve()
        if not target.is_file():
            if parent not in self._files:
                raise ConfigError(
                    f"extends {parent!r}: no such file or task",
                    file=file,
                    field="extends",
                    expected="a path relative to this file or a task name",
                )
            target = self._files[parent][1]
        base = self._resolve(target, [*chain, file])
        return _merge(base, self._anchor_paths(data, file))

    @staticmethod
    def _anchor_paths(data: dict[str, Any], file: Path) -> dict[str, Any]:
        # A dataset path is relative to the file that wrote it, not to the one extending it.
        dataset = data.get("dataset")
        if isinstance(dataset, dict) and isinstance(dataset.get("path"), str):
            path = Path(dataset["path"]).expanduser()
            data = {**data, "dataset": {**dataset, "path": str(file.parent / path)}}
        sql = data.get("sql")
        if isinstance(sql, dict) and isinstance(sql.get("database"), str):
            # Only a plain relative path is anchored: "${VAR}" and "~" are expanded at run time.
            database = sql["database"]
            if not database.startswith(("$", "~", "/")):
                data = {**data, "sql": {**sql, "database": str(file.parent / database)}}
        return data
