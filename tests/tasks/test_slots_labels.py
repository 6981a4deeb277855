"""slot_f1 on hand-computed cases, and label spellings (``label_map``, ``reference_label``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from voxbench.core.errors import ConfigError
from voxbench.metrics.answers import extract_label, reference_label
from voxbench.metrics.registry import METRICS, ScoringContext
from voxbench.metrics.slots import micro_f1, normalize_slot, parse_slots, slot_stats
from voxbench.tasks.datasets.readers import read_records
from voxbench.tasks.spec import TaskSpec


def _ctx(reference: str, **extra: object) -> ScoringContext:
    return ScoringContext(
        reference=reference, language="en", target_language="en", answer="label", **extra
    )  # type: ignore[arg-type]


# -- slot filling -------------------------------------------------------------------------------


def test_parse_slots_reads_json_objects_lists_and_slurp_brackets() -> None:
    assert parse_slots('{"date": "Tomorrow", "person": ["Ann", "Bob"]}') == [
        ("date", "tomorrow"),
        ("person", "ann"),
        ("person", "bob"),
    ]
    assert parse_slots('Here: [{"type": "place_name", "filler": "New York."}]') == [
        ("place_name", "new york")
    ]
    assert parse_slots('{"slots": [{"slot": "Time", "value": "5:00 AM"}]}') == [("time", "5 00 am")]
    assert parse_slots("wake me up at [time : five am] on [date : friday]") == [
        ("time", "five am"),
        ("date", "friday"),
    ]
    assert parse_slots("{}") == [] and parse_slots("[]") == []
    assert parse_slots("I am not sure.") is None
    assert parse_slots('["just", "words"]') is None
    assert normalize_slot("Place Name") == normalize_slot("place-name") == "place_name"


def test_slot_f1_hand_computed() -> None:
    cases = [
        # tp 1 (date), fp 1 (time "5 am"), fn 1 (time "five am")
        ("[date : tomorrow] wake me at [time : five am]", '{"date": "Tomorrow", "time": "5 am"}'),
        # a pair given twice counts twice: tp 2 (place, ann), fp 1 (ann again), fn 1 (bob)
        (
            json.dumps(
                [
                    {"type": "place_name", "filler": "Paris"},
                    {"type": "person", "filler": "Ann"},
                    {"type": "person", "filler": "Bob"},
                ]
            ),
            '[{"slot": "Place Name", "value": "paris."}, {"slot": "person", "value": "ann"},'
            ' {"slot": "person", "value": "ANN"}]',
        ),
        # nothing to find, an unparsed reply: adds nothing
        ("what time is it", "Sorry, there are no slots."),
        # one slot missed by an unparsed reply: fn 1
        ("turn off the [device_type : lights]", "I cannot tell."),
    ]
    stats = [slot_stats(pred, ref) for ref, pred in cases]
    assert [(s["tp"], s["fp"], s["fn"], s["parsed"]) for s in stats] == [
        (1, 1, 1, 1),
        (2, 1, 1, 1),
        (0, 0, 0, 0),
        (0, 0, 1, 0),
    ]
    metric = METRICS["slot_f1"]
    pooled = metric.pool(
        [metric.score(pred, _ctx(ref)) for ref, pred in cases], np.random.default_rng(0)
    )
    # tp 3, fp 2, fn 3: F1 = 2·3 / (2·3 + 2 + 3) = 6/11
    assert pooled["value"] == pytest.approx(54.55)
    assert pooled["precision"] == 60.0 and pooled["recall"] == 50.0 and pooled["parsed"] == 50.0
    lo, hi = pooled["ci"]
    assert lo <= pooled["value"] <= hi
    assert pooled["n"] == 4


def test_slot_f1_edges() -> None:
    assert micro_f1(0, 0, 0) == 100.0
    assert micro_f1(2, 0, 0) == 100.0
    assert micro_f1(0, 3, 0) == 0.0
    perfect = slot_stats("[time : five am]", "[time : five am]")
    assert (perfect["tp"], perfect["fp"], perfect["fn"]) == (1, 0, 0)
    empty = {"value": None, "ci": None, "n": 0, "interval": "bootstrap"}
    assert METRICS["slot_f1"].pool([], None) == empty


# -- labels -------------------------------------------------------------------------------------


def test_label_aliases_in_replies_and_references() -> None:
    labels = ["anger", "happiness", "neutral"]
    aliases = {"angry": "anger", "happy": "happiness", "neu": "neutral"}
    assert extract_label("The speaker sounds angry.", labels, aliases) == "anger"
    assert extract_label("Happy, I think", labels, aliases) == "happiness"
    assert extract_label("neutral", labels, aliases) == "neutral"
    assert extract_label("no idea", labels, aliases) is None
    # exact references: an alias is renamed, a label's case is the label's, others stay
    assert reference_label("neu", labels, aliases, mentioned=False) == "neutral"
    assert reference_label("Anger", labels, aliases, mentioned=False) == "anger"
    assert reference_label("sad", labels, aliases, mentioned=False) == "sad"
    # AudioBench-style sentences: the label named first
    sentence = "From the speaker's speech, it seems they are in a neutral state."
    assert reference_label(sentence, labels, aliases, mentioned=True) == "neutral"
    assert reference_label("The speaker is a female.", ["male", "female"], {}, mentioned=True) == (
        "female"
    )
    assert reference_label("USA.", labels, aliases, mentioned=True) is None


def test_accuracy_and_macro_f1_read_replies_through_the_label_map() -> None:
    labels = ("anger", "happiness", "neutral")
    label_map = {"angry": "anger", "happy": "happiness"}
    pairs = [
        ("She is angry.", "anger"),
        ("happy", "happiness"),
        ("neutral", "anger"),
        ("Happiness!", "happiness"),
    ]
    stats = [
        METRICS["accuracy"].score(p, _ctx(r, labels=labels, label_map=label_map)) for p, r in pairs
    ]
    assert [s["answer"] for s in stats] == ["anger", "happiness", "neutral", "happiness"]
    assert METRICS["accuracy"].pool(stats, None)["value"] == 75.0
    # anger: tp1 fn1 → 2/3; happiness: tp2 → 1; neutral: fp1 → 0; mean = 5/9
    assert METRICS["macro_f1"].pool(stats, None)["value"] == pytest.approx(55.56)


def _manifest(folder: Path, references: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"r{i}", "audio": f"r{i}.wav", "answer": r} for i, r in enumerate(references)]
    (folder / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_records_carry_the_label_their_reference_names(tmp_path: Path) -> None:
    folder = _manifest(
        tmp_path / "d",
        ["The speaker's tone sounds anger.", "It seems they are feeling happy.", "neu"],
    )
    spec = TaskSpec(
        dataset={"path": str(folder)},
        columns={"reference": "answer"},
        answer="label",
        labels=["anger", "happiness", "neutral"],
        label_map={"happy": "happiness", "neu": "neutral"},
        reference_label="mentioned",
        metrics=["accuracy"],
    )
    assert [r.reference for r in read_records(spec)] == ["anger", "happiness", "neutral"]
    odd = _manifest(tmp_path / "e", ["anger", "The speaker sounds bored."])
    with pytest.raises(ConfigError, match=r"record r1 of .*: the reference .*bored.* names none"):
        list(read_records(spec.model_copy(update={"dataset": spec.dataset.model_copy(
            update={"path": str(odd)})})))  # fmt: skip


def test_records_without_an_id_column_are_numbered(tmp_path: Path) -> None:
    folder = _manifest(tmp_path / "d", ["a", "b"])
    spec = TaskSpec(
        dataset={"path": str(folder)},
        columns={"id": None, "reference": "answer"},
        metrics=["exact_match"],
    )
    assert [r.id for r in read_records(spec)] == ["0", "1"]


def test_label_map_must_name_listed_labels_and_a_label_task() -> None:
    with pytest.raises(ValueError, match="label_map maps to sadness, which labels does not list"):
        TaskSpec(
            dataset={"builtin": "speaker_voice"},
            answer="label",
            labels=["anger"],
            label_map={"sad": "sadness"},
            metrics=["accuracy"],
        )
    with pytest.raises(ValueError, match="for a task with answer: label"):
        TaskSpec(
            dataset={"builtin": "speaker_voice"},
            reference_label="mentioned",
            metrics=["exact_match"],
        )
    with pytest.raises(ValueError, match="mentioned needs the labels"):
        TaskSpec(
            dataset={"builtin": "speaker_voice"},
            answer="label",
            reference_label="mentioned",
            metrics=["accuracy"],
        )
