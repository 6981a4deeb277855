"""``voxbench tasks import-config au-harness``: AU-Harness-shaped configs written here, converted,
the output checked key by key, the report line by line, and the result loaded and planned."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from tests.cli_invoke import invoke
from tests.tasks.conftest import write_tiny_dataset
from voxbench.importers import au_harness_names as names
from voxbench.metrics.registry import METRICS
from voxbench.tasks import spec
from voxbench.tasks.config import parse_config
from voxbench.tasks.plan import build_plan

LITERAL = "sk-live-do-not-write-me"

FULL = f"""\
task_metric:
  - ["librispeech_test_clean", "word_error_rate"]
  - ["emotion_recognition", "all"]
  - ["covost2_zh-CN_en", "bleu"]
  - ["covost2_zh-CN_en", "comet"]
  - ["meld_emotion_test", "llm_judge_binary"]
  - ["gsm8k_text", "gsm8k_exact_match"]
  - ["earnings21", "diarization_metrics"]
  - ["mtbench_audio", "mt_bench_llm_judge"]
  - ["voicebench_ifeval_audio", "instruction_following"]
aggregate:
  - ["word_error_rate", ["librispeech_test_clean", "earnings21"]]
  - ["bleu", ["music_understanding"]]
filter:
  num_samples: 2
  length_filter: [0.0, 30.0]
filters:
  language: en
  accented: true
judge_settings:
  judge_concurrency: 8
  judge_model: gpt-4o-mini
  judge_type: openai
  judge_api_version: ${{API_VERSION}}
  judge_api_endpoint: ${{JUDGE_URL}}
  judge_api_key: {LITERAL}
  judge_temperature: 0.1
  judge_prompt_model_override: gpt-4o-mini-enhanced
logging:
  log_file: old.log
models:
  - name: qwen-a
    inference_type: vllm
    url: http://gpu1:8000/v1
    model: qwen-omni
    auth_token: "Bearer ${{QWEN_KEY}}"
    batch_size: 16
    retry_attempts: 3
    timeout: 60
    chunk_size: 30
    delay: 100
  - name: qwen-b
    inference_type: vllm
    url: $GPU2_URL
    model: qwen-omni
    auth_token: {LITERAL}
    batch_size: 8
  - name: azure-4o
    inference_type: openai
    url: ${{AZURE_URL}}
    model: gpt-4o-audio-preview
    auth_token: ${{AZURE_KEY}}
    api_version: "2025-01-01"
    chunk_size: 40
  - name: gem
    inference_type: gemini
    model: google/gemini-2.5-flash
    location: us-central1
    project_id: my-project
    reasoning_effort: medium
  - name: whisper
    inference_type: transcription
    url: http://asr:9000/v1
    model: whisper-large-3
    postprocessor: []
  - name: local-hf
    inference_type: hf_pipeline
    model: some/model
generation_params_override:
  - model: qwen-omni
    task: librispeech_test_clean
    generation_params: {{temperature: 0.0, max_completion_tokens: 128, top_p: 0.9}}
prompt_overrides:
  user_prompt:
    - task: librispeech_test_clean
      prompt: "Transcribe this {{{{ language }}}} clip."
temperature_overrides:
  - model: azure-4o
    temperature: 0.3
dataset_metric: [["librispeech_test_clean", "word_error_rate"]]
results_dir: somewhere
"""

TASK = """\
description: {name}
dataset: {{path: {data}}}
metrics: [{metrics}]
"""


@pytest.fixture
def no_builtin_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty built-in registry: what maps is decided by the tests' own task folders, not
    by whichever catalogue tasks exist when the test runs."""
    empty = tmp_path / "no-builtin-tasks"
    empty.mkdir()
    monkeypatch.setattr(spec, "REGISTRY_DIR", empty)


@pytest.fixture
def registry(tmp_path: Path, no_builtin_tasks: None) -> Path:
    """A user registry holding tasks under our names for some AU-Harness tasks."""
    root = tmp_path / "tasks"
    data = write_tiny_dataset(root / "data")
    for rel, metrics in (
        ("asr/librispeech_test_clean.yaml", "wer"),
        ("long_form_asr/earnings21.yaml", "wer"),
        ("paralinguistics/emotion/meld_emotion.yaml", "exact_match"),
        ("translation/covost2_zh_cn_en.yaml", "bleu, chrf"),
    ):
        file = root / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(TASK.format(name=file.stem, data=data, metrics=metrics))
    return root


def _import(monkeypatch, capsys, tmp_path: Path, text: str, *extra: str) -> tuple[int, str, str]:
    (tmp_path / "au.yaml").write_text(text)
    return invoke(monkeypatch, capsys, "tasks", "import-config", "au-harness", "au.yaml", *extra)


def _section(out: str, title: str) -> str:
    """The lines of one report section."""
    start = out.index(title)
    rest = out[start:].split("\n", 1)[1]
    lines = []
    for line in rest.splitlines():
        if not line.startswith("  "):
            break
        lines.append(line.strip())
    return "\n".join(lines)


def test_a_full_config_converts_key_by_key(monkeypatch, capsys, tmp_path, registry) -> None:
    code, out, err = _import(
        monkeypatch, capsys, tmp_path, FULL, "--out", "eval.yaml", "--tasks-dir", str(registry)
    )
    assert code == 0, out + err
    text = (tmp_path / "eval.yaml").read_text()
    assert LITERAL not in text and LITERAL not in out + err
    config = yaml.safe_load(text)

    models = {m["name"]: m for m in config["models"]}
    assert list(models) == ["qwen-omni", "azure-4o", "gem", "whisper"]
    assert models["qwen-omni"] == {
        "name": "qwen-omni",
        "model": "vllm/qwen-omni",
        "api": "chat",
        "retries": 2,
        "timeout_s": 60.0,
        "endpoints": [
            {"base_url": "http://gpu1:8000/v1", "api_key": "${QWEN_KEY}", "max_concurrency": 16},
            {
                "base_url": "${GPU2_URL}",
                "api_key": "${AU_HARNESS_TOKEN_QWEN_B}",
                "max_concurrency": 8,
            },
        ],
    }
    assert models["azure-4o"] == {
        "name": "azure-4o",
        "model": "azure-openai/gpt-4o-audio-preview",
        "api": "chat",
        "base_url": "${AZURE_URL}",
        "api_key": "${AZURE_KEY}",
    }
    assert models["gem"] == {"name": "gem", "model": "gemini/gemini-2.5-flash", "api": "chat"}
    assert models["whisper"] == {
        "name": "whisper",
        "model": "openai/whisper-large-3",
        "api": "transcription",
        "base_url": "http://asr:9000/v1",
    }

    diarisation = sorted(m for m in ("cpwer", "wder") if m in METRICS)
    expected_tasks = [
        {"name": "librispeech_test_clean", "metrics": ["wer"]},
        "emotion",
        {"name": "covost2_zh_cn_en", "metrics": ["bleu", "comet"]},
        {"name": "meld_emotion", "metrics": ["llm_judge"]},
    ]
    if diarisation:
        expected_tasks.append({"name": "earnings21", "metrics": diarisation})
    assert config["tasks"] == expected_tasks
    assert config["filters"] == {"num_samples": 2, "max_duration_s": 30.0, "language": ["en"]}
    assert config["aggregate"] == [
        {
            "name": "wer - librispeech_test_clean, earnings21",
            "metric": "wer",
            "tasks": ["librispeech_test_clean", "earnings21"],
        }
    ]
    assert config["overrides"] == [
        {
            "task": "librispeech_test_clean",
            "model": "qwen-omni",
            "generation": {"temperature": 0.0, "max_tokens": 128},
        },
        {"task": "librispeech_test_clean", "prompt": {"user": "Transcribe this {language} clip."}},
        {"model": "azure-4o", "generation": {"temperature": 0.3}},
    ]
    assert config["judge"] == {
        "model": "azure-openai/gpt-4o-mini",
        "max_concurrency": 8,
        "base_url": "${JUDGE_URL}",
        "api_key": "${AU_HARNESS_TOKEN_JUDGE}",
    }
    assert config["tasks_dirs"] == ["tasks"]

    mapped = _section(out, "Mapped (")
    for line in (
        "models[0], models[1] → one model qwen-omni with 2 endpoints",
        "models[0].retry_attempts → models[0].retries: 2",
        "models[0].batch_size → models[0].max_concurrency",
        "models[1].auth_token → models[1].api_key (${AU_HARNESS_TOKEN_QWEN_B})",
        "models[2].model + inference_type → models[2].model azure-openai/gpt-4o-audio-preview",
        "task_metric[1] [emotion_recognition, all] → tasks: emotion (its own metrics)",
        "filter.num_samples → filters.num_samples",
        "judge_settings.judge_concurrency → judge.max_concurrency",
        "prompt_overrides.user_prompt[0] → overrides[].prompt.user (flagged",
    ):
        assert line in mapped, line
    unmapped = _section(out, "Not mapped (")
    for line in (
        "models[0].chunk_size: 30 s per chunk",
        "models[2].api_version: set AZURE_OPENAI_API_VERSION",
        "models[3].location: Vertex AI",
        "models[3].reasoning_effort:",
        "models[5].inference_type: 'hf_pipeline' is not one of",
        "task_metric[5] gsm8k_text: a text-only variant",
        "task_metric[7] mtbench_audio: no equivalent task or group in the registry",
        "task_metric[8] voicebench_ifeval_audio: no equivalent task or group in the registry "
        "(looked for: voicebench_ifeval)",
        "aggregate[1] music_understanding: no equivalent",
        "filters.accented: AU-Harness chose tasks by their accented flag",
        "judge_settings.judge_temperature: voxbench's judge always asks at temperature 0",
        "generation_params_override[0].generation_params.top_p:",
        "logging.log_file: voxbench writes each run to output_dir",
        "results_dir: not a key AU-Harness reads",
    ):
        assert line in unmapped, line
    if not diarisation:
        assert "task_metric[6] diarization_metrics: → wder, cpwer, which this voxbench" in unmapped
    ignored = _section(out, "Ignored by AU-Harness itself (")
    for line in (
        "models[0].delay: documented as a pause before each call; AU-Harness never used it",
        "models[4].postprocessor: read by AU-Harness, never used",
        "filter.length_filter: never applied",
        "judge_settings.judge_prompt_model_override: never applied",
        "prompt_overrides: never applied",
        "temperature_overrides: validated only, never used",
        "dataset_metric: the name AU-Harness's README used",
        "aggregate: AU-Harness looked aggregates up by each model's `model` string while scores "
        "were keyed by `name`: for azure-4o, gem, whisper, local-hf its runs never showed them",
    ):
        assert line in ignored, line
    notes = _section(out, "Behaves differently in voxbench (")
    for line in (
        "AU-Harness took the FIRST N records; voxbench draws a seeded random sample",
        "set AU_HARNESS_TOKEN_QWEN_B in the environment",
        "set AU_HARNESS_TOKEN_JUDGE in the environment",
        "generation_params_override: AU-Harness REPLACED the task's whole generation params",
        "matched models by `model`, not `name`",
        "group emotion_recognition → emotion",
    ):
        assert line in notes, line
    # The report is kept in the file too, as comments.
    assert "#   Ignored by AU-Harness itself (" in text

    # It loads with our schema and plans against the registry (env references resolved).
    for var in ("QWEN_KEY", "GPU2_URL", "AZURE_URL", "AZURE_KEY", "JUDGE_URL"):
        monkeypatch.setenv(var, f"value-of-{var.lower()}")
    monkeypatch.setenv("GPU2_URL", "http://gpu2:8000/v1")
    monkeypatch.setenv("AU_HARNESS_TOKEN_QWEN_B", "k")
    monkeypatch.setenv("AU_HARNESS_TOKEN_JUDGE", "k")
    parsed = parse_config(text, file=tmp_path / "eval.yaml")
    assert parsed.models[0].pool()[1].base_url == "http://gpu2:8000/v1"
    # comet's optional extra and checkpoint are the user's to bring; the plan is checked here.
    monkeypatch.setitem(METRICS, "comet", dataclasses.replace(METRICS["comet"], prerequisite=None))
    plan = build_plan(parsed, base_dir=tmp_path)
    jobs = {(j.task.name, j.model.name): j for j in plan.jobs}
    clean = jobs[("librispeech_test_clean", "qwen-omni")]
    assert clean.metrics == ["wer"] and len(clean.records) == 2
    assert all(r.language == "en" for r in clean.records)
    assert clean.generation.max_tokens == 128
    assert clean.prompt.user == "Transcribe this {language} clip."
    assert jobs[("meld_emotion", "azure-4o")].generation.temperature == 0.3


def test_stdout_carries_the_yaml_and_stderr_the_report(monkeypatch, capsys, tmp_path) -> None:
    config = """\
task_metric:
  - ["asr", "all"]
  - ["tasks", "word_error_rate"]
models:
  - {name: m, inference_type: vllm, url: "http://h:1/v1", model: m, auth_token: ""}
"""
    code, out, err = _import(monkeypatch, capsys, tmp_path, config)
    assert code == 0, err
    data = yaml.safe_load(out)
    assert data == {
        "models": [{"name": "m", "model": "vllm/m", "api": "chat", "base_url": "http://h:1/v1"}],
        "tasks": ["asr", {"name": "all", "metrics": ["wer"]}],
    }
    assert "Mapped (" in err and "task_metric[1] [tasks, word_error_rate] → tasks: all" in err
    parse_config(out, file="eval.yaml")


def test_the_phi4_prompt_override_shows_it_never_applied(
    monkeypatch, capsys, tmp_path, no_builtin_tasks
) -> None:
    config = """\
task_metric:
  - ["librispeech_test_clean", "word_error_rate"]
prompt_overrides:
  user_prompt:
    - task: "librispeech_test_clean"
      prompt: "Transcribe the audio clip into text."
models:
  - name: "phi4-multimodal-deployment0"
    inference_type: "vllm"
    url: "http://host:8000/v1"
    auth_token: "???"
    model: "speech_lora"
"""
    code, out, err = _import(monkeypatch, capsys, tmp_path, config, "--out", "eval.yaml")
    assert code == 0, out + err
    assert "prompt_overrides: never applied" in out
    assert "your old runs used each task's own prompt" in out
    # The registry here has no librispeech_test_clean: reported, and the file says so.
    assert "task_metric[0] librispeech_test_clean: no equivalent task" in out
    assert "no task or model mapped: edit it before running" in out
    config_out = yaml.safe_load((tmp_path / "eval.yaml").read_text())
    assert config_out["models"][0]["api_key"] == "${AU_HARNESS_TOKEN_PHI4_MULTIMODAL_DEPLOYMENT0}"
    assert "???" not in (tmp_path / "eval.yaml").read_text()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "file not found"),
        ("task_metric: [unclosed\n", "not valid YAML"),
        ("- just\n- a list\n", "must be a mapping"),
    ],
)
def test_unreadable_input_is_the_only_failure(monkeypatch, capsys, tmp_path, content, message):
    if content is not None:
        (tmp_path / "au.yaml").write_text(content)
    code, out, err = invoke(monkeypatch, capsys, "tasks", "import-config", "au-harness", "au.yaml")
    assert code == 2 and message in err and "au.yaml" in err


def test_an_unknown_source_is_a_usage_error(monkeypatch, capsys, tmp_path) -> None:
    (tmp_path / "au.yaml").write_text("models: []\n")
    code, out, err = invoke(monkeypatch, capsys, "tasks", "import-config", "lm-eval", "au.yaml")
    assert code == 2 and "au-harness" in err


def test_the_names_table_follows_the_registry_naming_rule() -> None:
    cases = {
        "librispeech_test_clean": ("librispeech_test_clean",),
        "fleurs_fr_fr": ("fleurs_asr_fr_fr",),
        "covost2_zh-CN_en": ("covost2_zh_cn_en", "covost2_zh_en"),
        "covost2_en_de": ("covost2_en_de",),
        "fleurs_es_419": ("fleurs_asr_es_419",),
        "fleurs_cmn_hans_cn": ("fleurs_asr_cmn_hans_cn",),
        "slue_p2_sqa5_test": ("slue_sqa5",),
        "mmsu_biology": ("voicebench_mmsu_biology",),
        "meld_emotion_test": ("meld_emotion",),
        "iemocap_gender_recognition": ("iemocap_gender",),
        "bfcl_audio_simple": ("bfcl_simple_audio",),
        "bfcl_audio_parallel_multiple_no_prompt": ("bfcl_parallel_multiple_audio",),
        "bfcl_text_simple": (),
        "gsm8k_audio": ("gsm8k_speech",),
        "voicebench_ifeval_audio": ("voicebench_ifeval",),
        "spider_audio": ("spider_audio",),
        "advbench": ("voicebench_advbench",),
        "common_voice_15_fr": ("common_voice_15_fr", "common_voice_17_fr"),
        "common_voice_15_zh-CN": (
            "common_voice_15_zh_cn",
            "common_voice_17_zh_cn",
            "common_voice_17_zh",
        ),
        "mnsc_asr_part1_test": ("mnsc_asr_part1",),
        "voxceleb_accent_test": ("voxceleb_accent",),
        "gsm8k_text": (),
    }
    for au, ours in cases.items():
        assert names.task_candidates(au) == ours, au
    assert names.METRICS["word_error_rate"].names == ("wer",)
    assert names.METRICS["llm_judge_redteaming"].names == ("llm_judge_refusal",)
    assert names.METRICS["diarization_metrics"].names == ("wder", "cpwer")
    assert names.METRICS["comet"].names == ("comet",)


def test_bad_values_are_reported_and_the_output_stays_valid(monkeypatch, capsys, tmp_path):
    config = """\
task_metric: [["asr", "word_error_rate"], ["asr"]]
filter: {num_samples: ten, length_filter: [5]}
filters: {language: 3}
judge_settings: {judge_type: vllm, judge_concurrency: -1, judge_api_endpoint: "http://j/v1"}
models:
  - {name: m, inference_type: vllm, url: "http://h:1/v1", model: m, batch_size: 0,
     timeout: fast, retry_attempts: 2}
  - {name: n, inference_type: vllm}
  - just a string
generation_params_override:
  - {model: m, generation_params: {max_completion_tokens: 0, temperature: 0.2}}
temperature_overrides:
  - {task: asr, temperature: hot}
"""
    code, out, err = _import(monkeypatch, capsys, tmp_path, config, "--out", "eval.yaml")
    assert code == 0, out + err
    unmapped = _section(out, "Not mapped (")
    for line in (
        "models[0].batch_size: 0 is below 1",
        "models[0].timeout: 'fast' is not a number",
        "models[1]: needs name and model",
        "models[2]: not a mapping",
        "task_metric[1]: not a [task, metric] pair",
        "filter.num_samples: 'ten' is not a whole number",
        "filter.length_filter: not a [min_s, max_s] pair",
        "filters.language: 3 is not a language code",
        "judge_settings.judge_concurrency: -1 is below 1",
        "generation_params_override[0].generation_params.max_completion_tokens: 0 is below 1",
        "temperature_overrides[0].temperature: 'hot' is not a number",
    ):
        assert line in unmapped, line
    config_out = yaml.safe_load((tmp_path / "eval.yaml").read_text())
    assert config_out["models"] == [
        {"name": "m", "model": "vllm/m", "api": "chat", "base_url": "http://h:1/v1", "retries": 1}
    ]
    assert config_out["overrides"] == [{"model": "m", "generation": {"temperature": 0.2}}]
    assert config_out["judge"] == {"model": "vllm/gpt-4o-mini", "base_url": "http://j/v1"}
    assert "filters" not in config_out
    parse_config((tmp_path / "eval.yaml").read_text(), file=tmp_path / "eval.yaml")


def test_a_stand_in_task_says_how_it_differs(monkeypatch, capsys, tmp_path, registry) -> None:
    (registry / "asr" / "common_voice_17_fr.yaml").write_text(
        TASK.format(name="cv17 fr", data=registry / "data", metrics="wer")
    )
    config = """\
task_metric: [["common_voice_15_fr", "word_error_rate"], ["covost2_zh-CN_en", "all"]]
models: [{name: m, inference_type: vllm, url: "http://h:1/v1", model: m}]
"""
    code, out, err = _import(
        monkeypatch, capsys, tmp_path, config, "--out", "eval.yaml", "--tasks-dir", str(registry)
    )
    assert code == 0, out + err
    assert yaml.safe_load((tmp_path / "eval.yaml").read_text())["tasks"] == [
        {"name": "common_voice_17_fr", "metrics": ["wer"]},
        "covost2_zh_cn_en",
    ]
    notes = _section(out, "Behaves differently in voxbench (")
    assert "common_voice_15_fr → common_voice_17_fr: Common Voice 17 stands in" in notes


def test_a_judge_metric_without_judge_settings_is_reported(
    monkeypatch, capsys, tmp_path, registry
) -> None:
    config = """\
task_metric: [["meld_emotion_test", "llm_judge_binary"]]
models: [{name: m, inference_type: vllm, url: "http://h:1/v1", model: m}]
"""
    code, out, err = _import(
        monkeypatch, capsys, tmp_path, config, "--out", "eval.yaml", "--tasks-dir", str(registry)
    )
    assert code == 0, out + err
    assert "judge_settings: missing, and meld_emotion use a judge metric: add a judge:" in _section(
        out, "Not mapped ("
    )


def test_a_placeholder_token_needs_no_environment_variable(monkeypatch, capsys, tmp_path) -> None:
    """vLLM's ``auth_token: EMPTY`` is no secret: written as is, the config runs as imported."""
    config = """\
task_metric:
  - ["asr", "word_error_rate"]
models:
  - {name: m, inference_type: vllm, url: "http://h:1/v1", model: m, auth_token: EMPTY}
"""
    code, out, err = _import(monkeypatch, capsys, tmp_path, config)
    assert code == 0, err
    data = yaml.safe_load(out)
    assert data["models"][0]["api_key"] == "EMPTY"
    assert "AU_HARNESS_TOKEN" not in out + err and "placeholder" in err
    parse_config(out, file="eval.yaml")  # no ${VAR} left to set
