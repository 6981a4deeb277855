"""AIEWF's harness rule for "the required call was made" (what decides its nudge).

Its text pipeline looks for a call, not flagged as a duplicate, with the required name whose
arguments match the golden ones loosely:

- a mapping matches when every golden key is present and matches (extra keys are fine);
- a list matches item by item and must have the same length;
- a string under an identifier key (``id``, ``*_id``) matches when equal after trimming;
- another string matches when, after normalising both (lower case, "opentelemetry" split
  into two words, "can't"/"cant"/"can not"/"unable to" read as "cannot", punctuation
  dropped, spaces collapsed), they are equal or one contains the other; or, over their
  words without common stop words, the golden words are ≥ 80% covered, or the Jaccard
  overlap is ≥ 0.6 with ≥ 70% coverage, or both sides cover ≥ 60% of each other; or their
  ``difflib`` similarity ratio is ≥ 0.82;
- anything else matches when equal.
"""

from __future__ import annotations

from typing import Any

from voxbench.core.matching import upstream_text_matches


def _is_identifier(key: str | None) -> bool:
    name = (key or "").strip().lower()
    return name in {"id", "session_id", "tool_call_id", "conversation_id"} or name.endswith("_id")


def aiewf_args_match(expected: Any, actual: Any, key: str | None = None) -> bool:
    """Whether ``actual`` satisfies the golden ``expected`` by AIEWF's harness rule."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and aiewf_args_match(v, actual[k], str(k)) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(aiewf_args_match(e, a, key) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(expected, str):
        if not isinstance(actual, str):
            return False
        if _is_identifier(key):
            return expected.strip() == actual.strip()
        return upstream_text_matches(expected, actual)
    return bool(expected == actual)


__all__ = ["aiewf_args_match"]
