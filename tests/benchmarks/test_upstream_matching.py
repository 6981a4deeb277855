"""AIEWF's harness rule for "the required call was made" (the nudge trigger), by hand."""

from __future__ import annotations

import pytest

from voxbench.benchmarks.upstream_matching import aiewf_args_match
from voxbench.core.matching import upstream_text_matches as text_matches

GOLDEN = {"name": "Jennifer Smith", "suggestion_text": "A session about open telemetry tracing."}


@pytest.mark.parametrize(
    ("actual", "matches"),
    [
        # "OpenTelemetry" is read as two words; punctuation and case are dropped.
        (
            {"name": "jennifer smith", "suggestion_text": "a session about OpenTelemetry tracing"},
            True,
        ),
        # Containment: a richer text holding the golden one.
        (
            {
                "name": "Jennifer Smith",
                "suggestion_text": "Please add a session about open telemetry tracing.",
            },
            True,
        ),
        # Words: golden {session, open, telemetry, tracing}, actual {session, open, telemetry}:
        # 3/4 covered (< 80%) but Jaccard 3/4 ≥ 0.6 with coverage 75% ≥ 70%.
        ({"name": "Jennifer Smith", "suggestion_text": "session on open telemetry"}, True),
        # Another subject: 1 of 4 golden words (25%) and a difflib ratio well under 0.82.
        ({"name": "Jennifer Smith", "suggestion_text": "a talk on state machines"}, False),
        ({"name": "Jennifer Smith"}, False),  # a golden key is missing
        ({"name": "Jennifer Smith", "suggestion_text": 7}, False),  # not a string
    ],
)
def test_free_text_arguments_match_loosely(actual: dict, matches: bool) -> None:
    assert aiewf_args_match(GOLDEN, actual) is matches


def test_identifiers_match_exactly_and_other_values_by_equality() -> None:
    assert aiewf_args_match({"session_id": "936902"}, {"session_id": " 936902 "})
    assert not aiewf_args_match({"session_id": "936902"}, {"session_id": "936903"})
    assert not aiewf_args_match({"session_id": "S-1"}, {"session_id": "s-1"})  # ids keep case
    assert aiewf_args_match({"n": 2, "x": "y"}, {"n": 2, "x": "y", "extra": True})
    assert not aiewf_args_match({"n": 2}, {"n": 3})
    assert aiewf_args_match({"tags": ["a", "b"]}, {"tags": ["A", "b!"]})
    assert not aiewf_args_match({"tags": ["a", "b"]}, {"tags": ["a"]})  # same length needed


def test_text_thresholds() -> None:
    assert text_matches("I can't log in", "cannot log in")  # spellings of "cannot"
    # golden words {mobile, app, crashes, startup}; actual adds two: 4/4 covered ≥ 80%.
    assert text_matches(
        "mobile app crashes at startup", "the mobile app always crashes at startup now"
    )
    # A misspelling: no shared word, but the difflib ratio is 2*9/20 = 0.9 ≥ 0.82.
    assert text_matches("vegetarian", "vegeterian")
    assert not text_matches("vegan", "vegetarian")  # "veg" + "an": 2*5/15 ≈ 0.67
