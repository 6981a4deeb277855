"""The evaluation form: every accepted shape, and every way an answer is refused."""

from __future__ import annotations

import pytest

from voxbench.judging.audio.parse import FormError, parse_form
from voxbench.judging.audio.rubric import load_rubric

from .helpers import accent

TONE = load_rubric("tone").bind({})


@pytest.mark.parametrize(
    "answer",
    [
        "- Accent (1-5): 3 - some Bavarian phrases, vowels lean standard",
        "Accent: 3 — some Bavarian phrases",
        "**Accent (1-5):** 3/5 some Bavarian phrases",
        "Accent score: 3 out of 5. some Bavarian phrases",
        "Accent (1-5): 3\nExplanation: some Bavarian phrases",
        "Score: 3\nExplanation: some Bavarian phrases",
        '{"accent": {"score": 3, "explanation": "some Bavarian phrases"}}',
        '```json\n{"score": 3, "explanation": "some Bavarian phrases"}\n```',
        '{"scores": [{"name": "accent", "score": "3", "explanation": "some Bavarian phrases"}]}',
    ],
)
def test_accepted_shapes(answer: str) -> None:
    form = parse_form(answer, accent())["accent"]
    assert form.score == 3 and "Bavarian phrases" in form.explanation
    assert answer[form.score_at] == "3" or form.score_at == -1


def test_several_criteria_each_get_their_line() -> None:
    answer = "- Politeness (1-5): 5 - thanked the caller\n- Warmth (1-5): 2 - flat and hurried"
    forms = parse_form(answer, TONE)
    assert (forms["politeness"].score, forms["warmth"].score) == (5, 2)
    assert forms["warmth"].explanation == "flat and hurried"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty"),
        ("I think it sounds fine.", "accent: missing"),
        ("- Accent (1-5): 4.5 - almost", "not a whole number"),
        ("- Accent (1-5): 7 - great", "outside 1-5"),
        ("- Accent (1-5): 0 - none", "outside 1-5"),
        ("- Accent (1-5): 4 -", "explanation is missing"),
        ("Accent: 4 - a\nAccent: 5 - b", "given twice"),
        ('{"accent": {"score": 4}}', "explanation is missing"),
        ('{"accent": 4', "does not parse"),
        ('{"accent": {"score": true, "explanation": "x"}}', "no score"),
    ],
)
def test_refused_answers_say_why(answer: str, reason: str) -> None:
    with pytest.raises(FormError, match=reason):
        parse_form(answer, accent())


def test_a_missing_criterion_of_several_is_refused() -> None:
    with pytest.raises(FormError, match="warmth: missing"):
        parse_form("- Politeness (1-5): 5 - thanked the caller", TONE)
