"""``meteor`` / ``meteor_nosyn`` against nltk's ``meteor_score`` (issue 26 item 5) on seeded,
varied generated pairs: equal without WordNet always, and with WordNet where one is installed
(the test is skipped on a machine without)."""

from __future__ import annotations

import random

import pytest
from nltk.translate.meteor_score import meteor_score

from voxbench.metrics import meteor
from voxbench.metrics.answers import basic_normalize
from voxbench.metrics.registry import METRICS, ScoringContext

VOCAB = str.split(
    "the a cat cats dog dogs sat sitting sits on mat mats is was running runs run quick "
         "quickly fast big large small little house home car automobile buy purchase happy "
         "glad the the a a on on naïve café 東京 42 1999"
)  # fmt: skip


class NoWordNet:
    def synsets(self, word: str, *args: object, **kwargs: object) -> list[object]:
        return []


def _pairs(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        ref = [rng.choice(VOCAB) for _ in range(rng.choice([0, 1, 2, 4, 7, 12, 25]))]
        hyp = [w for w in ref if rng.random() > 0.2]
        rng.shuffle(hyp) if rng.random() < 0.2 else None
        hyp += [rng.choice(VOCAB) for _ in range(rng.randint(0, 3))]
        out.append((" ".join(ref).upper() if rng.random() < 0.1 else " ".join(ref),
                    " ".join(hyp) + rng.choice(["", ".", "!"])))  # fmt: skip
    return out


def _ctx(reference: str) -> ScoringContext:
    return ScoringContext(reference=reference, language="en", target_language="en", answer="text")


def test_meteor_nosyn_equals_nltk_without_wordnet() -> None:
    for ref, hyp in _pairs(5, 400):
        ours = METRICS["meteor_nosyn"].score(hyp, _ctx(ref))["score"]
        theirs = meteor_score(
            [basic_normalize(ref).split()], basic_normalize(hyp).split(), wordnet=NoWordNet()
        )
        assert ours == pytest.approx(theirs, abs=1e-6), (ref, hyp)


def test_two_empty_texts_score_zero_as_nltk() -> None:
    assert METRICS["meteor_nosyn"].score("", _ctx(""))["score"] == 0.0


def test_meteor_equals_nltk_with_the_local_wordnet() -> None:
    wordnet = meteor.wordnet_reader()
    if wordnet is None:
        pytest.skip("no local WordNet (nothing is downloaded)")
    for ref, hyp in _pairs(6, 400):
        ours = METRICS["meteor"].score(hyp, _ctx(ref))["score"]
        theirs = meteor_score(
            [basic_normalize(ref).split()], basic_normalize(hyp).split(), wordnet=wordnet
        )
        assert ours == pytest.approx(theirs, abs=1e-6), (ref, hyp)
