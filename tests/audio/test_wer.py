"""Text normalisation and word error rate."""

from __future__ import annotations

import pytest

from voxbench.audio.textnorm import (
    ENGLISH_WER_NORMALIZER,
    SPOKEN_ENGLISH_NORMALIZER,
    normalize_english,
    normalize_english_spoken,
    normalize_text,
    number_to_words,
)
from voxbench.audio.wer import word_error_rate, word_errors


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "zero"),
        (13, "thirteen"),
        (45, "forty five"),
        (101, "one hundred one"),
        (1299, "one thousand two hundred ninety nine"),
        (2_000_005, "two million five"),
    ],
)
def test_number_to_words(n, words):
    assert number_to_words(n) == words


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("Doors open at 8:30!", "doors open at eight thirty"),
        (
            "It's $90, or $1,299.50.",
            "its ninety dollars or one thousand two hundred ninety nine dollars fifty cents",
        ),
        ("Room H-101 at 2:00 PM", "room h one hundred one at two pm"),
        ("at 10:05 a.m. on the 21st", "at ten oh five am on the twenty first"),
        ("The A.S.R. talk, um, Turn-Taking", "the asr talk turn taking"),
        ("3.5% off", "three point five percent off"),
        ("I\u2019m Priya \u2014 yes", "im priya yes"),
    ],
)
def test_normalize_text(text, normal):
    assert normalize_text(text) == normal


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        # times written with a dot, as in British English
        ("Doors open at 9.30 am", "doors open at nine thirty am"),
        ("the talk starts 9.30 am", "the talk starts nine thirty am"),
        ("from 10.05 until 11.45", "from ten oh five until eleven forty five"),
        # times written as bare digits (24-hour or glued to am/pm)
        ("Lunch is at 1245", "lunch is at twelve forty five"),
        ("check out by 1100", "check out by eleven"),
        ("the shuttle leaves at 115pm", "the shuttle leaves at one fifteen pm"),
        ("930am sharp", "nine thirty am sharp"),
        ("1245 p.m.", "twelve forty five pm"),
        # ranges: the dash is said "to"
        ("open 1-3pm", "open one to three pm"),
        ("9am-5pm", "nine am to five pm"),
        ("10:30–11:15", "ten thirty to eleven fifteen"),
        ("9.30-11.00 am", "nine thirty to eleven am"),
        ("ages 5-10", "ages five to ten"),
        # what must stay as it was
        ("3.5% off", "three point five percent off"),
        ("it costs $9.30", "it costs nine dollars thirty cents"),
        ("1299 tickets", "one thousand two hundred ninety nine tickets"),
        ("at 1299 dollars", "at one thousand two hundred ninety nine dollars"),
        ("on 2026-05-14", "on two thousand twenty six five fourteen"),
        ("call 555-1234", "call five hundred fifty five one thousand two hundred thirty four"),
        ("1.5-2.5 km", "one point five two point five km"),
        ("I am 9 amazing", "i am nine amazing"),
    ],
)
def test_spoken_times_and_number_ranges_normalise_like_their_written_forms(text, normal):
    assert normalize_text(text) == normal


@pytest.mark.parametrize(
    ("written", "heard"),
    [
        ("Doors open at 9.30 am", "doors open at nine thirty am"),
        ("Lunch is at 1245", "Lunch is at 12:45."),
        ("The shuttle leaves at 115pm", "The shuttle leaves at 1:15 p.m."),
        ("Open 1-3pm", "open one to three pm"),
        ("Open 1-3pm", "Open 1 to 3 p.m."),
        ("See you at the after-party", "see you at the afterparty"),
        ("See you at the afterparty", "see you at the after party"),
        ("See you at the after party", "See you at the after-party."),
        ("A gluten-free lunch", "a gluten free lunch"),
    ],
)
def test_written_and_heard_forms_have_no_word_errors(written, heard):
    assert word_error_rate(written, heard) == 0.0
    assert word_error_rate(heard, written) == 0.0


def test_compounds_are_only_joined_when_the_other_side_has_the_joined_word():
    # "after party" against "afterparty" is the same words; against "after dinner" it is not.
    assert word_error_rate("after party", "after dinner") == 0.5
    assert word_errors("the afterparty", "the after party").insertions == 0


def test_digits_and_spoken_numbers_are_the_same_words():
    assert word_error_rate("Two tickets cost $90.", "two tickets cost ninety dollars") == 0.0
    assert word_error_rate("Doors open at 8:30", "doors open at eight thirty.") == 0.0
    assert word_error_rate("twenty-one", "21") == 0.0


def test_rate_counts_substitutions_deletions_insertions():
    errors = word_errors("the cat sat on the mat", "the cat sat on a mat today")
    assert (errors.substitutions, errors.deletions, errors.insertions) == (1, 0, 1)
    assert errors.rate == pytest.approx(2 / 6)
    assert word_error_rate("Hello, World!", "hello world", normalize=False) == 1.0


def test_lists_pool_errors_and_empty_texts_are_handled():
    assert word_error_rate(["a b c d", "e f"], ["a b c d", "e x"]) == pytest.approx(1 / 6)
    assert word_error_rate("", "") == 0.0
    assert word_error_rate("", "something") == 1.0
    assert word_error_rate("two words", "") == 1.0
    with pytest.raises(ValueError):
        word_error_rate(["a"], ["a", "b"])


# -- the field's normaliser (Whisper's English one) and what voxbench adds to it ----------------


@pytest.mark.parametrize(
    ("reference", "hypothesis", "wer"),
    [
        # contractions are the same words (our old normaliser scored these 1.00 and 0.67)
        ("I'm", "I am", 0.0),
        ("You're all set", "you are all set", 0.0),
        ("It's five dollars", "it is $5", 0.0),
        ("We'll see", "we will see", 0.0),
        ("Colour", "color", 0.0),
        ("Mr. Smith", "mister smith", 0.0),
        # a real error still counts: 1 substitution in 4 reference words
        ("You're all set", "you are all sad", 0.25),
    ],
)
def test_english_wer_uses_whispers_normaliser(reference, hypothesis, wer):
    assert word_error_rate(reference, hypothesis) == pytest.approx(wer)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Doors open at 8:30 a.m.", "doors open at eight thirty am"),
        ("at five o'clock", "at 5:00"),
        ("12:45 p.m.", "twelve forty five pm"),
        ("at 9.30 pm", "at nine thirty pm"),
        ("I can't", "I cannot"),
        ("okay", "OK"),
        ("50 %", "fifty percent"),
        # round brackets hold spoken words in an agent's text (Whisper's drops them)
        (
            "Student ticket: $45 (ID checked at the door).",
            "student ticket $45 ID checked at the door",
        ),
    ],
)
def test_voxbench_adds_what_whispers_normaliser_lacks(written, said):
    from whisper_normalizer.english import EnglishTextNormalizer

    whisper = EnglishTextNormalizer()
    assert whisper(written) != whisper(said)  # Whisper's normaliser alone leaves an error
    assert normalize_english(written) == whisper(written)  # the default is Whisper's exactly
    assert normalize_english_spoken(written) == normalize_english_spoken(said)
    assert word_error_rate(written, said) == 0.0


def test_square_bracketed_tags_are_not_words():
    # Transcription conventions for non-speech, dropped as Whisper's normaliser does.
    assert word_error_rate("[laughter] hello there", "hello there") == 0.0


def test_english_normaliser_is_named_for_outputs():
    assert ENGLISH_WER_NORMALIZER == "whisper-english"
    assert SPOKEN_ENGLISH_NORMALIZER == "whisper-english+voxbench"
    assert normalize_english("Hello, World! Um, I'm here.") == "hello world i am here"


@pytest.mark.parametrize(
    "text",
    [
        "before 1900",
        "from 2000 to 2010",
        "at 1200 feet",
        "1.25 million",
        "at 1.25 million",
        "around 2.45 percent",
        "between 10 and 20",
        "by 2030 we will",
        "ages 5-10",
        "the score was 3-2",
        "at 9.30",
        "by 0930",
    ],
)
def test_spoken_forms_never_rewrite_a_number_that_is_not_a_time(text):
    # Issue 26 item 3: "before 1900" became "before 19", "at 1200 feet" "at 12 feet".
    from whisper_normalizer.english import EnglishTextNormalizer

    assert normalize_english_spoken(text) == EnglishTextNormalizer()(text)
    assert normalize_english(text) == EnglishTextNormalizer()(text)
