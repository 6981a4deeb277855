"""AU-Harness run configs as their README and shipped files write them (issue 30 item 7), and a
user's own AU-Harness task file (issue 34 item 6), through ``voxbench tasks import-config``:
each result is a runnable ``eval.yaml`` (or task file) — its tasks, metrics and judge resolve.
With ``AU_HARNESS_CHECKOUT`` set, every file under its ``run_configs/`` is checked too."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from tests.cli_invoke import invoke
from voxbench.metrics.registry import METRICS
from voxbench.tasks.config import EvalConfig, parse_config
from voxbench.tasks.spec import TaskRegistry

from .test_au_harness_tasks import write_au_tasks

# The README's spelling (dataset_metric, string pairs, max_gen_tokens) and the judge block's
# name before AU-Harness renamed it (judge_properties), as the seed's HEAR-Kit config has them.
README_SHAPED = """\
dataset_metric:
  - ["librispeech_test_other", "word_error_rate"]
  - "[covost2_de_en, bleu]"
  - ["spoken_squad_test", "llm_judge_binary"]
judge_properties:
  judge_concurrency: 4
  judge_model: gpt-4o-mini
  judge_type: openai
  judge_api_endpoint: ${JUDGE_URL}
  judge_api_key: ${JUDGE_KEY}
generation_params_override:
  - task: librispeech_test_other
    generation_params: {temperature: 0.0, max_gen_tokens: 300}
models:
  - {name: qwen, inference_type: vllm, url: "http://gpu:8000/v1", model: qwen-omni}
"""

# AU-Harness's shipped run configs: a dataset folder as the task, <PLACEHOLDER> values.
SHIPPED_SHAPED = """\
task_metric:
  - ["librispeech", "word_error_rate"]
  - ["covost2", "bleu"]
  - ["mu_chomusic_test", "llm_judge_binary"]
judge_settings:
  judge_model: <JUDGE_MODEL_NAME>
  judge_type: <JUDGE_MODEL_TYPE>
  judge_api_endpoint: <JUDGE_MODEL_ENDPOINT>
  judge_api_key: <JUDGE_MODEL_KEY>
models:
  - name: <MODEL_NAME>
    inference_type: "vllm"
    url: <ENDPOINT_URL>
    model: <MODEL_NAME>
    auth_token: <AUTH_TOKEN>
    batch_size: 5
aggregate:
  - ["word_error_rate", ["librispeech"]]
"""


def _convert(monkeypatch, capsys, tmp_path: Path, text: str, *extra: str) -> tuple[str, str]:
    (tmp_path / "au.yaml").write_text(text)
    code, out, err = invoke(
        monkeypatch, capsys, "tasks", "import-config", "au-harness", "au.yaml", "--out",
        "eval.yaml", *extra,
    )  # fmt: skip
    assert code == 0, out + err
    return (tmp_path / "eval.yaml").read_text(), out


def assert_runnable(text: str, monkeypatch, tmp_path: Path) -> EvalConfig:
    """The eval.yaml loads (every ${VAR} set) and its tasks, metrics and judge resolve."""
    for var in set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)", text)):
        monkeypatch.setenv(var, "value")
    config = parse_config(text, file=tmp_path / "eval.yaml")
    registry = TaskRegistry([tmp_path / d for d in config.tasks_dirs])
    judged = False
    for item in config.tasks:
        name = item if isinstance(item, str) else item.name
        chosen = None if isinstance(item, str) else item.metrics
        for task in registry.expand(name, field="tasks"):
            for metric in chosen or registry.get(task).spec.metrics:
                judged |= METRICS[metric].judged
    assert config.judge is not None or not judged
    return config


def test_the_readme_shaped_config_imports_runnable(monkeypatch, capsys, tmp_path) -> None:
    text, report = _convert(monkeypatch, capsys, tmp_path, README_SHAPED)
    config = yaml.safe_load(text)
    assert config["tasks"] == [
        {"name": "librispeech_test_other", "metrics": ["wer"]},
        {"name": "covost2_de_en", "metrics": ["bleu"]},
        {"name": "spoken_squad", "metrics": ["llm_judge"]},
    ]
    assert config["judge"] == {
        "model": "azure-openai/gpt-4o-mini",
        "max_concurrency": 4,
        "base_url": "${JUDGE_URL}",
        "api_key": "${JUDGE_KEY}",
    }
    assert config["overrides"] == [
        {"task": "librispeech_test_other", "generation": {"temperature": 0.0, "max_tokens": 300}}
    ]
    assert "dataset_metric: converted as task_metric" in report
    assert "judge_properties: converted as judge_settings" in report
    assert "max_gen_tokens: the README's name" in report
    assert_runnable(text, monkeypatch, tmp_path)


def test_the_shipped_shape_imports_runnable(monkeypatch, capsys, tmp_path) -> None:
    text, report = _convert(monkeypatch, capsys, tmp_path, SHIPPED_SHAPED)
    config = yaml.safe_load(text)
    names = [t if isinstance(t, str) else t["name"] for t in config["tasks"]]
    assert {"librispeech_test_clean", "librispeech_test_other", "covost2_de_en"} <= set(names)
    assert "mu_chomusic" in names
    assert config["models"][0] == {
        "name": "model_name",
        "model": "vllm/${MODEL_NAME}",
        "api": "chat",
        "base_url": "${ENDPOINT_URL}",
        "api_key": "${AUTH_TOKEN}",
        "max_concurrency": 5,
    }
    assert config["judge"]["model"] == "vllm/${JUDGE_MODEL_NAME}"
    assert config["aggregate"][0]["tasks"] == ["librispeech_test_clean", "librispeech_test_other"]
    assert "<MODEL_NAME> → ${MODEL_NAME}" in report
    assert_runnable(text, monkeypatch, tmp_path)


def test_with_the_au_harness_tasks_its_folders_are_its_groups(
    monkeypatch, capsys, tmp_path
) -> None:
    tasks = write_au_tasks(tmp_path)
    text, _ = _convert(
        monkeypatch, capsys, tmp_path, SHIPPED_SHAPED.replace("librispeech", "fleurs"),
        "--tasks-dir", str(tasks),
    )  # fmt: skip
    config = assert_runnable(text, monkeypatch, tmp_path)
    chosen = {t if isinstance(t, str) else t.name for t in config.tasks}
    assert {"fleurs", "mu_chomusic_test"} <= chosen  # AU-Harness's own task and folder


def test_a_users_au_harness_task_file_converts(monkeypatch, capsys, tmp_path) -> None:
    tasks = write_au_tasks(tmp_path)
    leaf = tasks / "spoken_language_understanding/translation/covost2/covost2_zh-CN_en.yaml"
    mine = tmp_path / "mine"
    mine.mkdir()
    code, out, err = invoke(
        monkeypatch, capsys, "tasks", "import-config", "au-harness", str(leaf), "--out", str(mine)
    )
    assert code == 0, out + err
    written = mine / "covost2_zh-CN_en.yaml"
    assert "wrote" in out and written.is_file()
    assert "#   Behaves differently in voxbench (" in written.read_text()
    entry = TaskRegistry([mine]).get("covost2_zh-CN_en")
    direct = TaskRegistry([tasks]).get("covost2_zh-CN_en")
    assert entry.spec == direct.spec  # the same task as reading the AU-Harness folder
    # Without --out: the task on stdout, the report on stderr.
    code, out, err = invoke(monkeypatch, capsys, "tasks", "import-config", "au-harness", str(leaf))
    assert code == 0 and yaml.safe_load(out)["dataset"]["hub"] == "fixie-ai/covost2"
    assert "Task covost2_zh-CN_en → covost2_zh-CN_en.yaml" in err


def test_a_task_file_with_no_equivalent_says_why(monkeypatch, capsys, tmp_path) -> None:
    tasks = write_au_tasks(tmp_path)
    leaf = tasks / "spoken_language_reasoning/gsm8k/gsm8k_text.yaml"
    code, _, err = invoke(monkeypatch, capsys, "tasks", "import-config", "au-harness", str(leaf))
    assert code == 2 and "a text-only variant" in err and "gsm8k_text.yaml" in err


NOT_RUNNABLE: set[str] = set()
"""None: mtbench.yaml maps to the registry task mtbench_audio (its manifest made once)."""


@pytest.mark.skipif(
    not os.environ.get("AU_HARNESS_CHECKOUT"), reason="AU_HARNESS_CHECKOUT is not set"
)
def test_every_shipped_run_config_imports_runnable(monkeypatch, capsys, tmp_path) -> None:
    checkout = Path(os.environ["AU_HARNESS_CHECKOUT"])
    for extra in ((), ("--tasks-dir", str(checkout / "tasks"))):
        for file in sorted((checkout / "run_configs").glob("*.yaml")):
            if file.name in NOT_RUNNABLE:
                continue
            text, _ = _convert(monkeypatch, capsys, tmp_path, file.read_text(), *extra)
            assert_runnable(text, monkeypatch, tmp_path)
