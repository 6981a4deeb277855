"""AU-Harness task YAMLs read directly (``--tasks-dir <AU-Harness>/tasks``): a small tree in
AU-Harness's format, written here (its key names and public dataset paths, none of its files),
loaded as voxbench tasks, listed, and one run with ``local/oracle``; the tasks with no
equivalent are reported with their reason. With ``AU_HARNESS_CHECKOUT`` pointing at a checkout,
its whole ``tasks/`` folder is loaded too (skipped otherwise)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from voxbench.core.errors import ConfigError
from voxbench.tasks.spec import TaskRegistry

FILES = {
    "speech_recognition/asr/base.yaml": """\
preprocessor: GeneralPreprocessor
postprocessor: GeneralPostprocessor
split: test
user_prompt: >
  Transcribe the speech. Reply with the transcript only.
long_audio_processing_logic: chunk
generation_kwargs: {temperature: 0.0001, max_completion_tokens: 64}
metrics:
  - metric: word_error_rate
""",
    "speech_recognition/asr/fleurs/base.yaml": """\
extends: ["../base.yaml#"]
dataset_path: google/fleurs
audio_column: audio
target_column: transcription
""",
    "speech_recognition/asr/fleurs/fleurs_af_za.yaml": """\
task_name: fleurs_af_za
extends: ["./base.yaml#"]
subset: af_za
lange: af
results_column: x
""",
    # AU-Harness's own slip: the file extends ../base.yaml, skipping its folder's base, so it
    # has no dataset_path; it is read over its folder's base, as its siblings are.
    "speech_recognition/asr/gigaspeech2/base.yaml": """\
extends: ["../base.yaml#"]
dataset_path: AudioLLMs/gigaspeech2-test
audio_column: context
target_column: answer
""",
    "speech_recognition/asr/gigaspeech2/gigaspeech2_th_test.yaml": """\
task_name: gigaspeech2_th_test
extends: ["../base.yaml#"]
subset: th-test
language: th
""",
    "speech_recognition/asr/callhome_asr/callhome_asr_eng.yaml": """\
task_name: callhome_asr_eng
extends: ["../base.yaml#"]
dataset_path: private_datasets/CallHome_eng/hf_dataset
preprocessor: CallhomePreprocessor
language: en
""",
    "spoken_language_understanding/translation/covost2/base.yaml": """\
dataset_path: fixie-ai/covost2
split: test
preprocessor: Covost2Preprocessor
postprocessor: Covost2Postprocessor
audio_column: audio
target_column: translation
target_language: en
user_prompt: "Translate the speech from {{source_language_name}} to {{ target_language_name }}."
long_audio_processing_logic: chunk
generation_kwargs: {temperature: 0.2, max_completion_tokens: 1024}
metrics: [{metric: bleu}, {metric: meteor}, {metric: bertscore}, {metric: comet}]
""",
    "spoken_language_understanding/translation/covost2/covost2_zh-CN_en.yaml": """\
task_name: covost2_zh-CN_en
extends: ["./base.yaml#"]
subset: zh-CN_en
source_language: zh-CN
""",
    "spoken_language_reasoning/gsm8k/gsm8k_text.yaml": """\
task_name: gsm8k_text
dataset_path: openai/gsm8k
subset: main
modality: text
preprocessor: GeneralPreprocessor
postprocessor: GeneralPostprocessor
target_column: answer
textual_input_column: question
long_audio_processing_logic: truncate
metrics: [{metric: gsm8k_exact_match}]
""",
    "spoken_language_reasoning/mtbench/mtbench_audio.yaml": """\
task_name: mtbench_audio
dataset_path: ServiceNow-AI/mt-bench_audio
preprocessor: MultiturnPreprocessor
postprocessor: MultiturnPostprocessor
modality: audio
long_audio_processing_logic: truncate
metrics: [{metric: mt_bench_llm_judge}]
""",
    "spoken_language_understanding/spoken_dialogue/spokenwoz/spokenwoz_audio.yaml": """\
task_name: spokenwoz_audio
dataset_path: pirxus/spokenwoz-whisper
split: test
language: en
preprocessor: SpokenWozPreprocessor
postprocessor: SpokenWozPostprocessor
audio_column: audio
target_column: agent_text
context_column: context
user_text_column: text
long_audio_processing_logic: truncate
metrics:
  - {metric: joint_goal_accuracy}
  - {metric: slot_accuracy}
  - {metric: slot_f1}
  - {metric: bleu}
""",
    # A JSON pointer into a shared file (``path#/defaults``), as the extends syntax allows.
    "audio_understanding/shared.yaml": """\
defaults:
  language: en
  split: test
  preprocessor: GeneralPreprocessor
  postprocessor: GeneralPostprocessor
  audio_column: context
  target_column: answer
  instruction_column: instruction
  long_audio_processing_logic: truncate
""",
    "audio_understanding/music_understanding/mu_chomusic_test.yaml": """\
task_name: mu_chomusic_test
extends: ["../shared.yaml#/defaults"]
dataset_path: AudioLLMs/mu_chomusic_test
choices_column: choices
generation_kwargs: {temperature: 0.7, max_completion_tokens: 512}
metrics: [{metric: llm_judge_binary}]
""",
}


def write_au_tasks(root: Path) -> Path:
    """The tree above under ``root/tasks`` (AU-Harness's layout)."""
    tasks = root / "tasks"
    for rel, text in FILES.items():
        file = tasks / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    return tasks


def test_au_harness_task_files_load_as_tasks(tmp_path: Path) -> None:
    registry = TaskRegistry([write_au_tasks(tmp_path)])
    loaded = {"fleurs_af_za", "gigaspeech2_th_test", "covost2_zh-CN_en", "spokenwoz_audio",
              "mu_chomusic_test"}  # fmt: skip
    assert loaded <= set(registry.names)
    assert "base" not in registry.names and "shared" not in registry.names

    fleurs = registry.get("fleurs_af_za")
    assert fleurs.family == "speech_recognition"
    spec = fleurs.spec
    assert (spec.dataset.hub, spec.dataset.config, spec.dataset.split) == (
        "google/fleurs", "af_za", "test",
    )  # fmt: skip
    assert (spec.columns.audio, spec.columns.reference, spec.columns.id) == (
        "audio", "transcription", None,
    )  # fmt: skip
    assert spec.language == "af" and spec.metrics == ["wer"]  # `lange`: the README's typo
    assert "results_column: not a task key AU-Harness reads, left out" in fleurs.notes
    assert spec.prompt.user == "Transcribe the speech. Reply with the transcript only."
    assert (spec.generation.temperature, spec.generation.max_tokens) == (0.0001, 64)
    assert (spec.long_audio.policy, spec.long_audio.max_seconds) == ("chunk", 30.0)

    covost = registry.get("covost2_zh-CN_en")
    assert covost.spec.prompt.user == "Translate the speech from Chinese to English."
    assert (covost.spec.language, covost.spec.target_language) == ("zh-CN", "en")
    assert covost.spec.metrics == ["bleu", "meteor", "bertscore", "comet"]
    assert any("comet" in note for note in covost.notes)

    giga = registry.get("gigaspeech2_th_test")
    assert (giga.spec.dataset.hub, giga.spec.dataset.config) == (
        "AudioLLMs/gigaspeech2-test",
        "th-test",
    )
    assert giga.spec.columns.audio == "context" and giga.spec.language == "th"
    assert any("folder's base.yaml" in note for note in giga.notes)

    music = registry.get("mu_chomusic_test")  # extends through a JSON pointer
    assert music.spec.columns.choices == "choices" and music.spec.columns.audio == "context"
    assert music.spec.prompt.user == "{instruction}\nChoices: {choices}"
    assert music.spec.metrics == ["llm_judge"]

    woz = registry.get("spokenwoz_audio")
    assert woz.spec.columns.reference == "slots"
    assert woz.spec.metrics == ["joint_goal_accuracy", "slot_accuracy", "slot_f1"]
    assert "{context}" in (woz.spec.prompt.user or "")

    # AU-Harness's folders are groups, as they are there.
    groups = registry.groups
    assert groups["fleurs"] == ["fleurs_af_za"]
    assert set(groups["speech_recognition"]) == {"fleurs_af_za", "gigaspeech2_th_test"}


def test_tasks_with_no_equivalent_are_reported_with_the_reason(tmp_path: Path) -> None:
    registry = TaskRegistry([write_au_tasks(tmp_path)])
    reasons = {name: found.reason for name, found in registry.not_loaded.items()}
    assert set(reasons) == {"callhome_asr_eng", "gsm8k_text", "mtbench_audio"}
    assert "local folder, not a Hub dataset" in reasons["callhome_asr_eng"]
    assert "text-only variant" in reasons["gsm8k_text"]
    assert "multi-turn" in reasons["mtbench_audio"]
    with pytest.raises(ConfigError) as caught:
        registry.expand("gsm8k_text", field="tasks")
    assert "no voxbench equivalent: a text-only variant" in str(caught.value)
    assert "gsm8k_text.yaml" in str(caught.value)


def test_tasks_list_reads_an_au_harness_tasks_folder(monkeypatch, capsys, tmp_path) -> None:
    tasks = write_au_tasks(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "tasks", "list", "--tasks-dir", str(tasks))
    assert code == 0, out + err
    assert "fleurs_af_za" in out and "google/fleurs/af_za:test" in out
    assert "Not loaded (3 AU-Harness tasks with no voxbench equivalent):" in err
    assert "gsm8k_text: a text-only variant" in err
    code, out, _ = invoke(monkeypatch, capsys, "tasks", "list", "--tasks-dir", str(tasks), "--json")
    assert code == 0 and out.lstrip().startswith("{")  # the report stays off stdout
    tasks_json = {t["task"]: t for t in json.loads(out)["tasks"]}
    assert any("folder's base.yaml" in n for n in tasks_json["gigaspeech2_th_test"]["notes"])


def test_an_au_harness_task_runs_with_the_oracle(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    from .conftest import run_yaml
    from .hub_fixture import write_hub_fixture

    tasks = write_au_tasks(tmp_path)
    copy = write_hub_fixture(
        tmp_path / "fleurs",
        {"id": [1, 2], "transcription": ["hallo wêreld", "goeie môre"]},
        config="af_za",
    )
    result = run_yaml(
        "models: [{name: oracle, model: local/oracle}]\n"
        f"tasks: [fleurs_af_za]\ntasks_dirs: [{tasks}]\n"
        f"dataset_dirs: {{fleurs_af_za: {copy}}}\n",
        tmp_path,
    )
    wer = result.scores["tasks"]["fleurs_af_za"]["oracle"]["metrics"]["wer"]
    assert wer["value"] == 0.0 and wer["n"] == 2


KNOWN_REASONS = ("text-only variant", "local folder, not a Hub dataset", "multi-turn records")


@pytest.mark.skipif(
    not os.environ.get("AU_HARNESS_CHECKOUT"), reason="AU_HARNESS_CHECKOUT is not set"
)
def test_a_whole_au_harness_checkout_loads() -> None:
    """Every task of a real checkout loads, or is reported for one of the known reasons."""
    tasks = Path(os.environ["AU_HARNESS_CHECKOUT"]) / "tasks"
    registry = TaskRegistry([tasks])
    leaves = [f for f in tasks.rglob("*.y*ml") if f.name != "base.yaml"]
    au_names = [n for n in registry.names if registry.get(n).file.is_relative_to(tasks)]
    assert len(au_names) + len(registry.not_loaded) == len(leaves)
    for name, found in registry.not_loaded.items():
        assert any(reason in found.reason for reason in KNOWN_REASONS), (name, found.reason)
    public = [n for n in au_names if registry.get(n).spec.dataset.hub]
    assert len(public) == len(au_names)
