"""Each metric on hand-computed cases; answer extraction; the bootstrap interval."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import sacrebleu

from voxbench.metrics.answers import extract_calls, extract_choice, extract_label
from voxbench.metrics.registry import METRICS, ScoringContext, values_equal
from voxbench.tasks.engine.chunking import plan_pieces
from voxbench.tasks.engine.work_queue import join_chunks


def ctx(
    reference: str,
    language: str = "en",
    *,
    target: str | None = None,
    answer: str = "text",
    **extra: Any,
) -> ScoringContext:
    return ScoringContext(
        reference=reference,
        language=language,
        target_language=target or language,
        answer=answer,
        **extra,
    )


def pooled(name: str, pairs: list[tuple[str, ScoringContext]], seed: int | None = 0) -> dict:
    metric = METRICS[name]
    stats = [metric.score(p, c) for p, c in pairs]
    return metric.pool(stats, np.random.default_rng(seed) if seed is not None else None)


def test_wer_pools_errors_over_words_after_normalisation() -> None:
    # Whisper's English normaliser: "It's 8." and "it is eight" are both "it is 8"
    # → 0 errors of 3 words ("its eight" would be 2 errors: "its" is another word than "it's").
    # "the cat sat" vs "the bat sat down": 1 substitution + 1 insertion over 3 words.
    out = pooled(
        "wer",
        [("it is eight", ctx("It's 8.")), ("the bat sat down", ctx("the cat sat"))],
    )
    assert out["value"] == pytest.approx(100 * 2 / 6, abs=0.01)
    assert out["n"] == 2
    assert out["ci"][0] <= out["value"] <= out["ci"][1]
    assert out["normalizer"] == "whisper-english"
    # "8 o'clock" is Whisper's "80 clock": only wer_spoken's spoken forms make it "8".
    spoken = [("it is eight", ctx("It's 8 o'clock."))]
    assert pooled("wer", spoken)["value"] > 0
    assert pooled("wer_spoken", spoken)["value"] == 0
    assert pooled("wer_spoken", spoken)["normalizer"] == "whisper-english+voxbench"


def test_wer_scores_contractions_as_their_expansions() -> None:
    # The field's normaliser: "I'm" = "I am", "You're all set" = "you are all set".
    pairs = [("I am", ctx("I'm")), ("you are all set", ctx("You're all set"))]
    assert pooled("wer", pairs)["value"] == 0.0
    assert pooled("wer", [("bonjour", ctx("Bonjour", "fr"))])["normalizer"] == "basic"


def test_wer_non_english_uses_basic_normalisation_and_cer_for_no_space_languages() -> None:
    # French: punctuation and case ignored, numbers not spelled out in English.
    assert pooled("wer", [("bonjour le monde", ctx("Bonjour, le monde !", "fr"))])["value"] == 0
    # Chinese: 4 characters, one wrong → 25% (a space-split "WER" would say 100%).
    assert pooled("wer", [("今天天气", ctx("今天天汽", "zh"))])["value"] == 25.0


def test_mer_counts_han_characters_and_english_words_as_units() -> None:
    from voxbench.metrics.registry import mixed_units

    assert mixed_units("我想Book一个table.") == ["我", "想", "book", "一", "个", "table"]
    # 6 units; "table" → "tables" and 个 dropped: 2 errors → 33.33% (CER would count letters).
    value = pooled("mer", [("我想book一tables", ctx("我想Book一个table.", "zh"))])["value"]
    assert value == pytest.approx(33.33, abs=0.01)


def test_cer_counts_character_edits() -> None:
    # "kitten" → "sitting": 3 edits over 6 characters.
    assert pooled("cer", [("sitting", ctx("kitten"))])["value"] == 50.0


@pytest.mark.parametrize("language", ["zh", "ja", "zh-CN"])
def test_cer_ignores_spaces_where_the_script_writes_none(language: str) -> None:
    # The same characters spaced or not are the same text (spacing each character scored
    # 91.7%); a wrong character still counts, over the characters alone.
    reference = ctx("我想预订明天下午的会议室", language)
    assert pooled("cer", [("我想 预订 明天 下午 的 会议室", reference)])["value"] == 0.0
    assert pooled("cer", [(" ".join("我想预订明天下午的会议室"), reference)])["value"] == 0.0
    one_wrong = pooled("cer", [("我想 预订 明天 下午 的 会议厅", reference)])["value"]
    assert one_wrong == pytest.approx(100 / 12, abs=0.01)


def test_exact_match_accuracy_and_choice_extraction() -> None:
    assert (
        pooled("exact_match", [("Paris.", ctx("paris")), ("Lyon", ctx("Paris"))])["value"] == 50.0
    )
    choices = ("red", "green", "blue")
    c = ctx("B", answer="choice", choices=choices)
    replies = ["B", "(B) green", "The answer is B.", "I think it's green.", "A", "no idea"]
    out = pooled("accuracy", [(r, c) for r in replies])
    assert out["value"] == pytest.approx(100 * 4 / 6, abs=0.01)


def test_label_extraction_and_macro_f1() -> None:
    labels = ("male", "female")
    assert extract_label("It sounds female to me", list(labels)) == "female"
    assert extract_label("Male.", list(labels)) == "male"
    assert extract_label("can't tell", list(labels)) is None
    # refs m m f f ; preds m f f (none) → male: tp1 fp0 fn1 → F1 2/3; female: tp1 fp1 fn1 → 1/2
    pairs = [
        ("male", ctx("male", answer="label", labels=labels)),
        ("female", ctx("male", answer="label", labels=labels)),
        ("female", ctx("female", answer="label", labels=labels)),
        ("unsure", ctx("female", answer="label", labels=labels)),
    ]
    assert pooled("macro_f1", pairs)["value"] == pytest.approx(100 * (2 / 3 + 1 / 2) / 2, abs=0.01)
    assert pooled("accuracy", pairs)["value"] == 50.0


def test_choice_letter_extraction_edge_cases() -> None:
    assert extract_choice("A) the first", ["x", "y"]) == "A"
    assert extract_choice("Answer: (d)", ["a", "b", "c", "d"]) == "D"
    assert extract_choice("blue and green", ["red", "green", "blue"]) is None  # two named


def test_function_call_match_with_per_field_breakdown() -> None:
    schemas = {
        "book": {
            "properties": {
                "n": {"type": "integer"},
                "tags": {"type": "array", "uniqueItems": True},
                "who": {"type": "string"},
            }
        }
    }
    reference = json.dumps(
        [{"name": "book", "arguments": {"n": 2, "tags": ["a", "b"], "who": "Ann Lee"}}]
    )
    c = ctx(reference, answer="function_call", tool_schemas=schemas)
    right = '```json\n[{"name": "book", "arguments": {"n": 2, "tags": ["b", "a"], "who": "ann lee "}}]\n```'
    wrong_value = '{"name": "book", "arguments": {"n": 3, "tags": ["a", "b"], "who": "Ann Lee"}}'
    wrong_name = '{"name": "cancel", "arguments": {}}'
    out = pooled(
        "function_call_match", [(right, c), (wrong_value, c), (wrong_name, c), ("no calls", c)]
    )
    assert out["value"] == 25.0
    assert out["parsed"] == 75.0 and out["name_accuracy"] == 50.0
    assert out["fields"]["book.n"] == {"accuracy": 25.0, "n": 4}
    assert out["fields"]["book.who"] == {"accuracy": 50.0, "n": 4}


def test_values_equal_rules() -> None:
    # BFCL's AST checker: types exactly (an int is a float), strings standardised.
    assert not values_equal(1, "1.0") and not values_equal(True, 1)
    assert not values_equal(42, 5.0, {"type": "integer"})
    assert values_equal(2.0, 2, {"type": "number"})
    assert values_equal(["a", "b"], ["b", "a"], {"uniqueItems": True})
    assert not values_equal(["a", "b"], ["b", "a"], {"type": "array"})
    assert values_equal({"x": [1]}, {"x": [1]})
    assert not values_equal([1], ["1"], {"type": "array", "items": {"type": "integer"}})
    assert not values_equal({"x": 1}, {"x": 1, "y": 2})
    assert extract_calls(
        '{"tool_calls": [{"function": {"name": "f", "arguments": "{\\"a\\": 1}"}}]}'
    ) == [{"name": "f", "arguments": {"a": 1}}]


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_sacrebleu_metrics_equal_sacrebleu_corpus_scores(name: str) -> None:
    refs = ["Le chat dort sur le canapé.", "Nous allons au marché demain.", "Merci beaucoup."]
    hyps = ["Le chat dort sur le sofa.", "Nous allons au marché demain matin.", "Merci."]
    expected = {
        "bleu": sacrebleu.corpus_bleu(hyps, [refs]).score,
        "chrf": sacrebleu.corpus_chrf(hyps, [refs]).score,
        "ter": sacrebleu.corpus_ter(hyps, [refs]).score,
    }[name]
    out = pooled(name, [(h, ctx(r, "en", target="fr")) for h, r in zip(hyps, refs, strict=True)])
    assert out["value"] == pytest.approx(expected, abs=0.01)
    assert out["ci"] is not None and out["n"] == 3


def test_sacrebleu_tokenizer_follows_the_target_language() -> None:
    stats = METRICS["bleu"].score("今天天气很好", ctx("今天天气很好", "en", target="zh"))
    assert stats["language"] == "zh"
    assert (
        pooled("bleu", [("今天天气很好", ctx("今天天气很好", "en", target="zh"))])["value"] == 100.0
    )


def test_interval_is_seeded_and_empty_is_none() -> None:
    pairs = [("a b", ctx("a c")), ("a b c", ctx("a b c")), ("x", ctx("y z"))]
    assert pooled("wer", pairs, seed=1) == pooled("wer", pairs, seed=1)
    empty = METRICS["wer"].pool([], np.random.default_rng(0))
    assert empty == {"value": None, "ci": None, "n": 0, "interval": "bootstrap"}


def test_chunking_and_boundary_aware_joining() -> None:
    pieces = plan_pieces(25, None, max_seconds=10, overlap_seconds=2, search_fraction=0)
    assert [(p.start, p.end) for p in pieces] == [(0, 10), (8, 18), (16, 25)]  # hard cuts
    assert (
        join_chunks(["the quick brown fox", "Brown fox jumps over", "over the dog."])
        == "the quick brown fox jumps over the dog."
    )
    assert join_chunks(["hello", "world"]) == "hello world"  # never fused
