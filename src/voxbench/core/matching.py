"""Comparing what an agent did with what a benchmark expects.

Shared by the tool backend (fault rules, canned results) and the judges (required and
forbidden calls, facts), so there is exactly one definition of "these arguments match".
"""

from __future__ import annotations

import json
import re
import unicodedata
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
