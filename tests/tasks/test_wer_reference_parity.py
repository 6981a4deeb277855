"""English WER against the references users compare with (issue 26 item 3): voxbench's ``wer``
equals jiwer's WER of the texts Whisper's ``EnglishTextNormalizer`` (whisper-normalizer) gives,
on seeded, varied generated pairs; ``wer_spoken``'s rules never touch a number that is not a
time."""

from __future__ import annotations

import random

import jiwer
import pytest
from whisper_normalizer.english import EnglishTextNormalizer

from voxbench.audio.textnorm import normalize_english, normalize_english_spoken
from voxbench.metrics.registry import METRICS, ScoringContext


def _words(text: str) -> list[str]:
    return text.split()


WORDS = _words(
    "the a an I you we they it is was were be been have has had do does did can could will "
    "would shall should may might must cat dog house colour color centre center favourite "
    "meeting tomorrow today tonight order ticket price flight hotel room number street Mr. "
    "Mrs. Dr. St. okay ok um uh hmm yeah yes no not never"
)
CONTRACTIONS = _words("I'm you're it's we'll they've can't won't don't isn't let's y'all o'clock")
NUMBERS = _words(
    "0 1 7 12 19 20 21 99 100 101 250 999 1000 1200 1900 1999 2000 2010 2026 10000 1,000 "
    "12,345 1.5 1.25 2.45 3.50 0.5 .5 1st 2nd 3rd 21st 100th $5 $9.30 $1,200 £20 €3 50% 5-10 "
    "3-2 555-1234 2026-05-14 1.25 million 3 billion twenty-one ninety nine one hundred"
)
PUNCT = list(",.!?;:-—\"'()[]")
UNICODE = _words("naïve café résumé Zoë façade 東京 ñandú Øresund")


def _text(rng: random.Random) -> str:
    n = rng.choice([0, 1, 2, 3, 5, 8, 13, 30])
    out = []
    for _ in range(n):
        pool = rng.choices([WORDS, CONTRACTIONS, NUMBERS, PUNCT, UNICODE], [10, 2, 3, 2, 1])[0]
        word = rng.choice(pool)
        out.append(word.upper() if rng.random() < 0.1 else word)
    return " ".join(out)


def _pairs(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        ref = _text(rng)
        words = ref.split()
        hyp_words = [w for w in words if rng.random() > 0.15]  # deletions
        hyp_words = [rng.choice(WORDS) if rng.random() < 0.1 else w for w in hyp_words]
        if rng.random() < 0.3:
            hyp_words.insert(rng.randrange(len(hyp_words) + 1), rng.choice(NUMBERS + WORDS))
        pairs.append((ref, " ".join(hyp_words) if rng.random() > 0.05 else ""))
    return pairs


PAIRS = _pairs(26, 400)


def _ctx(reference: str) -> ScoringContext:
    return ScoringContext(reference=reference, language="en", target_language="en", answer="text")


def test_the_default_english_normaliser_is_whispers_exactly() -> None:
    whisper = EnglishTextNormalizer()
    texts = [t for pair in PAIRS for t in pair]
    assert [normalize_english(t) for t in texts] == [whisper(t) for t in texts]


def test_wer_equals_jiwer_on_whisper_normalised_text() -> None:
    whisper = EnglishTextNormalizer()
    errors = units = 0
    for ref, hyp in PAIRS:
        stats = METRICS["wer"].score(hyp, _ctx(ref))
        r, h = whisper(ref), whisper(hyp)
        if r.split():
            out = jiwer.process_words(r, h if h.split() else "")
            expected = out.substitutions + out.deletions + out.insertions
        else:
            expected = len(h.split())
        assert (stats["errors"], stats["units"]) == (expected, len(r.split())), (ref, hyp)
        errors, units = errors + expected, units + len(r.split())
    pooled = METRICS["wer"].pool([METRICS["wer"].score(h, _ctx(r)) for r, h in PAIRS], None)
    assert pooled["value"] == round(100 * errors / units, 2)


def _number_text(rng: random.Random) -> str:
    """A sentence of words and numbers (years, counts, decimals, ranges, after time words),
    with no am/pm, colon, bracket or other spoken-form trigger."""
    time_words = _words("at from until till to by before after around about between and or")
    words = []
    for _ in range(rng.randint(1, 10)):
        kind = rng.random()
        if kind < 0.4:
            words += [rng.choice(time_words), rng.choice(NUMBERS)]
        elif kind < 0.7:
            words.append(rng.choice(NUMBERS))
        else:
            words.append(rng.choice(["feet", "people", "million", "percent", "dollars", "the"]))
    return " ".join(words)


def test_spoken_forms_leave_numbers_as_whisper_gives_them() -> None:
    rng = random.Random(1900)
    whisper = EnglishTextNormalizer()
    texts = [_number_text(rng) for _ in range(400)]
    texts += ["before 1900", "from 2000 to 2010", "at 1200 feet", "1.25 million"]
    differ = [t for t in texts if normalize_english_spoken(t) != whisper(t)]
    assert differ == []


@pytest.mark.parametrize(
    ("text", "normal"),
    [("before 1900", "before 1900"), ("from 2000 to 2010", "from 2000 to 2010"),
     ("at 1200 feet", "at 1200 feet"), ("1.25 million", "1250000")],
)  # fmt: skip
def test_the_issues_examples(text: str, normal: str) -> None:
    assert normalize_english(text) == normal == normalize_english_spoken(text)
    stats = METRICS["wer_spoken"].score(text, _ctx(text))
    assert stats["errors"] == 0
    words = METRICS["wer_spoken"].score(normal, _ctx(text))
    assert words["errors"] == 0
