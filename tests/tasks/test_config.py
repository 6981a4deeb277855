"""The eval config: errors name the file, the key path and the allowed keys; ${ENV} works."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.core.errors import ConfigError
from voxbench.tasks.config import load_config, parse_config

BASE = "models: [{name: m, model: local/oracle}]\ntasks: [all]\n"


def _error(text: str, file: str = "eval.yaml") -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, file=file)
    return str(info.value)


def test_unknown_nested_key_names_file_path_and_allowed_keys() -> None:
    message = _error("models: [{name: m, model: local/oracle, max_concurency: 3}]\ntasks: [all]\n")
    assert message.startswith("eval.yaml: ")
    assert "models[0].max_concurency: unknown key" in message
    assert "allowed at models[0]:" in message and "max_concurrency" in message


def test_key_in_the_wrong_place_is_an_error() -> None:
    # max_concurrency belongs to a model, not to the top level.
    message = _error(BASE + "max_concurrency: 8\n")
    assert "max_concurrency: unknown key" in message
    assert (
        "allowed at the top level: aggregate, audio_judge, dataset_dirs, filters, judge, models"
        in message
    )


def test_unknown_key_inside_a_task_selection_and_filters() -> None:
    message = _error(
        "models: [{name: m, model: local/oracle}]\ntasks: [{name: asr, filters: {num_sample: 3}}]\n"
    )
    assert "tasks[0].filters.num_sample: unknown key" in message
    assert "num_samples" in message


def test_wrong_type_names_the_path() -> None:
    message = _error("models: [{name: m, model: local/oracle, retries: many}]\ntasks: [all]\n")
    assert "models[0].retries" in message and "integer" in message


def test_env_substitution_and_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_URL", "http://127.0.0.1:9/v1")
    config = parse_config(
        "models: [{name: m, model: vllm/q, base_url: '${MY_URL}', api_key: '${NOPE:-none}'}]\n"
        "tasks: [all]\n",
        file="eval.yaml",
    )
    assert config.models[0].base_url == "http://127.0.0.1:9/v1"
    assert config.models[0].api_key == "none"


def test_missing_env_var_is_an_error_naming_the_key() -> None:
    message = _error(
        "models: [{name: m, model: vllm/q, api_key: '${UNSET_KEY_VAR}'}]\ntasks: [all]\n"
    )
    assert "models[0].api_key" in message and "UNSET_KEY_VAR is not set" in message


def test_duplicate_model_names_and_endpoints_with_base_url() -> None:
    assert "unique" in _error(
        "models: [{name: m, model: local/oracle}, {name: m, model: local/oracle}]\ntasks: [all]\n"
    )
    assert "per endpoint" in _error(
        "models: [{name: m, model: vllm/q, base_url: 'http://x', endpoints: [{base_url: 'http://y'}]}]\n"
        "tasks: [all]\n"
    )


def test_load_config_keeps_raw_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_KEY_FOR_TEST", "sk-very-secret")
    path = tmp_path / "eval.yaml"
    path.write_text(
        "models: [{name: m, model: vllm/q, api_key: '${SECRET_KEY_FOR_TEST}'}]\ntasks: [all]\n"
    )
    config, text = load_config(path)
    assert config.models[0].api_key == "sk-very-secret"
    assert "sk-very-secret" not in text and "${SECRET_KEY_FOR_TEST}" in text


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope.yaml"):
        load_config(tmp_path / "nope.yaml")


def test_a_key_given_twice_is_an_error_naming_file_line_and_key(tmp_path: Path) -> None:
    # PyYAML alone keeps the last value: the run would evaluate only the second task list.
    file = tmp_path / "eval.yaml"
    file.write_text(BASE + "tasks: [builtin_en_asr]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(file)
    message = str(info.value)
    assert str(file) in message and "tasks" in message
    assert "line 3 repeats line 2" in message
