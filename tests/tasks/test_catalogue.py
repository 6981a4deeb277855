"""The task catalogue: every registered task is valid, and each Hub family runs end to end
against a tiny local copy with exactly the public dataset's columns (written here, never
downloaded), so a task file naming a column the dataset does not have fails here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from voxbench.core.errors import ConfigError
from voxbench.metrics.registry import METRICS
from voxbench.tasks.spec import REGISTRY_DIR, TaskRegistry

from .conftest import run_yaml
from .hub_fixture import write_hub_fixture

ORACLE = "models: [{name: oracle, model: local/oracle}]\n"


def test_every_registered_task_loads_validates_and_names_known_metrics() -> None:
    registry = TaskRegistry()
    stems = [f.stem for f in REGISTRY_DIR.rglob("*.yaml") if not f.name.startswith("_")]
    assert len(stems) == len(set(stems)), "task names must be unique across the registry"
    for name in registry.names:
        spec = registry.get(name).spec
        unknown = [m for m in spec.metrics if m not in METRICS]
        assert not unknown, f"{name} names unknown metrics {unknown}"
        if spec.dataset.hub is not None:
            assert spec.licence, f"{name}: a Hub task needs a licence note"
            assert spec.source_url.startswith("https://"), f"{name}: a Hub task needs source_url"
            assert spec.dataset.split, f"{name}: a Hub task names its split"


# -- the public columns of each dataset (from its card; see each task file's comment) ---------


def _librispeech(texts: list[str]) -> dict[str, list]:
    n = len(texts)
    return {
        "file": [f"{i}.flac" for i in range(n)],
        "text": texts,
        "speaker_id": [1089] * n,
        "chapter_id": [134686] * n,
        "id": [f"1089-134686-{i:04d}" for i in range(n)],
    }


def _common_voice(texts: list[str], locale: str) -> dict[str, list]:
    n = len(texts)
    return {
        "client_id": ["c"] * n,
        "path": [f"common_voice_{locale}_{i}.mp3" for i in range(n)],
        "sentence": texts,
        "up_votes": [2] * n,
        "down_votes": [0] * n,
        "age": [""] * n,
        "gender": [""] * n,
        "accent": [""] * n,
        "locale": [locale] * n,
        "segment": [""] * n,
        "variant": [""] * n,
    }


def _fleurs(texts: list[str], ids: list[int], language: str) -> dict[str, list]:
    n = len(texts)
    return {
        "id": ids,
        "num_samples": [8000] * n,
        "path": [f"{language}_{i}.wav" for i in range(n)],
        "transcription": [t.lower() for t in texts],
        "raw_transcription": texts,
        "gender": [0] * n,
        "lang_id": [26] * n,
        "language": [language] * n,
        "lang_group_id": [0] * n,
    }


def _voxpopuli(texts: list[str]) -> dict[str, list]:
    n = len(texts)
    return {
        "audio_id": [f"20180312-0900-PLENARY-{i}" for i in range(n)],
        "language": [0] * n,
        "raw_text": texts,
        "normalized_text": [t.lower() for t in texts],
        "gender": ["female"] * n,
        "speaker_id": ["124737"] * n,
        "is_gold_transcript": [True] * n,
        "accent": ["None"] * n,
    }


def _ami(texts: list[str]) -> dict[str, list]:
    n = len(texts)
    return {
        "meeting_id": ["EN2002a"] * n,
        "audio_id": [f"AMI_EN2002a_H00_MEE073_{i:07d}" for i in range(n)],
        "text": texts,
        "begin_time": [float(i) for i in range(n)],
        "end_time": [i + 0.5 for i in range(n)],
        "microphone_id": ["H00"] * n,
        "speaker_id": ["MEE073"] * n,
    }


def _esb(texts: list[str], dataset: str) -> dict[str, list]:
    n = len(texts)
    return {
        "dataset": [dataset] * n,
        "text": texts,
        "id": [f"{dataset}-{i}" for i in range(n)],
        "audio_length_s": [0.5] * n,
    }


def _audiobench(texts: list[str]) -> dict[str, list]:
    return {"instruction": ["Please transcribe the speech."] * len(texts), "answer": texts}


def _ascend(texts: list[str]) -> dict[str, list]:
    n = len(texts)
    return {
        "id": [f"ses2_spk3_L13101_{i}" for i in range(n)],
        "path": [f"waves/{i}.wav" for i in range(n)],
        "transcription": texts,
        "duration": [0.5] * n,
        "language": ["mixed"] * n,
        "original_speaker_id": [3] * n,
        "session_id": [2] * n,
        "topic": ["education"] * n,
    }


def _covost2(sentences: list[str], translations: list[str]) -> dict[str, list]:
    n = len(sentences)
    return {
        "client_id": ["c"] * n,
        "file": [f"common_voice_{i}.mp3" for i in range(n)],
        "sentence": sentences,
        "translation": translations,
        "id": [f"common_voice_{i}" for i in range(n)],
    }


EN = ["the birch canoe slid on the smooth planks", "glue the sheet to the dark blue background"]
FR = ["Le chat dort sur le canapé.", "Il fait beau aujourd'hui."]
ZH = ["我们今天去 shopping 吧", "这个 project 很难"]

# task → (rows of its local copy, the folder to write, config subfolder or None, audio column)
ASR_COPIES: dict[str, tuple[dict[str, list], str | None, str]] = {
    "librispeech_test_clean": (_librispeech(EN), None, "audio"),
    "common_voice_17_fr": (_common_voice(FR, "fr"), "fr", "audio"),
    "common_voice_17_zh_cn": (_common_voice(ZH, "zh-CN"), "zh-CN", "audio"),
    "fleurs_asr_fr_fr": (_fleurs(FR, [11, 12], "French"), "fr_fr", "audio"),
    "fleurs_asr_cmn_hans_cn": (_fleurs(ZH, [11, 12], "Mandarin Chinese"), None, "audio"),
    "voxpopuli_en": (_voxpopuli(EN), "en", "audio"),
    "ami_ihm": (_ami(EN), None, "audio"),
    "gigaspeech_test": (_esb(EN, "gigaspeech"), "gigaspeech", "audio"),
    "spgispeech_test": (_esb(EN, "spgispeech"), "spgispeech", "audio"),
    "tedlium3_test": (_audiobench(EN), None, "context"),
}
LONG_FORM_COPIES = {
    "earnings21": (_audiobench(EN), None, "context"),
    "earnings22": (_audiobench(EN), None, "context"),
    "tedlium3_long_form": (_audiobench(EN), None, "context"),
}
CODE_SWITCHING_COPIES = {
    "ascend_test": (_ascend(ZH), "main", "audio"),
    "seame_dev_man": (_audiobench(ZH), None, "context"),
}
TRANSLATION_COPIES = {
    "covost2_fr_en": (_covost2(FR, EN), "fr_en", "audio"),
    "covost2_en_zh": (_covost2(EN, ZH), "en_zh-CN", "audio"),
}


def _run_copies(
    copies: dict[str, tuple[dict[str, list], str | None, str]], tmp_path: Path
) -> dict[str, Any]:
    dirs = []
    for task, (rows, config, audio_column) in copies.items():
        write_hub_fixture(tmp_path / "copies" / task, rows, audio_column=audio_column,
                          config=config)  # fmt: skip
        dirs.append(f"{task}: copies/{task}")
    text = ORACLE + f"tasks: [{', '.join(copies)}]\ndataset_dirs: {{{', '.join(dirs)}}}\n"
    return run_yaml(text, tmp_path).scores["tasks"]


def _assert_perfect(scores: dict[str, Any], copies: dict[str, Any]) -> None:
    assert set(scores) == set(copies)
    for task, by_model in scores.items():
        entry = by_model["oracle"]
        assert entry["errors"] == 0 and entry["answered"] == entry["records"] == 2, task
        for name, metric in entry["metrics"].items():
            if name == "meteor":  # METEOR's fragmentation penalty keeps even a copy below 100
                assert 99.0 < metric["value"] < 100.0, (task, name)
                continue
            assert metric["value"] == (100.0 if metric["higher_is_better"] else 0.0), (task, name)


@pytest.mark.parametrize(
    "copies",
    [ASR_COPIES, LONG_FORM_COPIES, CODE_SWITCHING_COPIES, TRANSLATION_COPIES],
    ids=["asr", "long_form_asr", "code_switching_asr", "translation"],
)
def test_family_runs_on_a_copy_with_the_public_columns(
    copies: dict[str, Any], tmp_path: Path
) -> None:
    _assert_perfect(_run_copies(copies, tmp_path), copies)


def test_fleurs_translation_joins_the_target_transcription(tmp_path: Path) -> None:
    """fleurs_en_fr: English audio, the reference is the French raw transcription of the same
    sentence id from config fr_fr; an id without a French recording is left out, and a
    sentence recorded twice in French keeps its first transcription."""
    copy = tmp_path / "fleurs"
    write_hub_fixture(copy, _fleurs([*EN, "unmatched"], [11, 12, 13], "English"), config="en_us")
    write_hub_fixture(copy, _fleurs([FR[0], FR[1], "doublon"], [11, 12, 12], "French"),
                      config="fr_fr")  # fmt: skip
    result = run_yaml(ORACLE + "tasks: [fleurs_en_fr]\ndataset_dirs: {fleurs_en_fr: fleurs}\n",
                      tmp_path)  # fmt: skip
    rows = sorted((r["id"], r["reference"]) for r in result.run.rows())
    assert rows == [("English_0.wav", FR[0]), ("English_1.wav", FR[1])]
    entry = result.scores["tasks"]["fleurs_en_fr"]["oracle"]
    assert entry["metrics"]["bleu"]["value"] == 100.0
    assert result.run.info()["tasks"]["fleurs_en_fr"]["fingerprint"].count("+") == 1


def test_a_copy_without_the_named_column_fails_naming_it_and_the_task_file(
    tmp_path: Path,
) -> None:
    rows = _librispeech(EN)
    rows["transcript"] = rows.pop("text")
    write_hub_fixture(tmp_path / "ls", rows)
    with pytest.raises(ConfigError) as caught:
        run_yaml(
            ORACLE
            + "tasks: [librispeech_test_clean]\ndataset_dirs: {librispeech_test_clean: ls}\n",
            tmp_path,
        )
    message = str(caught.value)
    assert "text (columns.reference)" in message
    assert str(REGISTRY_DIR / "asr" / "librispeech_test_clean.yaml") in message
    # references_from naming a column the other config lacks
    copy = tmp_path / "fleurs"
    write_hub_fixture(copy, _fleurs(EN, [11, 12], "English"), config="en_us")
    french = _fleurs(FR, [11, 12], "French")
    french.pop("raw_transcription")
    write_hub_fixture(copy, french, config="fr_fr")
    with pytest.raises(ConfigError) as caught:
        run_yaml(ORACLE + "tasks: [fleurs_en_fr]\ndataset_dirs: {fleurs_en_fr: fleurs}\n",
                 tmp_path)  # fmt: skip
    assert "config fr_fr of google/fleurs has no column raw_transcription" in str(caught.value)
    assert caught.value.field == "dataset.references_from"
