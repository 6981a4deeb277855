"""IFEval checks against ports of the official ones (google-research ``instruction_following_
eval/instructions.py``) on the four instruction kinds issue 26 item 6 found differing, over
seeded generated replies: a first word with an apostrophe or quotes, text langdetect cannot
classify, hyphenated capital words, keywords that are regular expressions."""

from __future__ import annotations

import random
import re

import pytest

from voxbench.metrics import ifeval


def official_first_word(value: str, num_paragraphs: int, nth: int, first_word: str) -> bool:
    paragraphs = re.split(r"\n\n", value)
    count = len(paragraphs)
    for paragraph in paragraphs:
        if not paragraph.strip():
            count -= 1
    if nth <= count:
        paragraph = paragraphs[nth - 1].strip()
        if not paragraph:
            return False
    else:
        return False
    first = ""
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    for letter in word:
        if letter in {".", ",", "?", "!", "'", '"'}:
            break
        first += letter.lower()
    return count == num_paragraphs and first == first_word.lower()


def official_existence(value: str, keywords: list[str]) -> bool:
    return all(re.search(k, value, flags=re.IGNORECASE) for k in keywords)


def official_forbidden(value: str, words: list[str]) -> bool:
    return not any(re.search(r"\b" + w + r"\b", value, flags=re.IGNORECASE) for w in words)


def official_frequency(value: str, keyword: str, n: int, relation: str) -> bool:
    count = len(re.findall(keyword, value, flags=re.IGNORECASE))
    return count < n if relation == "less than" else count >= n


FIRST = ["Don't", "'Twas", '"Then', "Then,", "then", "THEN!", "Isn't", "Wait...", "O'Neil"]
FILL = [
    "it",
    "ended",
    "well",
    "and",
    "so",
    "on",
    "colour",
    "color",
    "a.b",
    "aXb",
    "STATE-OF-THE-ART",
]


def _reply(rng: random.Random) -> str:
    paragraphs = []
    for _ in range(rng.randint(1, 3)):
        words = [rng.choice(FIRST)] + [rng.choice(FILL) for _ in range(rng.randint(0, 6))]
        paragraphs.append(" ".join(words))
    sep = rng.choice(["\n\n", "\n\n", "\n\n\n\n", "\n \n"])
    return sep.join(paragraphs)


def test_first_word_equals_the_official_check() -> None:
    rng = random.Random(6)
    for _ in range(300):
        reply = _reply(rng)
        n, nth = rng.randint(1, 3), rng.randint(1, 3)
        word = rng.choice(["don", "twas", "then", "isn", "wait", "o", "Then"])
        ours = ifeval.nth_paragraph_first_word(reply, n, nth, word)
        assert ours == official_first_word(reply, n, nth, word), (reply, n, nth, word)


def test_keywords_are_regular_expressions_as_in_the_official_checks() -> None:
    rng = random.Random(7)
    keywords = ["colou?r", "a.b", "state-of", "ended", "\\bso\\b", "and|well"]
    for _ in range(300):
        reply = _reply(rng)
        chosen = rng.sample(keywords, rng.randint(1, 3))
        assert ifeval.existence(reply, chosen) == official_existence(reply, chosen)
        assert ifeval.forbidden_words(reply, chosen) == official_forbidden(reply, chosen)
        n, relation = rng.randint(1, 3), rng.choice(["less than", "at least"])
        assert ifeval.frequency(reply, chosen[0], n, relation) == official_frequency(
            reply, chosen[0], n, relation
        )


def test_a_hyphenated_capital_word_is_one_word() -> None:
    # nltk's word_tokenize keeps "STATE-OF-THE-ART" one token: 2 capital words, not 5.
    text = "The STATE-OF-THE-ART model is GOOD."
    assert ifeval.capital_word_frequency(text, 2, "at least")
    assert not ifeval.capital_word_frequency(text, 3, "at least")


def test_text_langdetect_cannot_classify_passes_the_language_check() -> None:
    pytest.importorskip("langdetect")
    assert ifeval.response_language("12345 !!! 678", "de")  # the official check passes it
    assert not ifeval.response_language("This is an English sentence about cats.", "de")
