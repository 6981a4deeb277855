"""cpWER and WDER on hand-computed speaker-labelled transcripts."""

from __future__ import annotations

import numpy as np
import pytest

from voxbench.core.results import TaskScores
from voxbench.metrics.diarisation import UnparsableTranscript, parse_transcript
from voxbench.metrics.registry import METRICS, ScoringContext
from voxbench.report.tasks import table_rows

REFERENCE = "A: hello there\nB: good morning to you\nA: how are you"
"""Speaker a: 5 words, speaker b: 4 words; N = 9."""


def _ctx(reference: str = REFERENCE) -> ScoringContext:
    return ScoringContext(reference=reference, language="en", target_language="en",
                          answer="text")  # fmt: skip


def cpwer(prediction: str, reference: str = REFERENCE) -> dict:
    return METRICS["cpwer"].score(prediction, _ctx(reference))


def wder(prediction: str, reference: str = REFERENCE) -> dict:
    return METRICS["wder"].score(prediction, _ctx(reference))


def test_parse_labels_and_continuation_lines() -> None:
    turns = parse_transcript("Spk 1: Hello, there!\nstill me\n\nSPK 2: hi", str.lower)
    assert turns.words == ["hello,", "there!", "still", "me", "hi"]
    assert turns.speakers == ["spk 1"] * 4 + ["spk 2"]
    with pytest.raises(UnparsableTranscript, match="line 1"):
        parse_transcript("no label here\nA: then one", str.lower)
    # A sentence with a colon far in is not a label: it continues the turn.
    turns = parse_transcript("A: yes\nwhat I mean is this: a thing", str.lower)
    assert set(turns.speakers) == {"a"}


def test_perfect_with_other_labels() -> None:
    prediction = "X: hello there\nY: good morning to you\nX: how are you"
    assert cpwer(prediction)["errors"] == 0
    assert wder(prediction)["errors"] == 0 and wder(prediction)["units"] == 9
    assert cpwer(prediction)["mapping"] == {"x": "a", "y": "b"}


def test_cpwer_counts_a_missing_speaker_as_deletions() -> None:
    """AU-Harness's (S+I)/N gives 0 here; the standard (S+D+I)/N gives 4/9."""
    got = cpwer("A: hello there\nA: how are you")
    assert (got["substitutions"], got["deletions"], got["insertions"]) == (0, 4, 0)
    assert (got["errors"], got["units"]) == (4, 9)
    deletion_free = got["substitutions"] + got["insertions"]
    assert deletion_free == 0  # what AU-Harness would report


def test_cpwer_hand_computed_with_swapped_attribution() -> None:
    # "good morning" said by a in the prediction: a gets 7 words, b 2 ("to you").
    got = cpwer("P: hello there good morning\nQ: to you\nP: how are you")
    # Best pairing p→a, q→b. a: "hello there how are you" vs "hello there good morning how
    # are you": 2 insertions; b: "good morning to you" vs "to you": 2 deletions.
    assert (got["substitutions"], got["deletions"], got["insertions"]) == (0, 2, 2)
    assert got["errors"] == 4
    pooled = METRICS["cpwer"].pool([got, cpwer(REFERENCE)], np.random.default_rng(0))
    assert pooled["value"] == pytest.approx(100 * 4 / 18, abs=0.01)


def test_cpwer_extra_speaker_is_insertions() -> None:
    got = cpwer(REFERENCE + "\nC: yes indeed")
    assert (got["insertions"], got["errors"]) == (2, 2)


def test_wder_hand_computed() -> None:
    # Words all right, "good morning" given to the wrong speaker: 2 of 9 aligned words.
    got = wder("P: hello there good morning\nQ: to you\nP: how are you")
    assert (got["errors"], got["units"]) == (2, 9)
    # A substitution is aligned (counts), a deletion is not: "hello" → "yellow", "you" gone.
    got = wder("A: yellow there\nB: good morning to\nA: how are you")
    assert (got["errors"], got["units"]) == (0, 8)
    # One predicted speaker for two: only the larger one maps, b's 4 words are wrong.
    got = wder("A: hello there good morning to you how are you")
    assert (got["errors"], got["units"]) == (4, 9)


def test_unparsable_prediction_is_counted_never_dropped() -> None:
    for kind, score in (("cpwer", cpwer), ("wder", wder)):
        got = score("hello there good morning to you how are you")
        assert got["unparsable"] == 1 and (got["errors"], got["units"]) == (9, 9), kind
        pooled = METRICS[kind].pool([got, score(REFERENCE)], np.random.default_rng(0))
        assert pooled["n"] == 2 and pooled["unparsable"] == 1
        assert pooled["value"] == pytest.approx(50.0)


def test_unparsable_reference_is_left_out_and_counted() -> None:
    bad = cpwer("A: hi", reference="no labels at all")
    good = cpwer(REFERENCE)
    pooled = METRICS["cpwer"].pool([bad, good], np.random.default_rng(0))
    assert pooled["n"] == 1 and pooled["unparsable_references"] == 1 and pooled["value"] == 0.0


def test_speaker_count_error_is_reported() -> None:
    stats = [
        cpwer(REFERENCE),
        cpwer("A: hello there good morning to you how are you"),
        cpwer(REFERENCE + "\nC: yes\nD: no"),
    ]
    pooled = METRICS["cpwer"].pool(stats, np.random.default_rng(0))
    assert pooled["speaker_count_error"] == pytest.approx((0 + 1 + 2) / 3, abs=1e-3)
    assert pooled["speaker_count_right"] == pytest.approx(100 / 3, abs=0.01)
    assert not METRICS["cpwer"].higher_is_better and not METRICS["wder"].higher_is_better
    scores = {"tasks": {"t": {"m": {"records": 3, "answered": 3, "errors": 0, "empties": 0,
                                    "missing": 0, "metrics": {"cpwer": {**pooled,
                                    "higher_is_better": False, "unparsable": 1}}}}}}  # fmt: skip
    (row,) = table_rows(TaskScores.model_validate(scores), ["m"])
    assert "1 unparsable predictions" in row[2] and row[1] == "cpwer ↓"


def test_normalised_like_wer() -> None:
    # Whisper's English normaliser on each turn: "I'm" = "I am", punctuation out.
    got = cpwer("A: I'm here.", reference="A: I am here")
    assert got["errors"] == 0 and got["units"] == 3


def test_builtin_who_said_what_scores_labels_by_the_best_mapping(tmp_path) -> None:
    """The built-in diarisation task end to end: a model naming the speakers otherwise (and
    one that gives every word to one speaker) against the speaker-labelled references."""
    from tests.tasks.conftest import FakeEndpoints, run_yaml

    def relabelled(request) -> str:  # A→"Speaker 2", B→"Speaker 1", …: same attribution
        names = {"A": "Speaker 2", "B": "Speaker 1", "C": "Speaker 4", "D": "Speaker 3"}
        return "\n".join(names[line[0]] + line[1:] for line in request.reference.splitlines())

    def one_voice(request) -> str:
        return "A: " + " ".join(line[3:] for line in request.reference.splitlines())

    text = "models: [{name: m, model: vllm/q}]\ntasks: [builtin_who_said_what]\n"
    for reply, perfect in ((relabelled, True), (one_voice, False)):
        result = run_yaml(
            text + f"output_dir: {reply.__name__}\n", tmp_path, FakeEndpoints(reply=reply)
        )
        metrics = result.scores["tasks"]["builtin_who_said_what"]["m"]["metrics"]
        assert metrics["cpwer"]["n"] == 11
        if perfect:
            assert metrics["cpwer"]["value"] == 0.0 and metrics["wder"]["value"] == 0.0
        else:  # the single-speaker records are right, the others lose their other speakers
            assert 0.0 < metrics["cpwer"]["value"] < 100.0 and metrics["wder"]["value"] > 0.0
