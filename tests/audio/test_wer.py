"""Text normalisation and word error rate."""

from __future__ import annotations

import pytest

from voxbench.audio.textnorm import normalize_text, number_to_words
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
