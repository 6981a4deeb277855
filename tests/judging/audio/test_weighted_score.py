"""The logprob-weighted score reads the score's own token (issue 28, defect 4): not a digit of
an explanation before it in the JSON form, a "10" split into two tokens on a 0–10 scale, and
a range ("3-4", "3 or 4") is never read as its first number."""

from __future__ import annotations

import math
import re

import pytest

from voxbench.judging.audio.engine import weighted_score
from voxbench.judging.audio.parse import FormError, parse_form
from voxbench.judging.audio.rubric import parse_rubric
from voxbench.providers.completion import TokenLogprob

from .helpers import accent

TEN = """\
name: clarity
description: How clear the speech is.
steps: [Listen., Score.]
form: {form}
criteria:
  - name: clarity
    description: 10 crystal clear; 0 unintelligible.
    scale: [0, 10]
"""


def tokens(text: str, alternatives: dict[int, list[tuple[str, float]]]) -> list[TokenLogprob]:
    """``text`` as a model's tokens — each digit its own token (as Llama and Qwen tokenizers
    split numbers), other runs whole — with the top alternatives of the n-th token where
    ``alternatives`` has them (probabilities, turned into logprobs)."""
    out = []
    for n, piece in enumerate(re.findall(r"\d|\D+", text)):
        top = tuple((t, math.log(p)) for t, p in alternatives.get(n, []))
        chosen = dict(top).get(piece, math.log(0.5))
        out.append(TokenLogprob(piece, chosen, top))
    return out


def index_of(text: str, digit_occurrence: int) -> int:
    """The token index of the n-th digit of ``text`` (0-based) in ``tokens``."""
    pieces = re.findall(r"\d|\D+", text)
    digits = [i for i, p in enumerate(pieces) if p.isdigit()]
    return digits[digit_occurrence]


def test_the_json_form_reads_the_score_token_not_a_digit_of_the_explanation() -> None:
    bound = accent().model_copy(deep=True)
    bound.rubric.form = "json"
    text = '{"accent": {"explanation": "3 of the vowels sound British", "score": 3}}'
    structure = tokens(
        text,
        {
            index_of(text, 0): [("3", 0.2), ("5", 0.8)],  # the explanation's digit
            index_of(text, 1): [("3", 0.9), ("4", 0.1)],  # the score
        },
    )
    form = parse_form(text, bound)["accent"]
    assert text[form.score_at] == "3" and form.score_at == text.rindex("3")
    assert weighted_score(form, structure, bound.criteria[0]) == pytest.approx(3.1)


def test_the_json_list_form_pairs_each_score_key_with_its_criterion() -> None:
    bound = parse_rubric(
        TEN.replace("{form}", "json").replace(
            "    scale: [0, 10]\n",
            "    scale: [0, 10]\n  - name: pace\n    description: 10 natural; 0 hurried.\n"
            "    scale: [0, 10]\n",
        ),
        source="r.yaml",
    ).bind({})
    text = (
        '{"scores": [{"name": "pace", "explanation": "about 7 words a second", "score": 6}, '
        '{"name": "clarity", "score": 8, "explanation": "clear"}]}'
    )
    forms = parse_form(text, bound)
    assert text[forms["pace"].score_at] == "6" and text[forms["clarity"].score_at] == "8"


def test_a_ten_split_into_two_tokens_weights_as_ten() -> None:
    bound = parse_rubric(TEN.replace("{form}", "lines"), source="r.yaml").bind({})
    text = "- Clarity (0-10): 10 - every word was clear"
    first, second = index_of(text, 3), index_of(text, 4)  # "0-10" holds digits 0 to 2
    structure = tokens(
        text,
        {
            first: [("1", 0.7), ("9", 0.2), ("8", 0.1)],
            second: [("0", 0.9), (" -", 0.1)],  # after "1": "0" makes 10, " -" ends at 1
        },
    )
    form = parse_form(text, bound)["clarity"]
    assert form.score == 10 and text[form.score_at : form.score_at + 2] == "10"
    expected = (0.63 * 10 + 0.07 * 1 + 0.2 * 9 + 0.1 * 8) / 1.0
    assert weighted_score(form, structure, bound.criteria[0]) == pytest.approx(expected, abs=1e-3)


def test_a_one_token_ten_still_weights() -> None:
    bound = parse_rubric(TEN.replace("{form}", "lines"), source="r.yaml").bind({})
    text = "- Clarity (0-10): 10 - clear"
    pieces = ["- Clarity (0-10): ", "10", " - clear"]
    structure = [
        TokenLogprob(pieces[0], 0.0),
        TokenLogprob("10", math.log(0.8), (("10", math.log(0.8)), ("9", math.log(0.2)))),
        TokenLogprob(pieces[2], 0.0, ((" - clear", 0.0),)),
    ]
    form = parse_form(text, bound)["clarity"]
    assert weighted_score(form, structure, bound.criteria[0]) == pytest.approx(9.8)


@pytest.mark.parametrize(
    "answer",
    [
        "- Accent (1-5): 3-4 - somewhere between",
        "- Accent (1-5): 3–4 - somewhere between",
        "- Accent (1-5): 3 or 4 - hard to say",
        "Accent: 3 to 4 — mostly British",
        "Score: 3-4\nExplanation: in between",
    ],
)
def test_a_range_is_not_read_as_its_first_number(answer: str) -> None:
    with pytest.raises(FormError, match="range or a choice of two scores"):
        parse_form(answer, accent())


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("- Accent (1-5): 3 - 40 seconds in the vowels drift", 3),  # 40 is not a score
        ("- Accent (1-5): 4/5 - British", 4),
        ("- Accent (1-5): 4 out of 5 - British", 4),
    ],
)
def test_a_score_followed_by_other_numbers_still_reads(answer: str, score: int) -> None:
    assert parse_form(answer, accent())["accent"].score == score
