"""Every key of the eval config and of a task file changes what a run does or writes.

The test walks both schemas: a key without a case here fails the test, so a key can never
be added (or left) that the code does not read — AU-Harness's dead keys, made impossible.
Each case runs the same tiny task twice, differing in that key only, and compares the part
of the outcome the key should change.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import _model_of
from voxbench.providers.backoff import RetryPolicy
from voxbench.providers.ratelimit import current_pacer
from voxbench.tasks.config import EvalConfig
from voxbench.tasks.spec import TaskSpec

from .conftest import FakeEndpoints, run_yaml


def schema_paths(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every key of ``model``, nested keys dotted (list items share their list's path)."""
    out = set()
    for name, field in model.model_fields.items():
        path = prefix + name
        out.add(path)
        inner = _model_of(field.annotation)
        if inner is not None:
            out |= schema_paths(inner, path + ".")
    return out


M = "models: [{name: m, model: vllm/q}]\n"
RL = "rate_limits: [{endpoint: 'http://x', requests_per_second: 5, burst: 1}]\n"
T = "tasks: [tiny]\n"

# path → (config A, config B, what differs). Both get ``tasks_dirs: [mytasks]``.
CONFIG_CASES: dict[str, tuple[str, str, str]] = {
    "models": (
        M + T,
        "models: [{name: m, model: vllm/q}, {name: n, model: vllm/q}]\n" + T,
        "scores",
    ),
    "models.name": (M + T, "models: [{name: n, model: vllm/q}]\n" + T, "scores"),
    "models.model": (M + T, "models: [{name: m, model: local/oracle}]\n" + T, "calls"),
    "models.api": (
        "models: [{name: m, model: openai/gpt-4o-audio-preview, api: chat}]\n" + T,
        "models: [{name: m, model: openai/gpt-4o-audio-preview, api: transcription}]\n" + T,
        "calls",
    ),
    "models.base_url": (
        "models: [{name: m, model: vllm/q, base_url: 'http://a'}]\n" + T,
        "models: [{name: m, model: vllm/q, base_url: 'http://b'}]\n" + T,
        "calls",
    ),
    "models.api_key": (
        "models: [{name: m, model: vllm/q, api_key: k1}]\n" + T,
        "models: [{name: m, model: vllm/q, api_key: k2}]\n" + T,
        "calls",
    ),
    "models.max_concurrency": (
        "models: [{name: m, model: vllm/q, max_concurrency: 1}]\n" + T,
        "models: [{name: m, model: vllm/q, max_concurrency: 3}]\n" + T,
        "peak",
    ),
    "models.endpoints": (
        M + T,
        "models: [{name: m, model: vllm/q, endpoints: [{base_url: 'http://a'}, {base_url: 'http://b'}]}]\n"
        + T,
        "peak",
    ),
    "models.endpoints.base_url": (
        "models: [{name: m, model: vllm/q, endpoints: [{base_url: 'http://a'}]}]\n" + T,
        "models: [{name: m, model: vllm/q, endpoints: [{base_url: 'http://b'}]}]\n" + T,
        "calls",
    ),
    "models.endpoints.api_key": (
        "models: [{name: m, model: vllm/q, endpoints: [{base_url: 'http://a', api_key: k1}]}]\n"
        + T,
        "models: [{name: m, model: vllm/q, endpoints: [{base_url: 'http://a', api_key: k2}]}]\n"
        + T,
        "calls",
    ),
    "models.endpoints.max_concurrency": (
        "models: [{name: m, model: vllm/q, endpoints: [{base_url: 'http://a', max_concurrency: 1}]}]\n"
        + T,
        "models: [{name: m, model: vllm/q, endpoints: [{base_url: 'http://a', max_concurrency: 4}]}]\n"
        + T,
        "peak",
    ),
    "models.timeout_s": (
        "models: [{name: m, model: vllm/q, timeout_s: 30, retries: 0}]\n" + T,
        "models: [{name: m, model: vllm/q, timeout_s: 0.001, retries: 0}]\n" + T,
        "errors",
    ),
    "models.retries": (
        "models: [{name: m, model: vllm/q, retries: 0, backoff_base_s: 0}]\n" + T,
        "models: [{name: m, model: vllm/q, retries: 1, backoff_base_s: 0}]\n" + T,
        "errors",
    ),
    "models.backoff_base_s": (
        "models: [{name: m, model: vllm/q, retries: 1, backoff_base_s: 0}]\n" + T,
        "models: [{name: m, model: vllm/q, retries: 1, backoff_base_s: 0.001}]\n" + T,
        "backoff",
    ),
    "models.generation": (
        M + T,
        "models: [{name: m, model: vllm/q, generation: {temperature: 0.5}}]\n" + T,
        "calls",
    ),
    "models.output_audio": (
        M + T,
        "models: [{name: m, model: vllm/q, output_audio: {voice: alloy}}]\n" + T,
        "calls",
    ),
    "models.output_audio.voice": (
        "models: [{name: m, model: vllm/q, output_audio: {voice: alloy}}]\n" + T,
        "models: [{name: m, model: vllm/q, output_audio: {voice: echo}}]\n" + T,
        "calls",
    ),
    "models.generation.temperature": (
        "models: [{name: m, model: vllm/q, generation: {temperature: 0}}]\n" + T,
        "models: [{name: m, model: vllm/q, generation: {temperature: 1}}]\n" + T,
        "calls",
    ),
    "models.generation.max_tokens": (
        "models: [{name: m, model: vllm/q, generation: {max_tokens: 5}}]\n" + T,
        "models: [{name: m, model: vllm/q, generation: {max_tokens: 50}}]\n" + T,
        "calls",
    ),
    "tasks": (M + T, M + "tasks: [tiny_spk]\n", "scores"),
    "tasks.name": (M + "tasks: [{name: tiny}]\n", M + "tasks: [{name: tiny_spk}]\n", "scores"),
    "tasks.metrics": (
        M + "tasks: [{name: tiny, metrics: [wer]}]\n",
        M + "tasks: [{name: tiny, metrics: [cer]}]\n",
        "scores",
    ),
    "tasks.filters": (
        M + "tasks: [{name: tiny}]\n",
        M + "tasks: [{name: tiny, filters: {language: [fr]}}]\n",
        "ids",
    ),
    "tasks.filters.num_samples": (
        M + T,
        M + "tasks: [{name: tiny, filters: {num_samples: 2}}]\n",
        "ids",
    ),
    "tasks.filters.min_duration_s": (
        M + T,
        M + "tasks: [{name: tiny, filters: {min_duration_s: 2}}]\n",
        "ids",
    ),
    "tasks.filters.max_duration_s": (
        M + T,
        M + "tasks: [{name: tiny, filters: {max_duration_s: 2}}]\n",
        "ids",
    ),
    "tasks.filters.language": (
        M + T,
        M + "tasks: [{name: tiny, filters: {language: [en]}}]\n",
        "ids",
    ),
    "tasks.filters.where": (
        M + "filters: {where: {speaker: s1}}\n" + T,
        M
        + "filters: {where: {speaker: s1}}\ntasks: [{name: tiny, filters: {where: {speaker: s2}}}]\n",
        "ids",
    ),
    "filters": (M + T, M + T + "filters: {where: {speaker: s1}}\n", "ids"),
    "filters.num_samples": (
        M + T + "filters: {num_samples: 2}\n",
        M + T + "filters: {num_samples: 4}\n",
        "ids",
    ),
    "filters.min_duration_s": (M + T, M + T + "filters: {min_duration_s: 1.2}\n", "ids"),
    "filters.max_duration_s": (M + T, M + T + "filters: {max_duration_s: 1.2}\n", "ids"),
    "filters.language": (
        M + T + "filters: {language: [en]}\n",
        M + T + "filters: {language: [fr]}\n",
        "ids",
    ),
    "filters.where": (
        M + T + "filters: {where: {speaker: s1}}\n",
        M + T + "filters: {where: {speaker: s2}}\n",
        "ids",
    ),
    "aggregate": (
        M + T,
        M + T + "aggregate: [{name: x, metric: wer, tasks: [tiny]}]\n",
        "aggregates",
    ),
    "aggregate.name": (
        M + T + "aggregate: [{name: x, metric: wer, tasks: [tiny]}]\n",
        M + T + "aggregate: [{name: y, metric: wer, tasks: [tiny]}]\n",
        "aggregates",
    ),
    "aggregate.metric": (
        M
        + "tasks: [{name: tiny, metrics: [wer, cer]}]\naggregate: [{name: x, metric: wer, tasks: [tiny]}]\n",
        M
        + "tasks: [{name: tiny, metrics: [wer, cer]}]\naggregate: [{name: x, metric: cer, tasks: [tiny]}]\n",
        "aggregates",
    ),
    "aggregate.tasks": (
        M
        + "tasks: [tiny, tiny_spk]\naggregate: [{name: x, metric: wer, tasks: {tiny: 1, tiny_spk: 1}}]\n",
        M
        + "tasks: [tiny, tiny_spk]\naggregate: [{name: x, metric: wer, tasks: {tiny: 1, tiny_spk: 3}}]\n",
        "aggregates",
    ),
    "overrides": (M + T, M + T + "overrides: [{prompt: {user: other}}]\n", "calls"),
    "overrides.task": (
        M + "tasks: [tiny, tiny_spk]\noverrides: [{task: tiny, generation: {temperature: 0.7}}]\n",
        M
        + "tasks: [tiny, tiny_spk]\noverrides: [{task: tiny_spk, generation: {temperature: 0.7}}]\n",
        "calls",
    ),
    "overrides.model": (
        "models: [{name: m, model: vllm/q}, {name: n, model: vllm/q}]\n"
        + T
        + "overrides: [{model: m, prompt: {user: hi}}]\n",
        "models: [{name: m, model: vllm/q}, {name: n, model: vllm/q}]\n"
        + T
        + "overrides: [{model: n, prompt: {user: hi}}]\n",
        "calls",
    ),
    "overrides.generation": (
        M + T,
        M + T + "overrides: [{generation: {max_tokens: 7}}]\n",
        "calls",
    ),
    "overrides.generation.temperature": (
        M + T,
        M + T + "overrides: [{generation: {temperature: 0.3}}]\n",
        "calls",
    ),
    "overrides.generation.max_tokens": (
        M + T,
        M + T + "overrides: [{generation: {max_tokens: 9}}]\n",
        "calls",
    ),
    "overrides.prompt": (M + T, M + T + "overrides: [{prompt: {system: sys}}]\n", "calls"),
    "overrides.prompt.system": (M + T, M + T + "overrides: [{prompt: {system: other}}]\n", "calls"),
    "overrides.prompt.user": (M + T, M + T + "overrides: [{prompt: {user: other}}]\n", "calls"),
    "seed": (
        M + T + "filters: {num_samples: 3}\nseed: 0\n",
        M + T + "filters: {num_samples: 3}\nseed: 2\n",
        "ids",
    ),
    "tasks_dirs": (M + T, M + T + "tasks_dirs: []\n", "error"),
    "output_dir": (M + T + "output_dir: out_a\n", M + T + "output_dir: out_b\n", "output"),
    "dataset_dirs": (
        M + "tasks: [tiny_hub]\ndataset_dirs: {tiny_hub: mytasks/mine/hfd}\n",
        M + "tasks: [tiny_hub]\ndataset_dirs: {tiny_hub: mytasks/mine/hfd_copy}\n",
        "audio",
    ),
    "rate_limits": (M + T, M + T + RL, "pacing"),
    "rate_limits.endpoint": (M + T + RL, M + T + RL.replace("//x", "//y"), "pacing"),
    "rate_limits.requests_per_second": (M + T + RL, M + T + RL.replace(": 5", ": 6"), "pacing"),
    "rate_limits.burst": (M + T + RL, M + T + RL.replace("burst: 1", "burst: 2"), "pacing"),
}

BASE_TASK = "dataset: {path: data}\nmetrics: [wer]\n"
SCHEMA = "prompt: {user: '{schema}'}\n"
RUNAWAY = (  # gold queries that never end: the limit in each record's error
    "dataset: {path: data, manifest: sql.jsonl}\nmetrics: [sql_execution_match]\n"
    "columns: {reference: q}\n"
)
TASK_CASES: dict[str, tuple[str, str, str]] = {
    "description": ("description: one\n", "description: two\n", "description"),
    "dataset": ("", "dataset: {builtin: en_asr}\n", "ids"),
    "dataset.builtin": ("dataset: {builtin: en_asr}\n", "dataset: {builtin: spoken_qa}\n", "ids"),
    "dataset.path": ("", "dataset: {path: data_csv, manifest: manifest.csv}\n", "audio"),
    "dataset.manifest": ("", "dataset: {path: data, manifest: few.jsonl}\n", "ids"),
    "dataset.format": ("", "dataset: {path: hfd, format: hf_disk, split: test}\n", "ids"),
    "dataset.hub": ("", "dataset: {hub: vox-test/tiny, config: default, split: test}\n", "ids"),
    "dataset.config": (
        "dataset: {hub: vox-test/tiny, config: default, split: test}\n",
        "dataset: {hub: vox-test/tiny, config: fr, split: test}\n",
        "ids",
    ),
    "dataset.revision": (
        "dataset: {hub: vox-test/tiny, config: default, split: test}\n",
        "dataset: {hub: vox-test/tiny, config: default, split: test, revision: v2}\n",
        "hub_loads",
    ),
    "dataset.references_from": (
        "dataset: {hub: vox-test/tiny, config: default, split: test}\n",
        "dataset: {hub: vox-test/tiny, config: default, split: test, references_from: {config: fr, column: reference, key: id}}\n",
        "ids",
    ),
    "dataset.references_from.config": (
        "dataset: {hub: vox-test/tiny, config: default, split: test, references_from: {config: fr, column: reference, key: id}}\n",
        "dataset: {hub: vox-test/tiny, config: default, split: test, references_from: {config: default, column: reference, key: id}}\n",
        "ids",
    ),
    "dataset.references_from.column": (
        "dataset: {hub: vox-test/tiny, config: default, split: test, references_from: {config: fr, column: reference, key: id}}\n",
        "dataset: {hub: vox-test/tiny, config: default, split: test, references_from: {config: fr, column: language, key: id}}\n",
        "calls",
    ),
    "dataset.references_from.key": (
        "dataset: {hub: vox-test/tiny, config: default, split: test, references_from: {config: fr, column: reference, key: id}}\n",
        "dataset: {hub: vox-test/tiny, config: default, split: test, references_from: {config: fr, column: reference, key: language}}\n",
        "calls",
    ),
    "dataset.split": (
        "dataset: {path: hfd, format: hf_disk, split: test}\n",
        "dataset: {path: hfd, format: hf_disk, split: train}\n",
        "ids",
    ),
    "language": ("columns: {language: null}\nlanguage: en\n", "columns: {language: null}\nlanguage: fr\n", "languages"),
    "target_language": ("metrics: [bleu]\n", "metrics: [bleu]\ntarget_language: zh\n", "row_scores"),
    "columns": ("", "columns: {reference: speaker}\n", "calls"),
    "columns.id": ("", "columns: {id: audio}\n", "ids"),
    "columns.audio": ("", "columns: {audio: alt_audio}\n", "calls"),
    "columns.reference": ("", "columns: {reference: speaker}\n", "calls"),
    "columns.language": ("", "columns: {language: null}\nlanguage: de\n", "languages"),
    "columns.choices": ("prompt: {user: '{choices}'}\n", "prompt: {user: '{choices}'}\ncolumns: {choices: opts}\n", "calls"),
    "columns.target_language": ("metrics: [bleu]\n", "metrics: [bleu]\ncolumns: {target_language: tl}\n", "row_scores"),
    "prompt": ("", "prompt: {user: hi}\n", "calls"),
    "prompt.system": ("prompt: {system: a}\n", "prompt: {system: b}\n", "calls"),
    "prompt.user": ("prompt: {user: a}\n", "prompt: {user: b}\n", "calls"),
    "answer": ("metrics: [accuracy]\nlabels: [s1, s2]\ncolumns: {reference: speaker}\n",
               "metrics: [accuracy]\nlabels: [s1, s2]\ncolumns: {reference: speaker}\nanswer: label\n", "scores"),
    "labels": ("metrics: [accuracy]\nanswer: label\nlabels: [s1, s2]\ncolumns: {reference: speaker}\n",
               "metrics: [accuracy]\nanswer: label\nlabels: [s2]\ncolumns: {reference: speaker}\n", "scores"),
    "tools": ("prompt: {user: '{tools}'}\n", "prompt: {user: '{tools}'}\ntools: {benchmark: smoke}\n", "calls"),
    "tools.benchmark": ("prompt: {user: '{tools}'}\ntools: {benchmark: smoke}\n", "prompt: {user: '{tools}'}\ntools: {benchmark: conference}\n", "calls"),
    "metrics": ("", "metrics: [cer]\n", "scores"),
    "generation": ("", "generation: {temperature: 0.4}\n", "calls"),
    "generation.temperature": ("generation: {temperature: 0}\n", "generation: {temperature: 1}\n", "calls"),
    "generation.max_tokens": ("generation: {max_tokens: 4}\n", "generation: {max_tokens: 8}\n", "calls"),
    "long_audio": ("", "long_audio: {max_seconds: 1}\n", "calls"),
    "long_audio.policy": (
        "long_audio: {max_seconds: 1, overlap_seconds: 0.2, policy: truncate}\n",
        "long_audio: {max_seconds: 1, overlap_seconds: 0.2, policy: chunk}\n",
        "calls",
    ),
    "long_audio.max_seconds": ("long_audio: {max_seconds: 1}\n", "long_audio: {max_seconds: 2}\n", "calls"),
    "long_audio.overlap_seconds": (  # tones hold no speech: hard cuts only, to overlap
        "long_audio: {max_seconds: 1, policy: chunk, overlap_seconds: 0.1, silence_window: 0}\n",
        "long_audio: {max_seconds: 1, policy: chunk, overlap_seconds: 0.5, silence_window: 0}\n",
        "calls",
    ),
    "long_audio.silence_window": (
        "long_audio: {max_seconds: 1, policy: chunk, overlap_seconds: 0.2, silence_window: 0}\n",
        "long_audio: {max_seconds: 1, policy: chunk, overlap_seconds: 0.2, silence_window: 0.3}\n",
        "calls",
    ),
    "long_audio.chunk_prompt": (
        "long_audio: {max_seconds: 1, overlap_seconds: 0.2, policy: chunk}\n",
        "long_audio: {max_seconds: 1, overlap_seconds: 0.2, policy: chunk, chunk_prompt: '{prompt} (part {index} of {count})'}\n",
        "calls",
    ),
    "sample_rate": ("sample_rate: 16000\n", "sample_rate: 8000\n", "calls"),
    "turns": ("dataset: {path: turns_data}\n", "dataset: {path: turns_data}\nturns: {audio: t_audio}\n", "calls"),
    "turns.audio": ("dataset: {path: turns_data}\nturns: {audio: t_audio}\n", "dataset: {path: turns_data}\nturns: {audio: t_audio_rev}\n", "calls"),
    "turns.text": ("dataset: {path: turns_data}\nturns: {audio: t_audio}\n", "dataset: {path: turns_data}\nturns: {audio: t_audio, text: t_text}\n", "calls"),
    "turns.replies": (
        "dataset: {path: turns_data}\nturns: {audio: t_audio, replies: t_replies, history: reference}\n",
        "dataset: {path: turns_data}\nturns: {audio: t_audio, replies: t_replies_alt, history: reference}\n",
        "calls",
    ),
    "turns.score": (
        "dataset: {path: turns_data}\nturns: {audio: t_audio, replies: t_replies}\n",
        "dataset: {path: turns_data}\nturns: {audio: t_audio, replies: t_replies, score: every}\n",
        "scores",
    ),
    "turns.history": (
        "dataset: {path: turns_data}\nturns: {audio: t_audio, replies: t_replies}\n",
        "dataset: {path: turns_data}\nturns: {audio: t_audio, replies: t_replies, history: reference}\n",
        "calls",
    ),
    "label_map": ("metrics: [accuracy]\nanswer: label\nlabels: [s1, s2]\ncolumns: {reference: speaker}\n",
                  "metrics: [accuracy]\nanswer: label\nlabels: [s1, s2]\ncolumns: {reference: speaker}\n"
                  "label_map: {s1: s2}\n", "scores"),
    "reference_label": ("metrics: [accuracy]\nanswer: label\nlabels: [one, four, sept, dix, thirteen, fifteen]\n",
                        "metrics: [accuracy]\nanswer: label\nlabels: [one, four, sept, dix, thirteen, fifteen]\n"
                        "reference_label: mentioned\n", "scores"),
    "licence": ("licence: CC BY 4.0\n", "licence: CC0\n", "task_info"),
    "size": ("size: 6\n", "size: 7\n", "task_info"),
    "source_url": ("source_url: 'https://a'\n", "source_url: 'https://b'\n", "task_info"),
    "columns.tools": ("columns: {tools: null}\n", "columns: {tools: tl}\n", "error"),
    "sql": (SCHEMA, SCHEMA + "sql: {builtin: conference}\n", "calls"),
    "sql.builtin": (SCHEMA + "sql: {database: dbs/s1/s1.sqlite}\n",
                    SCHEMA + "sql: {builtin: conference}\n", "calls"),
    "sql.database": (SCHEMA + "sql: {database: dbs/s1/s1.sqlite}\n",
                     SCHEMA + "sql: {database: dbs/s2/s2.sqlite}\n", "calls"),
    "sql.db_id_column": (SCHEMA + "sql: {database: dbs, db_id_column: speaker}\n",
                         SCHEMA + "sql: {database: dbs, db_id_column: language}\n", "calls"),
    "sql.timeout_s": (RUNAWAY + "sql: {builtin: conference, timeout_s: 0.01}\n",
                      RUNAWAY + "sql: {builtin: conference, timeout_s: 0.02}\n", "scores"),
}  # fmt: skip


def test_every_config_key_has_a_case() -> None:
    assert schema_paths(EvalConfig) == set(CONFIG_CASES) | set(JUDGE_CASES) | set(AUDIO_JUDGE_CASES)


def test_every_task_key_has_a_case() -> None:
    assert schema_paths(TaskSpec) == set(TASK_CASES) | set(AUDIO_TASK_CASES) | set(JUDGE_TASK_CASES)


class _Observer:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp_path = tmp_path
        self.runs = 0
        self.backoff: list[float] = []
        self.hub_loads: list[tuple[Any, ...]] = []
        """``datasets.load_dataset`` calls of a run (Hub datasets)."""

        def spy(policy: RetryPolicy, attempt: int, retry_after: float | None = None) -> float:
            self.backoff.append(policy.base)
            return retry_after or 0.0

        monkeypatch.setattr(RetryPolicy, "delay", spy)

    def outcome(self, text: str, key: str) -> Any:
        self.runs += 1
        if "output_dir" not in text:
            text += f"output_dir: out{self.runs}\n"  # its own cache: nothing is a cache hit
        if "tasks_dirs" not in text:
            text += "tasks_dirs: [mytasks]\n"
        latency = 0.02 if key in ("peak", "errors") else 0.0
        pacing: set[str] = set()

        def reply(request: Any) -> str:  # and note the request pacing in force
            pacer = current_pacer()
            pacing.add(repr(getattr(pacer, "limits", None)))
            return "one two three s1"

        fakes = FakeEndpoints(
            default_latency=latency,
            fail_first=1 if "retries: " in text and "timeout" not in text else 0,
            reply=reply,
        )
        self.backoff.clear()
        self.hub_loads.clear()
        try:
            result = run_yaml(text, self.tmp_path, fakes)
        except ConfigError as exc:
            return {"error": type(exc).__name__}[key] if key == "error" else pytest.fail(str(exc))
        if key == "error":
            return None
        rows = result.run.rows()
        info = result.run.info()
        observed = {
            "scores": result.scores["tasks"],
            "aggregates": result.scores["aggregates"],
            "calls": sorted(
                (
                    tuple(
                        sorted(
                            (k, round(v, 3) if isinstance(v, float) else v) for k, v in c.items()
                        )
                    )
                    for c in fakes.calls
                ),
                key=repr,
            ),
            "peak": fakes.peak,
            "errors": sum(1 for r in rows if r["error"]),
            "backoff": list(self.backoff),
            "ids": sorted((r["task"], r["model"], r["id"]) for r in rows),
            "languages": sorted(r["language"] for r in rows),
            "audio": sorted(r["audio"] for r in rows),
            "row_scores": sorted(repr(r["scores"]) for r in rows),
            "output": result.run.path.parent.name,
            "description": {t: v["description"] for t, v in info["tasks"].items()},
            "task_info": {
                t: (v["licence"], v["size"], v["source_url"]) for t, v in info["tasks"].items()
            },
            "hub_loads": list(self.hub_loads),
            "pacing": sorted(pacing),
        }
        return observed[key]


@pytest.fixture
def observer(tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch) -> _Observer:
    mine = tasks_dir / "mine"
    (mine / "tiny_spk.yaml").write_text("extends: tiny\ncolumns: {reference: speaker}\n")
    lines = (mine / "data" / "manifest.jsonl").read_text().splitlines()
    (mine / "data" / "few.jsonl").write_text("\n".join(lines[:2]) + "\n")
    from .conftest import write_tiny_dataset

    write_tiny_dataset(mine / "data_csv", "manifest.csv")
    _write_turns_dataset(mine / "turns_data", mine / "data")
    _write_hf_dataset(mine / "hfd")
    _write_sql_fixtures(mine)
    if (mine / "hfd").is_dir():  # a second local copy of the Hub task tiny_hub
        shutil.copytree(mine / "hfd", mine / "hfd_copy")
    (mine / "tiny_hub.yaml").write_text(
        "dataset: {hub: vox-test/tiny, config: default, split: test}\nmetrics: [wer]\n"
    )
    return _Observer(tmp_path, monkeypatch)


def _write_sql_fixtures(mine: Path) -> None:
    """For the sql keys: a manifest whose column q is a query that never ends, and a database
    per speaker and per language, each with a table of its own name."""
    rows = [
        json.loads(line) for line in (mine / "data" / "manifest.jsonl").read_text().splitlines()
    ]
    runaway = (
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    )
    (mine / "data" / "sql.jsonl").write_text(
        "".join(json.dumps({**r, "q": runaway}) + "\n" for r in rows)
    )
    for name in ("s1", "s2", "en", "fr"):
        (mine / "dbs" / name).mkdir(parents=True)
        conn = sqlite3.connect(mine / "dbs" / name / f"{name}.sqlite")
        conn.execute(f"CREATE TABLE t_{name} (x INTEGER)")
        conn.close()


def _write_turns_dataset(folder: Path, tiny: Path) -> None:
    """Two-turn records on the tiny clips: turn lists of audio, text and reference replies."""
    folder.mkdir()
    rows = [json.loads(line) for line in (tiny / "manifest.jsonl").read_text().splitlines()]
    with (folder / "manifest.jsonl").open("w") as out:
        for i, row in enumerate(rows[:3]):
            clips = [str(tiny / row["audio"]), str(tiny / rows[-1 - i]["audio"])]
            out.write(
                json.dumps(
                    {
                        **row,
                        "audio": str(tiny / row["audio"]),
                        "t_audio": clips,
                        "t_audio_rev": clips[::-1],
                        "t_text": [f"first {i}", None],
                        "t_replies": ["noted", row["reference"]],
                        "t_replies_alt": ["understood", row["reference"]],
                    }
                )
                + "\n"
            )


def _offline_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loads: list[Any]) -> None:
    """The Hub off, and ``vox-test/tiny`` (configs default and fr) in a cache of the test's own."""
    try:
        import datasets
        import huggingface_hub.constants
    except ImportError:
        return
    from voxbench.tasks.datasets.hf import load_hub_dataset

    from .test_hf import _dataset, prepare_hub_cache

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    load_hub_dataset.cache_clear()
    table = _dataset().rename_columns({"sentence": "reference", "locale": "language"})
    prepare_hub_cache("vox-test/tiny", "default", {"test": table})
    prepare_hub_cache("vox-test/tiny", "fr", {"test": table.select([0, 1])})
    real = datasets.load_dataset

    def spy(*args: Any, **kwargs: Any) -> Any:
        loads.append((args, sorted(kwargs.items())))
        return real(*args, **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", spy)


def _write_hf_dataset(folder: Path) -> None:
    """A ``save_to_disk`` folder with splits test (3 rows) and train (1 row), when installed."""
    try:
        import datasets
    except ImportError:
        return
    from .test_hf import _dataset

    table = _dataset().rename_columns({"sentence": "reference", "locale": "language"})
    datasets.DatasetDict({"test": table, "train": table.select([0])}).save_to_disk(str(folder))


@pytest.mark.parametrize("path", sorted(CONFIG_CASES))
def test_config_key_is_effective(path: str, observer: _Observer) -> None:
    a, b, key = CONFIG_CASES[path]
    if "dataset_dirs" in a:
        pytest.importorskip("datasets")
    assert observer.outcome(a, key) != observer.outcome(b, key)


@pytest.mark.parametrize("path", sorted(TASK_CASES))
def test_task_key_is_effective(
    path: str, observer: _Observer, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, key = TASK_CASES[path]
    if "hf_disk" in a + b or "hub" in a + b:
        pytest.importorskip("datasets")
    if "hub" in a + b:
        _offline_hub(observer.tmp_path, monkeypatch, observer.hub_loads)
    outcomes = []
    for extra in (a, b):
        if "dataset:" in extra and "metrics:" in extra:
            task = extra  # a key given twice is an error: the case brings both
        elif "dataset:" in extra:
            task = "metrics: [wer]\n" + extra
        elif "metrics:" in extra:
            task = "dataset: {path: data}\n" + extra
        else:
            task = BASE_TASK + extra
        (tasks_dir / "mine" / "probe.yaml").write_text(task)
        outcomes.append(observer.outcome(M + "tasks: [probe]\n", key))
    assert outcomes[0] != outcomes[1]


# -- the judge block: each key against fake judges on the fake OpenAI-compatible server --------

J = "judge: {model: openai-compatible/judge-1, base_url: '{a}', backoff_base_s: 0{extra}}\n"
QA = "tasks: [qa]\n"
JUDGE_CASES: dict[str, tuple[str, str, str]] = {
    "judge": (M + QA + J, M + QA, "error"),
    "judge.model": (M + QA + J, M + QA + J.replace("judge-1", "judge-2"), "judge_calls"),
    "judge.base_url": (M + QA + J, M + QA + J.replace("{a}", "{b}"), "judge_calls"),
    "judge.api_key": (
        M + QA + J.replace("{extra}", ", api_key: k1{extra}"),
        M + QA + J.replace("{extra}", ", api_key: k2{extra}"),
        "judge_calls",
    ),
    "judge.max_concurrency": (
        M + QA + J.replace("{extra}", ", max_concurrency: 1"),
        M + QA + J.replace("{extra}", ", max_concurrency: 3"),
        "judge_peak",
    ),
    "judge.timeout_s": (M + QA + J, M + QA + J.replace("{extra}", ", timeout_s: 0.001"), "undecided"),
    "judge.retries": (
        M + QA + J.replace("{extra}", ", retries: 0"),
        M + QA + J.replace("{extra}", ", retries: 2"),
        "undecided",
    ),
    "judge.backoff_base_s": (M + QA + J, M + QA + J.replace("0{extra}", "0.001"), "backoff"),
    "judge.rubric": (
        M + QA + J.replace("{extra}", ", rubric: Exact words only."),
        M + QA + J.replace("{extra}", ", rubric: Meaning only."),
        "judge_calls",
    ),
}  # fmt: skip


def test_every_judge_key_has_a_case() -> None:
    assert {p for p in schema_paths(EvalConfig) if p.split(".")[0] == "judge"} == set(JUDGE_CASES)


def _judge_outcome(text: str, key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:

    from .fake_judge import GullibleJudge, TrackingServer
    from .test_http import serving

    backoff: list[float] = []

    def spy(policy: RetryPolicy, attempt: int, retry_after: float | None = None) -> float:
        backoff.append(policy.base)
        return retry_after or 0.0

    monkeypatch.setattr(RetryPolicy, "delay", spy)
    # A fresh pair of judges per run: the first request fails (500) and one record's first
    # reply is unusable, so retries and backoff have something to do.
    servers = [
        TrackingServer(GullibleJudge({"one two three": 1}), faults=["500@1"], ttfb_ms=20)
        for _ in "ab"
    ]
    with serving(servers[0]) as a, serving(servers[1]) as b:
        text = text.replace("{extra}", "").replace("{a}", a.url).replace("{b}", b.url)
        text += f"tasks_dirs: [mytasks]\noutput_dir: out_{len(list(tmp_path.glob('out_*')))}\n"
        try:
            result = run_yaml(text, tmp_path, FakeEndpoints(reply=lambda r: r.reference))
        except ConfigError as exc:
            return type(exc).__name__ if key == "error" else pytest.fail(str(exc))
        calls = [
            (name, r.headers.get("authorization"), json.dumps(r.json(), sort_keys=True))
            for name, server in (("a", a), ("b", b))
            for r in server.requests
        ]
    observed = {
        "error": None,
        "judge_calls": sorted(calls),
        "judge_peak": servers[0].peak,
        "undecided": result.scores["tasks"]["qa"]["m"]["metrics"]["llm_judge"]["undecided"],
        "backoff": backoff,
    }
    return observed[key]


@pytest.mark.parametrize("path", sorted(JUDGE_CASES))
def test_judge_key_is_effective(
    path: str, tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tasks_dir / "mine" / "qa.yaml").write_text("extends: tiny\nmetrics: [llm_judge]\n")
    a, b, key = JUDGE_CASES[path]
    first = _judge_outcome(a, key, tmp_path, monkeypatch)
    assert first != _judge_outcome(b, key, tmp_path, monkeypatch)


JUDGE_TASK_CASES: dict[str, tuple[str, str, str]] = {
    # The question column is shown to the judge (the tiny set's speaker column stands in).
    "columns.question": ("", "columns: {question: speaker}\n", "judge_calls"),
}
"""Task keys whose effect is on what the judge is asked."""


@pytest.mark.parametrize("path", sorted(JUDGE_TASK_CASES))
def test_task_key_changes_what_the_judge_sees(
    path: str, tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, key = JUDGE_TASK_CASES[path]
    outcomes = []
    for extra in (a, b):
        (tasks_dir / "mine" / "qa.yaml").write_text("extends: tiny\nmetrics: [llm_judge]\n" + extra)
        outcomes.append(_judge_outcome(M + QA + J, key, tmp_path, monkeypatch))
    assert outcomes[0] != outcomes[1]


# -- the audio judge: spoken answers heard by the fake audio judge -----------------------------

MS = "models: [{name: m, model: vllm/q, output_audio: {voice: alloy}}]\n"
AJ = "audio_judge: {model: openai/gpt-4o-audio-preview, base_url: '{a}'{extra}}\n"
CHEER = "audio_judge: {rubric: emotion, options: {target_emotion: cheerful}}\n"
AUDIO_JUDGE_CASES: dict[str, tuple[str, str, str]] = {
    "audio_judge": (MS + AJ, MS, "error"),
    "audio_judge.model": (
        MS + AJ, MS + AJ.replace("gpt-4o-audio-preview", "gpt-audio"), "judge_calls"
    ),
    "audio_judge.base_url": (MS + AJ, MS + AJ.replace("{a}", "{b}"), "judge_calls"),
    "audio_judge.max_concurrency": (
        MS + AJ.replace("{extra}", ", max_concurrency: 1"),
        MS + AJ.replace("{extra}", ", max_concurrency: 3"),
        "judge_peak",
    ),
    "audio_judge.samples": (MS + AJ, MS + AJ.replace("{extra}", ", samples: 2"), "judge_calls"),
}  # fmt: skip
# Task file cases: (task A, task B, what differs), each run with ``MS + AJ``.
AUDIO_TASK_CASES: dict[str, tuple[str, str, str]] = {
    "audio_judge": (CHEER, "", "error"),
    "audio_judge.rubric": (CHEER, "audio_judge: {rubric: pace}\n", "judge_calls"),
    "audio_judge.options": (CHEER, CHEER.replace("cheerful", "calm"), "judge_calls"),
}


def _audio_judge_outcome(config: str, task: str, key: str, tasks_dir: Path, tmp_path: Path) -> Any:
    from voxbench.tasks.engine.models import Spoken
    from voxbench.testing.audio_judge import ScriptedAudioJudge, form_answer
    from voxbench.testing.openai_http import spoken_wav

    from .fake_judge import TrackingServer
    from .test_http import serving

    (tasks_dir / "mine" / "said.yaml").write_text(
        "extends: tiny\nmetrics: [llm_judge_audio]\n" + task
    )
    wav = spoken_wav("hello there")
    servers = [
        TrackingServer(ScriptedAudioJudge([form_answer({"emotion": 4})]), ttfb_ms=20) for _ in "ab"
    ]
    with serving(servers[0]) as a, serving(servers[1]) as b:
        text = config.replace("{extra}", "").replace("{a}", a.url).replace("{b}", b.url)
        text += "tasks: [said]\ntasks_dirs: [mytasks]\n"
        text += f"output_dir: out_{len(list(tmp_path.glob('out_*')))}\n"
        try:
            run_yaml(text, tmp_path, FakeEndpoints(reply=lambda r: Spoken(r.reference, wav)))
        except ConfigError as exc:
            return type(exc).__name__ if key == "error" else pytest.fail(str(exc))
        calls = [
            (name, json.dumps(r.json()["model"]), json.dumps(r.json()["messages"][0]))
            for name, server in (("a", a), ("b", b))
            for r in server.requests
        ]
    observed = {"error": None, "judge_calls": sorted(calls), "judge_peak": servers[0].peak}
    return observed[key]


@pytest.mark.parametrize("path", sorted(AUDIO_JUDGE_CASES))
def test_audio_judge_key_is_effective(
    path: str, tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    a, b, key = AUDIO_JUDGE_CASES[path]
    first = _audio_judge_outcome(a, CHEER, key, tasks_dir, tmp_path)
    assert first != _audio_judge_outcome(b, CHEER, key, tasks_dir, tmp_path)


@pytest.mark.parametrize("path", sorted(AUDIO_TASK_CASES))
def test_audio_task_key_is_effective(
    path: str, tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    a, b, key = AUDIO_TASK_CASES[path]
    first = _audio_judge_outcome(MS + AJ, a, key, tasks_dir, tmp_path)
    assert first != _audio_judge_outcome(MS + AJ, b, key, tasks_dir, tmp_path)
