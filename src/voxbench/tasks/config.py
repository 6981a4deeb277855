"""The evaluation config (``eval.yaml``): one pydantic schema that is also the only reader.

Every key below is consumed by ``tasks.plan`` or the engine; an unknown or misplaced key is
an error naming the file, the key's path and the keys allowed there. Strings may use
``${ENV}`` / ``${ENV:-default}``; the raw text is what ``run.json`` keeps, so secrets
substituted from the environment are never written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from voxbench.core.names import SafeName
from voxbench.core.yamlfile import parse_yaml, read_text_file, substitute_env, validate
from voxbench.providers.ratelimit import RateLimit, normalise_origin
from voxbench.tasks.spec import Generation, Prompt, Strict

Scalar = str | int | float | bool


class EndpointConfig(Strict):
    """One server of a model pool."""

    base_url: str
    api_key: str | None = None
    max_concurrency: int = Field(default=4, ge=1)
    """Requests this endpoint gets in flight at once, exactly."""


class OutputAudio(Strict):
    """A chat model that answers aloud: the WAV is kept, its transcript is the prediction."""

    voice: str = Field(min_length=1)
    """The provider's voice name (OpenAI: alloy, ash, coral, …)."""


class ModelConfig(Strict):
    """A model under test: a registered ``provider/model`` served by one or more endpoints."""

    name: SafeName
    """What tables and files call it (unique in the config): a name, never a path."""
    model: str
    """``provider/model``: any audio-in completion or ASR provider, or ``local/oracle``."""
    api: Literal["chat", "transcription"] | None = None
    """``chat`` (audio + prompt → text) or ``transcription`` (ASR); inferred when left out."""
    base_url: str | None = None
    api_key: str | None = None
    max_concurrency: int = Field(default=4, ge=1)
    endpoints: list[EndpointConfig] = []
    """Several servers of the same model form one pool that shares the work (instead of base_url)."""
    timeout_s: float = Field(default=120.0, gt=0)
    retries: int = Field(default=3, ge=0)
    """Retries of a retryable failure (429, 5xx, timeout) after the first try."""
    backoff_base_s: float = Field(default=1.0, ge=0)
    """The first retry's wait (doubling after, jittered, never below Retry-After); 0: no wait."""
    generation: Generation = Generation()
    output_audio: OutputAudio | None = None
    """Ask a chat model for a spoken answer (``llm_judge_audio`` grades it by ear)."""

    @model_validator(mode="after")
    def _one_way_to_reach(self) -> ModelConfig:
        if self.endpoints and (self.base_url or self.api_key):
            raise ValueError("give base_url/api_key per endpoint when endpoints is set")
        return self

    def pool(self) -> list[EndpointConfig]:
        """The endpoints serving this model (one built from base_url when endpoints is empty)."""
        if self.endpoints:
            return list(self.endpoints)
        return [
            EndpointConfig.model_construct(
                base_url=self.base_url or "",
                api_key=self.api_key,
                max_concurrency=self.max_concurrency,
            )
        ]


class Filters(Strict):
    """Which records of a task are evaluated."""

    num_samples: int | None = Field(default=None, ge=1)
    """A seeded random sample of this many records (not the first N)."""
    min_duration_s: float | None = Field(default=None, ge=0)
    max_duration_s: float | None = Field(default=None, gt=0)
    language: list[str] | None = None
    where: dict[str, Scalar] = {}
    """Manifest column → the value a record must have."""


class TaskSelection(Strict):
    """A task or group with its own metrics or filters."""

    name: str
    metrics: list[str] | None = None
    """Replaces the task's metrics."""
    filters: Filters | None = None
    """Merged over the top-level filters."""


class Aggregate(Strict):
    """A named average of one metric over tasks, optionally weighted."""

    name: str
    metric: str
    tasks: list[str] | dict[str, float]
    """Task or group names; a mapping gives each a weight (a group's weight goes to each task)."""


class Override(Strict):
    """Generation parameters or prompts for a (task, model) pair, merged over the task's own."""

    task: str | None = None
    """A task or group name; all tasks when left out."""
    model: str | None = None
    """A model's ``name``; all models when left out."""
    generation: Generation | None = None
    prompt: Prompt | None = None


class JudgeConfig(Strict):
    """The LLM judge of judge metrics (``llm_judge``): a ``text_completion`` provider."""

    model: str
    """``provider/model`` of any text-completion (judge) provider."""
    base_url: str | None = None
    api_key: str | None = None
    max_concurrency: int = Field(default=4, ge=1)
    """Judge calls in flight at once (apart from the models' own concurrency)."""
    timeout_s: float = Field(default=60.0, gt=0)
    retries: int = Field(default=2, ge=0)
    """Calls after the first when a reply is not the JSON asked for, or fails retryably."""
    backoff_base_s: float = Field(default=1.0, ge=0)
    """The first retry's wait after a retryable failure (doubling after, jittered)."""
    rubric: str | None = None
    """What makes an answer right, in your words (replaces the built-in rubric)."""


class AudioJudgeConfig(Strict):
    """The judge that hears spoken answers (``llm_judge_audio``; each task names its rubric)."""

    model: str
    """``provider/model`` of a realtime or audio-in chat provider (``voxbench judge-audio``)."""
    base_url: str | None = None
    max_concurrency: int = Field(default=4, ge=1)
    """Clips judged at once (apart from the models' and the text judge's concurrency)."""
    samples: int = Field(default=1, ge=1)
    """Judgments per answer (their mean is the score)."""


class EndpointRateLimit(Strict):
    """Requests per second to one endpoint, for each API key (``providers.ratelimit``)."""

    endpoint: str
    requests_per_second: float = Field(gt=0)
    burst: int = Field(default=1, ge=1)


class EvalConfig(Strict):
    """``eval.yaml``: models × tasks × metrics, and how to run them."""

    models: list[ModelConfig] = Field(min_length=1)
    tasks: list[str | TaskSelection] = Field(min_length=1)
    filters: Filters = Filters()
    aggregate: list[Aggregate] = []
    overrides: list[Override] = []
    judge: JudgeConfig | None = None
    """The judge of judge metrics; required when a task uses one."""
    audio_judge: AudioJudgeConfig | None = None
    """The judge of ``llm_judge_audio``; required when a task uses it."""
    seed: int = 0
    """Seeds record sampling and the bootstrap intervals."""
    tasks_dirs: list[str] = []
    """Extra task registry folders (relative to the config file)."""
    dataset_dirs: dict[str, str] = {}
    """Task name → a local copy of its Hub dataset (relative to the config file): a
    ``save_to_disk`` folder or a folder of the Hub's parquet files, read instead of the Hub."""
    output_dir: str = "runs/tasks"
    """Where run directories go (relative to the working directory)."""
    rate_limits: list[EndpointRateLimit] = []
    """Request pacing per endpoint and key, besides each endpoint's ``max_concurrency``
    (on Ray it holds for every shard together)."""

    def pacing(self) -> dict[str, RateLimit]:
        """``rate_limits`` by endpoint origin."""
        return {
            normalise_origin(r.endpoint): RateLimit(r.requests_per_second, r.burst)
            for r in self.rate_limits
        }

    @model_validator(mode="after")
    def _unique_names(self) -> EvalConfig:
        names = [m.name for m in self.models]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"model names must be unique: {', '.join(twice)} repeated")
        return self


DEFAULT_CONFIG_TEXT = """\
# The built-in offline suite: the tasks on built-in datasets (never a Hub dataset), the
# oracle and local Whisper.
models:
  - {name: oracle, model: local/oracle}
  - {name: whisper-tiny.en, model: local/whisper-tiny.en, max_concurrency: 2}
tasks: [builtin]
aggregate:
  - {name: asr_wer, metric: wer, tasks: [builtin_en_asr, builtin_multilingual_asr]}
"""
"""What ``voxbench tasks run`` evaluates without a config file."""


def parse_config(text: str, *, file: Path | str | None) -> EvalConfig:
    """Validate config ``text`` (YAML), with ``${ENV}`` substituted."""
    data = parse_yaml(text, source=file, what="eval config YAML")
    data = substitute_env(data, file=Path(file) if file else None)
    return validate(EvalConfig, data, file=file, what="eval config")


def load_config(path: Path) -> tuple[EvalConfig, str]:
    """The config in ``path`` and its raw text (kept in ``run.json`` for resume)."""
    text = read_text_file(path)
    return parse_config(text, file=path), text
