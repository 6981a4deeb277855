"""The typed results of the audio-task and full-duplex run kinds: what their writers write and
every reader (the results store, reports, the viewer, ``compare``) reads.

A conversation run's results are ``core.records`` (``RunInfo``, ``Scorecard``); these are the
other kinds':

- an audio-task run (``runs/tasks/<id>/``): ``TaskRunInfo`` (``run.json``), one ``TaskRecord``
  per line of ``records.jsonl``, and ``TaskScores`` (``scores.json``);
- a full-duplex scoring: ``FdbSummary`` (``fdb_summary_<mode>.json``).

Each model names the fields its readers rely on and keeps every other field it is given
(``extra="allow"``): a field a writer adds reaches every reader, and the store, without a
second schema to edit. Old files migrate as they are read (``TaskRunInfo.model_specs``: a task
model recorded by its label only, ``oracle``, reads as ``local/oracle``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from voxbench.core.names import ModelSpec

RunKind = Literal["conversation", "tasks", "fdb"]
"""The run kinds the results store indexes (repeat groups and matrices are folders of these)."""

TASK_RUN_SCHEMA = "voxbench.tasks/1"
"""The ``schema`` field of a task run's ``run.json``."""
FDB_SUMMARY_SCHEMA = 1
"""``schema_version`` of an FDB summary."""
FDB_SUMMARY_PREFIX = "fdb_summary_"


def fdb_summary_name(mode: str) -> str:
    """The summary an FDB scoring in ``mode`` writes into the scored directory."""
    return f"{FDB_SUMMARY_PREFIX}{mode}.json"


def fdb_summary_mode(file_name: str) -> str | None:
    """The scoring mode of an FDB summary file name, or None when it is not one."""
    if file_name.startswith(FDB_SUMMARY_PREFIX) and file_name.endswith(".json"):
        return file_name[len(FDB_SUMMARY_PREFIX) : -len(".json")] or None
    return None


class _Open(BaseModel):
    """A result document: named fields typed, every other field kept as written."""

    model_config = ConfigDict(extra="allow")


# -- audio-task runs ---------------------------------------------------------------------------


class MetricScore(_Open):
    """One metric pooled over a task × model's records (0–100 scale, or the metric's unit)."""

    value: float | None
    ci: tuple[float, float] | None = None
    """95% interval; how it was made is the metric's own (see ``metric_setup`` in run.json)."""
    n: int = 0
    """Units scored (records, or turns for a multi-turn task scored per turn)."""
    higher_is_better: bool = True
    # What some metrics add, each counted apart from ``n`` (None: the metric has no such count).
    undecided: int | None = None
    """Judge metrics: records the judge gave no usable verdict on (left out of the value)."""
    no_audio: int | None = None
    """``llm_judge_audio``: answers that came without audio."""
    percent: float | None = None
    """``llm_judge_detailed``: the 0–5 score as a percentage."""
    unparsable: int | None = None
    """Predictions the metric could not read (diarised transcripts, SQL)."""
    unparsable_references: int | None = None
    gold_errors: int | None = None
    """``sql_execution_match``: gold queries that failed on their own database."""
    prompts_unchecked: int | None = None
    """``instruction_following``: records with an instruction no checker covers."""
    stages: str | None = None
    """METEOR: the alignment stages this machine had (synonyms need a local WordNet)."""
    parsed: float | None = None
    """``function_call_match``: % of replies that held a readable call."""
    name_accuracy: float | None = None
    fields: dict[str, dict[str, float | int]] | None = None
    """``function_call_match``: per argument, its accuracy and n."""


class TaskModelScores(_Open):
    """A task × model: how its records ended and each metric's pooled value."""

    records: int = 0
    answered: int = 0
    errors: int = 0
    missing: int = 0
    empties: int = 0
    error_categories: dict[str, int] = Field(default_factory=dict)
    median_latency_s: float | None = None
    metrics: dict[str, MetricScore] = Field(default_factory=dict)


class AggregateScore(_Open):
    """One model's weighted mean over an aggregate's tasks, and what went in."""

    value: float | None
    tasks: dict[str, dict[str, float | int | None]] = Field(default_factory=dict)
    """Per task included: its weight, value, n, records, errors, missing, undecided."""
    excluded: dict[str, str] = Field(default_factory=dict)
    """Per task left out: why."""
    n: int = 0
    records: int = 0
    errors: int = 0
    missing: int = 0
    undecided: int = 0


class TaskAggregate(_Open):
    """A configured aggregate (``aggregate:`` in eval.yaml) over every model."""

    metric: str
    higher_is_better: bool = True
    weights: dict[str, float] = Field(default_factory=dict)
    rule: str = ""
    models: dict[str, AggregateScore] = Field(default_factory=dict)


class TaskScores(_Open):
    """``scores.json``: task → model label → scores, and the aggregates."""

    tasks: dict[str, dict[str, TaskModelScores]] = Field(default_factory=dict)
    aggregates: dict[str, TaskAggregate] = Field(default_factory=dict)


class TaskError(_Open):
    """Why a record has no answer, after its retries."""

    message: str
    category: str = "unknown"


class TaskRecord(_Open):
    """One line of ``records.jsonl``: a record answered (or failed) by one model."""

    task: str
    model: str
    """The model's label in the eval config (``TaskRunInfo.model_specs`` resolves it)."""
    id: str
    language: str | None = None
    reference: Any = None
    prediction: str | None = None
    scores: dict[str, Any] = Field(default_factory=dict)
    """Per metric, the record's statistics (each metric's own shape, pooled by the metric)."""
    error: TaskError | None = None
    latency_s: float = 0.0
    cached: bool = False


class TaskModelEntry(_Open):
    """A model as a task run's ``run.json`` lists it."""

    name: str
    """The label the eval config gives it (keys of ``scores.json``)."""
    model: str | None = None
    """``provider/model`` (absent in no run written so far, but read defensively)."""
    api: str | None = None
    endpoints: int = 1
    spec: ModelSpec | None = None
    """The resolved model (written since run contract 2; derived on read before)."""

    def resolved(self) -> ModelSpec:
        """The model's one identity: the written spec, or one derived from the old fields."""
        if self.spec is not None:
            return self.spec
        return ModelSpec.from_name(self.model or self.name, role="task model", label=self.name)


class TaskDataset(_Open):
    """A task's dataset as the run found it."""

    family: str | None = None
    fingerprint: str = ""
    records: int = 0
    metrics: list[str] = Field(default_factory=list)


class TaskInference(_Open):
    """A task run's inference phase, its last pass (``run.json``'s ``inference``): when the
    first request was sent and the last answer came (UTC, ms), the requests made (retries
    included), the records answered from the cache, and the most requests in flight at once."""

    first_request: str | None = None
    last_answer: str | None = None
    seconds: float | None = None
    records: int = 0
    requests: int = 0
    retries: int = 0
    cached: int = 0
    max_in_flight: int = 0
    requests_per_s: float | None = None


class TaskRunInfo(_Open):
    """A task run's ``run.json``."""

    schema_: str = Field(TASK_RUN_SCHEMA, alias="schema")
    id: str
    started: str
    status: str
    finished: str | None = None
    seed: int | None = None
    models: list[TaskModelEntry] = Field(default_factory=list)
    tasks: dict[str, TaskDataset] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    inference: TaskInference | None = None
    """The last pass's requests (runs before it was recorded: None)."""
    perturbations: str | None = None
    """What the models heard every clip through (``voxbench.audio.perturb`` spec; None: clean)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def model_specs(self) -> dict[str, ModelSpec]:
        """Label → the model's spec (a label the run does not list stands for itself)."""
        return {m.name: m.resolved() for m in self.models}

    def identity(self, label: str) -> str:
        """How every reader names the model the config labelled ``label``."""
        spec = self.model_specs().get(label)
        return spec.identity if spec is not None else label


# -- full-duplex scorings ----------------------------------------------------------------------


class FdbStats(_Open):
    """One metric over a row's samples: count, mean, population std; timings add p50/p90/p99."""

    n: int
    mean: float | None
    std: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    min: float | None = None
    max: float | None = None


class FdbSummaryRow(_Open):
    """One (target, category, subset) of an FDB scoring."""

    target: str
    category: str
    subset: str
    samples: int = 0
    errors: int = 0
    judge_errors: int = 0
    metrics: dict[str, FdbStats] = Field(default_factory=dict)


class FdbJudge(_Open):
    """The LLM judge of a scoring (relevance, v1.5 behaviour labels)."""

    name: str
    seed: int | None = None
    temperature: float | None = None


class FdbSummary(_Open):
    """``fdb_summary_<mode>.json``: one scoring pass of a directory of FDB outputs."""

    schema_version: int = FDB_SUMMARY_SCHEMA
    mode: str
    method: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    rows: list[FdbSummaryRow] = Field(default_factory=list)
    judge: FdbJudge | None = None
    asr: str | None = None
    vad_model: dict[str, str] | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    perturbations: str | None = None
    """What the targets heard the FDB inputs through (``voxbench.audio.perturb``; None: clean)."""
