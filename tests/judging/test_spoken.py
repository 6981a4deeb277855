"""Facts said aloud are recognised in whatever form the ASR writes them."""

from __future__ import annotations

import pytest

from voxbench.core.benchmark import FactPattern
from voxbench.judging.spoken import fact_holds


@pytest.mark.parametrize(
    ("alternatives", "heard", "holds"),
    [
        (["8:30", "eight thirty"], "The doors open at 8, 30 in the morning", True),
        (["8:30", "eight thirty"], "Doors open at 9:30", False),
        (["\\$?\\b90\\b", "ninety"], "that comes to ninety dollars", True),
        (["\\$?\\b90\\b", "ninety"], "that comes to nineteen dollars", False),
        (["\\$1,299"], "It is twelve hundred ninety nine dollars", False),
        (["\\$1,299"], "It costs 1299 dollars", True),
        (["lighthouse lobby"], "in the Lighthouse-Lobby.", True),
        (["turn[- ]taking"], "Evaluating Turn Taking", True),
        # A compound heard joined or apart is the same word (issue 11, defect 14).
        (["after party"], "The afterparty starts at nine.", True),
        (["afterparty"], "the after party is on the roof", True),
        (["after party"], "after dinner there is a party", False),
    ],
)
def test_spoken_forms(alternatives: list[str], heard: str, holds: bool) -> None:
    assert fact_holds(FactPattern.model_validate(alternatives), heard) is holds


def test_text_runs_check_the_text() -> None:
    from voxbench.judging.spoken import spoken_evidence

    assert spoken_evidence("hello", None).texts == ("hello",)


def test_heard_audio_corroborates_the_transcript_despite_asr_noise() -> None:
    from voxbench.judging.spoken import spoken_evidence

    said = "I tried, but Evaluating Voice Agents in Production is fully booked with Mireille Varga."
    heard = (
        "I tried, but evaluating voice agent's introduction is fully booked with my real margin."
    )
    evidence = spoken_evidence(said, heard)
    assert said in evidence.texts and heard in evidence.texts
    assert evidence.speech_wer is not None and evidence.speech_wer < 0.75


def test_audio_that_says_something_else_is_not_corroborated() -> None:
    from voxbench.judging.spoken import spoken_evidence

    said = "Your total comes to seven hundred sixty nine dollars and forty four cents."
    for heard in ("", "Sorry, could you repeat that?"):
        evidence = spoken_evidence(said, heard)
        assert evidence.texts == (heard,)
        assert "does not match" in evidence.source


def test_heard_contractions_are_no_word_errors() -> None:
    # The heard-vs-transcript WER uses the field's normaliser (Whisper's English one).
    from voxbench.judging.spoken import spoken_evidence

    assert spoken_evidence("You're all set.", "you are all set").speech_wer == 0.0
    assert spoken_evidence("I'm sorry", "I am sorry").speech_wer == 0.0
