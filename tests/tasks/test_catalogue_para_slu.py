"""The paralinguistics and spoken-language-understanding catalogue, run end to end.

Each registered Hub task reads a tiny local copy written with exactly the public dataset's
columns (``write_hub_fixture``, never downloaded), answered by ``local/oracle`` or by fake
endpoints with scripted replies, and judged by the fake judge where the task is judged. A task
naming a column its dataset lacks fails with an error naming the column and the task file.
"""

from __future__ import annotations

import json
import wave
from pathlib import Path
from typing import Any

import pytest

from voxbench.core.errors import ConfigError
from voxbench.tasks.datasets.suite import ensure_builtin_dataset
from voxbench.tasks.spec import TaskRegistry

from .conftest import FakeEndpoints, run_yaml
from .fake_judge import GullibleJudge, TrackingServer
from .hub_fixture import write_hub_fixture
from .test_http import serving

pytest.importorskip("datasets")

ORACLE = "models: [{name: oracle, model: local/oracle}]\n"
FAKE = "models: [{name: m, model: vllm/q}]\n"
JUDGE = "judge: {model: openai-compatible/judge-1, base_url: '%s', backoff_base_s: 0}\n"


def _run(tmp_path: Path, task: str, copy: Path | None, head: str, **kwargs: Any) -> Any:
    text = head + f"tasks: [{task}]\noutput_dir: out_{len(list(tmp_path.glob('out_*')))}\n"
    if copy is not None:
        text += f"dataset_dirs: {{{task}: {copy}}}\n"
    return run_yaml(text, tmp_path, **kwargs)


def _metrics(result: Any, task: str, model: str) -> dict[str, Any]:
    return result.scores["tasks"][task][model]["metrics"]


def _replying(answers: dict[str, str]) -> FakeEndpoints:
    """Fake endpoints replying ``answers[reference]`` (the record's reference after reading)."""
    return FakeEndpoints(reply=lambda request: answers[request.reference])


# -- paralinguistics ----------------------------------------------------------------------------

IEMOCAP_ROWS = {
    "instruction": [
        "What emotions do you detect in the speaker's voice?",
        "How would you describe the speaker's emotions?",
        "What is the emotional tone of the speaker's speech?",
        "Can you identify the speaker's emotional state?",
    ],
    "answer": [
        "From the speaker's speech, it seems they are in a neutral state state.",
        "The speaker's tone sounds excited.",
        "The speaker's emotion seems frustration.",
        "Based on the speaker's speech patterns, it seems like they are feeling happiness.",
    ],
}


def test_emotion_references_become_labels_and_replies_are_read_through_the_label_map(
    tmp_path: Path,
) -> None:
    copy = write_hub_fixture(tmp_path / "iemocap", IEMOCAP_ROWS, audio_column="context")
    oracle = _run(tmp_path, "iemocap_emotion", copy, ORACLE)
    rows = sorted(oracle.run.rows(), key=lambda r: int(r["id"]))
    assert [(r["id"], r["reference"]) for r in rows] == [
        ("0", "neutral"),
        ("1", "excited"),
        ("2", "frustration"),
        ("3", "happiness"),
    ]
    assert _metrics(oracle, "iemocap_emotion", "oracle")["accuracy"]["value"] == 100.0
    assert _metrics(oracle, "iemocap_emotion", "oracle")["macro_f1"]["value"] == 100.0
    # Replies in other words: "frustrated" and "happy" are the labels' spellings; "sad" is wrong.
    fakes = _replying(
        {
            "neutral": "Neutral.",
            "excited": "The speaker sounds sad.",
            "frustration": "They sound frustrated",
            "happiness": "happy",
        }
    )
    result = _run(tmp_path, "iemocap_emotion", copy, FAKE, fakes=fakes)
    metrics = _metrics(result, "iemocap_emotion", "m")
    assert metrics["accuracy"]["value"] == 75.0
    # excited: fn → 0; sad: fp → 0; the other three: 1 → 3/5
    assert metrics["macro_f1"]["value"] == 60.0
    prompt = fakes.calls[0]["prompt"]
    assert "anger, excited, frustration, happiness, neutral, sad, surprise" in prompt


def test_gender_and_sentiment_mirrors(tmp_path: Path) -> None:
    gender = write_hub_fixture(
        tmp_path / "vox_gender",
        {
            "instruction": ["Can you determine the gender of the speaker?"] * 3,
            "answer": [
                "The speaker is a female.",
                "Yes, I can analyze the audio and determine there is a male speaker.",
                "The speaker sounds like a female.",
            ],
        },
        audio_column="context",
    )
    fakes = _replying({"female": "It is a woman.", "male": "Female"})
    result = _run(tmp_path, "voxceleb_gender", gender, FAKE, fakes=fakes)
    assert _metrics(result, "voxceleb_gender", "m")["accuracy"]["value"] == pytest.approx(66.67)
    sentiment = write_hub_fixture(
        tmp_path / "meld_sentiment",
        {
            "instruction": ["What sentiment signals can you hear?"] * 2,
            "answer": [
                "From the speaker's speech, it seems they are in a neutral sentiment state.",
                "The speaker's sentiment is negative, as reflected in their language.",
            ],
        },
        audio_column="context",
    )
    result = _run(tmp_path, "meld_sentiment", sentiment, ORACLE)
    assert sorted(r["reference"] for r in result.run.rows()) == ["negative", "neutral"]


def test_a_reference_naming_no_label_is_a_clear_error(tmp_path: Path) -> None:
    copy = write_hub_fixture(
        tmp_path / "meld",
        {"instruction": ["?"], "answer": ["The speaker sounds bored."]},
        audio_column="context",
    )
    with pytest.raises(ConfigError) as caught:
        _run(tmp_path, "meld_emotion", copy, ORACLE)
    message = str(caught.value)
    assert "'The speaker sounds bored.' names none of the labels" in message
    assert "meld_emotion.yaml" in message


def test_accent_is_judged_with_the_dataset_question(tmp_path: Path) -> None:
    copy = write_hub_fixture(
        tmp_path / "accent",
        {
            "instruction": ["Can you guess the nationality from the speaker's accent?"] * 2,
            "answer": ["USA.", "Canada."],
        },
        audio_column="context",
    )
    judge = GullibleJudge()
    with serving(TrackingServer(judge)) as server:
        fakes = _replying({"USA.": "USA", "Canada.": "Ireland"})
        result = _run(tmp_path, "voxceleb_accent", copy, FAKE + JUDGE % server.url, fakes=fakes)
    assert _metrics(result, "voxceleb_accent", "m")["llm_judge"]["value"] == 50.0
    records = [json.loads(line) for text in judge.seen for line in text.splitlines()
               if line.startswith("{")]  # fmt: skip
    assert {r["question"] for r in records} == {
        "Can you guess the nationality from the speaker's accent?"
    }


def test_builtin_speaker_count_mixes_voices_and_reads_number_words(tmp_path: Path) -> None:
    folder = ensure_builtin_dataset("speaker_count")
    rows = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in rows}
    assert by_id["c3a"]["voice"] == "en-us+m1, en-us+f2, en-us+m4"
    assert {r["reference"] for r in rows} == {"1", "2", "3", "4"}
    for row in rows:  # a clip has as many distinct voices as its reference says
        assert len(set(row["voice"].split(", "))) == int(row["reference"])

    def seconds(rid: str) -> float:
        with wave.open(str(folder / f"{rid}.wav")) as w:
            return w.getnframes() / w.getframerate()

    assert seconds("c4b") > seconds("c1a")  # four turns, and the silences between them
    oracle = _run(tmp_path, "builtin_speaker_count", None, ORACLE)
    assert _metrics(oracle, "builtin_speaker_count", "oracle")["accuracy"]["value"] == 100.0
    fakes = FakeEndpoints(reply=lambda request: "I hear two speakers.")
    result = _run(tmp_path, "builtin_speaker_count", None, FAKE, fakes=fakes)
    assert {r["scores"]["accuracy"]["answer"] for r in result.run.rows()} == {"2"}
    assert _metrics(result, "builtin_speaker_count", "m")["accuracy"]["value"] == 27.27  # 3/11


FLEURS_COLUMNS = ("id", "num_samples", "path", "transcription", "raw_transcription", "gender",
                  "lang_id", "language", "lang_group_id")  # fmt: skip


def test_fleurs_language_id_per_config(tmp_path: Path) -> None:
    copy = tmp_path / "fleurs"
    rows = {
        "id": [1907, 1907, 1650],  # one sentence, two speakers: ids repeat
        "num_samples": [16000, 16000, 16000],
        "path": ["a.wav", "b.wav", "c.wav"],
        "transcription": ["bonjour", "bonjour", "merci"],
        "raw_transcription": ["Bonjour", "Bonjour", "Merci"],
        "gender": [0, 1, 1],
        "lang_id": [25, 25, 25],
        "language": ["French", "French", "French"],
        "lang_group_id": [0, 0, 0],
    }
    assert tuple(rows) == FLEURS_COLUMNS
    write_hub_fixture(copy, rows, config="fr_fr")
    write_hub_fixture(copy, {**rows, "language": ["Mandarin Chinese"] * 3}, config="cmn_hans_cn")
    fakes = FakeEndpoints(reply=lambda request: f"This is {request.reference}.")
    result = _run(tmp_path, "fleurs_lang_id_fr_fr", copy, FAKE, fakes=fakes)
    assert sorted(r["id"] for r in result.run.rows()) == ["0", "1", "2"]
    assert _metrics(result, "fleurs_lang_id_fr_fr", "m")["accuracy"]["value"] == 100.0
    fakes = FakeEndpoints(reply=lambda request: "Chinese (Mandarin)")
    result = _run(tmp_path, "fleurs_lang_id_cmn_hans_cn", copy, FAKE, fakes=fakes)
    assert _metrics(result, "fleurs_lang_id_cmn_hans_cn", "m")["accuracy"]["value"] == 100.0
    assert {r["language"] for r in result.run.rows()} == {"zh"}


# -- spoken language understanding ------------------------------------------------------------

QA_ROWS = {
    "instruction": [
        "What did Luther think was required to stop the violence?",
        "What did Luther do during Lent at this time?",
        "How did Luther want people to bring about change?",
    ],
    "answer": ["personal presence", "preached", "trust gods word"],
}


def test_spoken_qa_exact_match_and_judge_see_the_question(tmp_path: Path) -> None:
    copy = write_hub_fixture(tmp_path / "squad", QA_ROWS, audio_column="context")
    judge = GullibleJudge()
    fakes = _replying(
        {
            "personal presence": "Personal presence.",
            "preached": "He preached eight sermons.",
            "trust gods word": "By force.",
        }
    )
    with serving(TrackingServer(judge)) as server:
        result = _run(tmp_path, "spoken_squad", copy, FAKE + JUDGE % server.url, fakes=fakes)
    metrics = _metrics(result, "spoken_squad", "m")
    assert metrics["exact_match"]["value"] == pytest.approx(33.33)
    assert metrics["llm_judge"]["value"] == pytest.approx(66.67)
    # Each request asks its own record's question (requests run concurrently: any order).
    assert {c["prompt"].split("\n")[0] for c in fakes.calls} == set(QA_ROWS["instruction"])
    questions = {json.loads(line)["question"] for text in judge.seen
                 for line in text.splitlines() if line.startswith("{")}  # fmt: skip
    assert questions == set(QA_ROWS["instruction"])


def test_intent_labels_from_dynamic_superb(tmp_path: Path) -> None:
    copy = write_hub_fixture(
        tmp_path / "slurp_ic",
        {
            "instruction": ["Identify the intent of the spoken command."] * 3,
            "label": ["alarm_set", "weather_query", "iot_hue_lightoff"],
        },
    )
    fakes = _replying(
        {
            "alarm_set": "alarm set",
            "weather_query": "weather_query",
            "iot_hue_lightoff": "play_music",
        }
    )
    result = _run(tmp_path, "slurp_intent", copy, FAKE, fakes=fakes)
    assert _metrics(result, "slurp_intent", "m")["accuracy"]["value"] == pytest.approx(66.67)
    assert fakes.calls[0]["prompt"].startswith("Identify the intent")


SLURP_ROWS = {
    "slurp_id": [13804, 13804, 4550],
    "sentence": ["wake me up at five am this week", "wake me up at five am this week",
                 "what is the weather like"],
    "annotation": ["wake me up at [time : five am] [date : this week]",
                   "wake me up at [time : five am] [date : this week]",
                   "what is the weather like"],
    "intent": [3, 3, 80],
}  # fmt: skip


def test_slot_filling_with_slurp_annotations(tmp_path: Path) -> None:
    copy = write_hub_fixture(tmp_path / "slurp", SLURP_ROWS)
    oracle = _run(tmp_path, "slurp_slots", copy, ORACLE)
    assert _metrics(oracle, "slurp_slots", "oracle")["slot_f1"]["value"] == 100.0
    # The two "wake me up" records get these replies in either order (the sums are the same).
    wake_up = iter(
        [
            '{"time": "5 am", "date": "this week"}',  # tp 1, fp 1, fn 1
            '```json\n{"time": "Five AM", "date": "this week"}\n```',  # tp 2
        ]
    )
    fakes = FakeEndpoints(  # the weather record: nothing to find, nothing found
        reply=lambda request: next(wake_up) if "[time" in request.reference else "{}"
    )
    result = _run(tmp_path, "slurp_slots", copy, FAKE, fakes=fakes)
    slot_f1 = _metrics(result, "slurp_slots", "m")["slot_f1"]
    # tp 3, fp 1, fn 1: 6 / 8
    assert slot_f1["value"] == 75.0 and slot_f1["parsed"] == 100.0
    assert '{"time": "five am", "date": "friday"}' in fakes.calls[0]["prompt"]


def test_dialogue_summaries_are_judged(tmp_path: Path) -> None:
    copy = write_hub_fixture(
        tmp_path / "mnsc",
        {
            "instruction": ["Summarise this dialogue."] * 2,
            "answer": ["They plan a trip to the zoo.", "Speaker A asks about the bus fare."],
        },
        audio_column="context",
        split="train",
        config="SDS-PART3-Test",
    )
    judge = GullibleJudge()
    fakes = _replying(
        {
            "They plan a trip to the zoo.": "Summary: they plan a trip to the zoo.",
            "Speaker A asks about the bus fare.": "They talk about food.",
        }
    )
    with serving(TrackingServer(judge)) as server:
        result = _run(tmp_path, "mnsc_sds_part3", copy, FAKE + JUDGE % server.url, fakes=fakes)
    assert _metrics(result, "mnsc_sds_part3", "m")["llm_judge"]["value"] == 50.0
    assert result.run.info()["tasks"]["mnsc_sds_part3"]["local_copy"]["path"].endswith("mnsc")


# -- wrong columns ------------------------------------------------------------------------------

FIXTURES: dict[str, tuple[str, dict[str, list], dict[str, Any]]] = {
    "iemocap_emotion": ("reference: label", IEMOCAP_ROWS, {"audio_column": "context"}),
    "spoken_squad": ("reference: answers", QA_ROWS, {"audio_column": "context"}),  # judged
    "slurp_slots": ("reference: entities", SLURP_ROWS, {}),
}


@pytest.mark.parametrize("task", sorted(FIXTURES))
def test_a_wrong_column_names_the_column_and_the_task_file(tmp_path: Path, task: str) -> None:
    change, rows, options = FIXTURES[task]
    copy = write_hub_fixture(tmp_path / "copy", rows, **options)
    mine = tmp_path / "mytasks" / "mine"
    mine.mkdir(parents=True)
    bad = mine / f"bad_{task}.yaml"
    bad.write_text(f"extends: {task}\ncolumns: {{{change}}}\n")
    head = ORACLE + "tasks_dirs: [mytasks]\n" + JUDGE % "http://127.0.0.1:9/v1"  # never asked
    with pytest.raises(ConfigError) as caught:
        _run(tmp_path, f"bad_{task}", copy, head)
    column = change.split(": ")[1]
    assert f"{column} (columns.reference)" in str(caught.value)
    assert str(bad) in str(caught.value)


def test_every_family_of_this_catalogue_has_tasks() -> None:
    registry = TaskRegistry()
    families = {registry.get(n).family for n in registry.names}
    assert set(CATALOGUE_FAMILIES) <= families
    groups = registry.groups
    assert {"emotion", "gender", "accent", "speaker_count"} <= set(groups)
    assert groups["speaker_count"] == ["builtin_speaker_count"]


# -- every catalogue Hub task on a copy of its dataset's columns --------------------------------

FLEURS_NAMES = {"ar_eg": "Arabic", "cmn_hans_cn": "Mandarin Chinese", "de_de": "German",
                "en_us": "English", "es_419": "Spanish", "fr_fr": "French", "hi_in": "Hindi",
                "ja_jp": "Japanese", "pt_br": "Portuguese", "ru_ru": "Russian"}  # fmt: skip


def _public_rows(spec: Any) -> tuple[dict[str, list], dict[str, Any]]:
    """Two rows with exactly the public dataset's columns, and write_hub_fixture's options."""
    hub = spec.dataset.hub
    options: dict[str, Any] = {"split": spec.dataset.split, "config": spec.dataset.config}
    if hub == "google/fleurs":
        name = FLEURS_NAMES[spec.dataset.config]
        rows = {key: [value, value] for key, value in zip(FLEURS_COLUMNS, (7, 16000, "a.wav", "x", "X", 0, 1, name, 0), strict=True)}  # fmt: skip
        return rows, options
    if hub == "DynamicSuperb/SuperbIC_SLURP-Intent":
        return {"instruction": ["Which intent?"] * 2, "label": ["alarm_set", "play_music"]}, options
    if hub == "qmeeus/slurp":
        return {k: v[:2] for k, v in SLURP_ROWS.items()}, options
    assert hub.startswith("AudioLLMs/"), hub
    if spec.answer == "label":
        answers = [f"The speaker's tone sounds {label}." for label in spec.labels[:2]]
    else:
        answers = ["USA.", "trust gods word"]
    rows = {"instruction": ["What is asked?"] * 2, "answer": answers}
    return rows, {**options, "audio_column": "context"}


CATALOGUE_FAMILIES = ("paralinguistics", "language_id", "spoken_qa", "intent", "slot_filling",
                      "summarisation")  # fmt: skip
REGISTRY = TaskRegistry()
HUB_TASKS = sorted(
    name
    for name in REGISTRY.names
    if REGISTRY.get(name).family in CATALOGUE_FAMILIES and REGISTRY.get(name).spec.dataset.hub
)


@pytest.mark.parametrize("task", HUB_TASKS)
def test_every_catalogue_hub_task_runs_on_its_public_columns(tmp_path: Path, task: str) -> None:
    spec = REGISTRY.get(task).spec
    rows, options = _public_rows(spec)
    write_hub_fixture(tmp_path / "copy", rows, **options)
    judge = GullibleJudge()
    with serving(TrackingServer(judge)) as server:
        result = _run(tmp_path, task, tmp_path / "copy", ORACLE + JUDGE % server.url)
    metrics = _metrics(result, task, "oracle")
    assert set(metrics) == set(spec.metrics)
    for name, pooled in metrics.items():  # the oracle answers the reference: every metric best
        best = pooled.get("percent", pooled["value"])  # llm_judge_detailed: 0–5 and its %
        assert best == 100.0 and pooled["n"] == 2, (name, pooled)
    judged = sum(m in ("llm_judge", "llm_judge_detailed") for m in spec.metrics)
    assert len(judge.seen) == 2 * judged
