"""Comparing what an agent did with what a benchmark expects.

Shared by the tool backend (fault rules, canned results) and the judges (required and
forbidden calls, facts), so there is exactly one definition of "these arguments match".
"""

from __future__ import annotations

import json
import re
import unicodedata
from difflib import SequenceMatcher
from typing import Any

from rapidfuzz import fuzz

from voxbench.core.benchmark import ArgMatcher, ExpectedCall

_CONTRACTIONS = {"can't": "cannot", "won't": "will not", "n't": " not", "'re": " are", "'m": " am"}


def normalize_text(value: Any) -> str:
    """Fold case, accents, punctuation and whitespace: "  Jennifer  SMITH. " → "jennifer smith"."""
    text = unicodedata.normalize("NFKD", str(value)).encode("ascii", "ignore").decode().lower()
    for short, long in _CONTRACTIONS.items():
        text = text.replace(short, long)
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def _canonical(value: Any) -> Any:
    # Numbers sent as strings ("3" vs 3) and whitespace around ids are not real differences.
    if isinstance(value, str):
        stripped = value.strip()
        try:
            return json.loads(stripped) if re.fullmatch(r"-?\d+(\.\d+)?", stripped) else stripped
        except ValueError:
            return stripped
    return value


_FILLER_WORDS = frozenset(
    ("a", "an", "the", "in", "on", "at", "to", "for", "of", "with", "about")
    + ("is", "are", "was", "were", "my", "your", "our")
)
"""Words that carry no meaning in a short argument ("a session about X" ~ "X session")."""


def _content_tokens(normalized: str) -> list[str]:
    return [t for t in normalized.split() if t not in _FILLER_WORDS]


def _upstream_normal_form(value: str) -> str:
    # Their harness folds case, a few spellings (the product name "OpenTelemetry" and the
    # ways of writing "cannot"), then drops everything but letters, digits and spaces.
    text = value.lower().strip().replace("opentelemetry", "open telemetry")
    text = text.replace("can't", "cannot").replace("cant", "cannot")
    text = text.replace("can not", "cannot").replace("unable to", "cannot")
    text = re.sub(r"[^a-z0-9\s]", "", text)
    return " ".join(text.split())


def upstream_text_matches(golden: str, actual: str) -> bool:
    """Whether a free-text argument matches the way ConversationBench/AIEWF's harness
    decides it without a model.

    After their normal form: equal; or one contains the other; or, over the words left
    once filler words are dropped, the golden words are ≥ 80% covered by the made call's, or
    the overlap is ≥ 60% of the union with ≥ 70% of the golden words covered, or each side
    covers ≥ 60% of the other; else a character similarity (``difflib``) ≥ 0.82.
    """
    g, a = _upstream_normal_form(golden), _upstream_normal_form(actual)
    if g == a:
        return True
    if g and a and (g in a or a in g):
        return True
    g_set, a_set = set(_content_tokens(g)), set(_content_tokens(a))
    if g_set and a_set:
        shared = len(g_set & a_set)
        golden_covered = shared / len(g_set)
        actual_covered = shared / len(a_set)
        jaccard = shared / len(g_set | a_set)
        if golden_covered >= 0.8 or (jaccard >= 0.6 and golden_covered >= 0.7):
            return True
        if golden_covered >= 0.6 and actual_covered >= 0.6:
            return True
    return SequenceMatcher(None, g, a).ratio() >= 0.82


def _word_forms(tokens: list[str]) -> set[str]:
    # Every word, its singular, and every pair of neighbours written as one word, so
    # "open telemetry" meets "OpenTelemetry" and "sessions" meets "session".
    forms = set(tokens)
    forms |= {t[:-1] for t in tokens if len(t) > 3 and t.endswith("s")}
    forms |= {x + y for x, y in zip(tokens, tokens[1:], strict=False)}
    return forms


FREE_TEXT_COVERAGE = 0.8
"""Share of one side's content words the other side must carry (see ``meaning_matches``)."""
FREE_TEXT_LOOSE_COVERAGE = 0.6


def _covered(words: list[str], other: list[str]) -> float:
    """Share of ``words`` found in ``other`` as written, as a singular, or across a word
    boundary ("open" + "telemetry" in "opentelemetry")."""
    if not words:
        return 1.0
    present = _word_forms(other)
    joined = "".join(other)
    found = 0
    for i, word in enumerate(words):
        pair = word + words[i + 1] if i + 1 < len(words) else ""
        stem = word[:-1] if len(word) > 3 and word.endswith("s") else word
        if {word, stem, pair} & present or (len(word) > 3 and word in joined):
            found += 1
    return found / len(words)


def meaning_matches(golden: Any, actual: Any) -> bool:
    """voxbench's ``free_text`` rule: the made argument carries the golden text's content.

    Both sides are normalized (``normalize_text``) and filler words dropped. It matches when
    ≥ 80% of the golden words are in the made argument, or when ≥ 80% of the made
    argument's words are in the golden text and they cover ≥ 60% of it (a shorter wording
    of the same thing: "OpenTelemetry tracing" for "a session about open telemetry
    tracing"). A paraphrase in other words is left to the LLM judge.
    """
    g = _content_tokens(normalize_text(golden))
    a = _content_tokens(normalize_text(actual))
    if not g or not a:
        return not g and not a
    golden_covered = _covered(g, a)
    if golden_covered >= FREE_TEXT_COVERAGE:
        return True
    return golden_covered >= FREE_TEXT_LOOSE_COVERAGE and _covered(a, g) >= FREE_TEXT_COVERAGE


def value_matches(matcher: ArgMatcher, golden: Any, actual: Any) -> bool:
    """Whether ``actual`` satisfies ``matcher`` against the golden value."""
    if matcher.rule == "any":
        return actual is not None
    if actual is None:
        return golden is None
    if matcher.rule == "exact":
        a, g = _canonical(actual), _canonical(golden)
        if isinstance(a, str) and isinstance(g, str):
            return a.casefold() == g.casefold()
        return a == g
    if matcher.rule == "normalized":
        return normalize_text(actual) == normalize_text(golden)
    if matcher.rule == "one_of":
        return normalize_text(actual) in {normalize_text(v) for v in matcher.values}
    if matcher.rule == "fuzzy":
        return fuzz.token_set_ratio(normalize_text(actual), normalize_text(golden)) >= (
            matcher.min_ratio
        )
    if matcher.rule == "regex":
        return re.search(str(matcher.values[0]), str(actual), re.IGNORECASE) is not None
    if matcher.rule == "free_text":
        return meaning_matches(golden, actual)
    raise AssertionError(matcher.rule)


def args_match(expected: ExpectedCall, actual_args: dict[str, Any]) -> bool:
    """Whether a made call's arguments satisfy ``expected``.

    Every argument ``expected`` lists must be present and match; extra arguments the agent
    adds never fail a match (forbidden and allowed calls and fault rules list only the
    arguments that matter).
    """
    for arg, golden in expected.args.items():
        if arg not in actual_args:
            return False
        if not value_matches(expected.matcher_for(arg), golden, actual_args[arg]):
            return False
    return True


def call_matches(expected: ExpectedCall, name: str, args: dict[str, Any]) -> bool:
    """Whether a call ``name(args)`` satisfies ``expected``."""
    return expected.name == name and args_match(expected, args)
