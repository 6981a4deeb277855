"""``instruction_following``: every IFEval instruction kind, strict and loose, and the pooling."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from voxbench.metrics import ifeval
from voxbench.metrics.registry import METRICS, ScoringContext

CASES: list[tuple[str, dict[str, Any], str, str]] = [
    # id, kwargs, a reply that follows it, a reply that does not
    ("punctuation:no_comma", {}, "No commas here at all.", "One, two."),
    ("length_constraints:number_words", {"num_words": 5, "relation": "less than"},
     "Just four words here.", "This reply has six words."),
    ("length_constraints:number_words", {"num_words": 3, "relation": "at least"},
     "Three words here.", "Two words."),
    ("length_constraints:number_sentences", {"num_sentences": 2, "relation": "at least"},
     "Dr. Smith came. He left at 3.5 p.m. sharp!", "Only one sentence, Dr. Who."),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2},
     "First part.\n***\nSecond part.", "First.\n***\n\n***\nThird."),
    ("length_constraints:nth_paragraph_first_word",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "Then"},
     "It began.\n\n\"Then it ended.", "It began.\n\nAnd it ended."),
    ("detectable_format:json_format", {}, '```json\n{"a": 1}\n```', "{'a': 1}"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2},
     "Items:\n* one\n- two", "Items:\n* one\n* two\n* three"),
    ("detectable_format:title", {}, "<<My Poem>>\nRoses.", "My Poem\nRoses << >>"),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2},
     "*first* and **second**", "*only one* here"),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2},
     "Section 1\nA\nSection 2\nB", "Section 1\nOnly one"),
    ("detectable_format:constrained_response", {}, "My answer is yes.", "Yes, definitely."),
    ("change_case:english_lowercase", {}, "all of this reply is written in lower case letters.",
     "This reply Starts with a capital."),
    ("change_case:english_capital", {}, "ALL OF THIS REPLY IS WRITTEN IN CAPITAL LETTERS.",
     "NOT ALL of this is capitals."),
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"},
     "NASA and ESA fly.", "Only NASA flies."),
    ("startend:end_checker", {"end_phrase": "Any other questions?"},
     'Done. Any other questions?"', "Any other questions? Done."),
    ("startend:quotation", {}, '"Wrapped in quotes."', "Not wrapped."),
    ("keywords:existence", {"keywords": ["river", "Bridge"]},
     "The bridge over the River.", "Only a river."),
    ("keywords:frequency", {"keyword": "tea", "frequency": 2, "relation": "at least"},
     "Tea, then more tea.", "Just tea."),
    ("keywords:frequency", {"keyword": "tea", "frequency": 2, "relation": "less than"},
     "Just tea.", "Tea and tea."),
    ("keywords:forbidden_words", {"forbidden_words": ["cat", "dog"]},
     "Concatenate the catalogue.", "My Dog barks."),
    ("keywords:letter_frequency", {"letter": "z", "let_frequency": 2, "let_relation": "at least"},
     "Zebras zoom.", "Zebras run."),
    ("language:response_language", {"language": "fr"},
     "Le chat dort sur le canapé pendant que nous mangeons le dîner.",
     "The cat sleeps on the sofa while we eat dinner together."),
    ("detectable_content:postscript", {"postscript_marker": "P.S."},
     "Body text.\nP.S. See you soon.", "Body text without a postscript."),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"},
     "Body.\nP.P.S more.", "Body.\nP.S. only."),
    ("detectable_content:number_placeholders", {"num_placeholders": 2},
     "Dear [name], at [address].", "Dear [name]."),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Write a haiku about rain."},
     "Write a haiku about rain. Drops fall softly.", "Drops fall softly."),
    ("combination:two_responses", {}, "First answer.\n******\nSecond answer.",
     "Same.\n******\nSame."),
]  # fmt: skip


LANGUAGE_CHECKS = {
    "language:response_language",
    "change_case:english_lowercase",
    "change_case:english_capital",
}


@pytest.mark.parametrize(("instruction", "kwargs", "good", "bad"), CASES)
def test_each_instruction_kind_passes_and_fails(
    instruction: str, kwargs: dict[str, Any], good: str, bad: str
) -> None:
    if instruction in LANGUAGE_CHECKS:
        pytest.importorskip("langdetect")  # the test extra has it; the ifeval extra too
    assert ifeval.follows(instruction, kwargs, good) == (True, True)
    assert ifeval.follows(instruction, kwargs, bad)[0] is False


def test_every_check_has_a_case() -> None:
    assert set(ifeval.CHECKS) == {c[0] for c in CASES}


def test_loose_forgives_markdown_and_a_first_or_last_line() -> None:
    # Strictly wrong (a preamble line breaks the quotation; asterisks are not lower case
    # trouble, but they break a JSON reply), loosely right.
    assert ifeval.follows("startend:quotation", {}, 'Sure:\n"quoted"') == (False, True)
    assert ifeval.follows("detectable_format:json_format", {}, '**{"a": 1}**') == (False, True)
    assert ifeval.follows(
        "startend:end_checker", {"end_phrase": "Bye."}, "Text. Bye.\nThanks!"
    ) == (
        False,
        True,
    )
    assert ifeval.follows("punctuation:no_comma", {}, "   ") == (False, False)  # empty never passes


def _ctx(ids: list[str], kwargs: list[dict[str, Any] | None]) -> ScoringContext:
    return ScoringContext(
        reference="prompt",
        language="en",
        target_language="en",
        answer="text",
        columns={"instruction_id_list": ids, "kwargs": kwargs},
    )


def test_unknown_ids_and_missing_kwargs_are_counted_apart_never_passed() -> None:
    metric = METRICS["instruction_following"]
    stats = [
        # Hub rows carry every kwargs key, None where unused.
        metric.score("no commas", _ctx(["punctuation:no_comma"], [{"num_words": None}])),
        metric.score("a, b", _ctx(["punctuation:no_comma", "detectable_format:title"], [{}, {}])),
        metric.score("x", _ctx(["made_up:instruction", "punctuation:no_comma"], [{}, {}])),
        metric.score("x", _ctx(["keywords:existence"], [{"keywords": None}])),
    ]
    assert stats[2]["unchecked"] == {"made_up:instruction": "no check for this instruction id"}
    assert "no keywords" in stats[3]["unchecked"]["keywords:existence"]
    pooled = metric.pool(stats, np.random.default_rng(0))
    # Prompt level: records 1 (followed) and 2 (broken both) only.
    assert pooled["value"] == 50.0 and pooled["n"] == 2
    assert pooled["prompts_unchecked"] == 2
    assert pooled["instructions_unchecked"] == {"keywords:existence": 1, "made_up:instruction": 1}
    # Instruction level: no_comma ✓, no_comma ✗, title ✗, no_comma ✓ → 2 of 4.
    assert pooled["strict_instruction"]["value"] == 50.0
    assert pooled["loose_prompt"]["value"] == 50.0
    assert pooled["instructions"]["punctuation:no_comma"] == {"strict": 66.67, "n": 3}
    assert pooled["strict_instruction"]["ci"] is not None


def test_kwargs_stored_as_json_text_are_read() -> None:
    ctx = ScoringContext(
        reference="p",
        language="en",
        target_language="en",
        answer="text",
        columns={"instruction_id_list": '["startend:quotation"]', "kwargs": "[{}]"},
    )
    assert METRICS["instruction_following"].score('"hi"', ctx)["strict"] == [1]


def test_language_checks_without_langdetect_are_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ifeval, "_detect_language", lambda text: None)
    with pytest.raises(ifeval.Unchecked, match="langdetect"):
        ifeval.follows("language:response_language", {"language": "en"}, "Hello there.")
