"""The domain model: strict, with shorthand that benchmark authors can write by hand."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from voxbench.core.benchmark import (
    ArgMatcher,
    DimensionRules,
    ExpectedCall,
    FactPattern,
    ToolSpec,
    Turn,
)
from voxbench.core.matching import args_match, normalize_text, value_matches
from voxbench.core.records import TurnRecord, TurnTimings


def test_unknown_keys_are_rejected() -> None:
    with pytest.raises(ValidationError, match="golden_txt"):
        Turn.model_validate({"id": "0", "text": "hi", "golden_text": "hello", "golden_txt": "x"})


def test_turn_ids_accept_integers() -> None:
    assert Turn.model_validate({"id": 3, "text": "a", "golden_text": "b"}).id == "3"


@pytest.mark.parametrize(
    ("spec", "golden", "actual", "ok"),
    [
        ("exact", "H-101", "h-101", True),
        ("exact", 3, "3", True),
        ("exact", "H-101", "H-102", False),
        ("normalized", "Priya Raman", "  priya raman. ", True),
        ({"fuzzy": 85}, "Priya Raman", "Priya Ramen", True),
        ({"fuzzy": 85}, "Priya Raman", "John Smith", False),
        ({"one_of": ["vegan", "plant based"]}, "vegan", "Plant-based", True),
        ({"regex": "H-?101"}, "H-101", "session H101 please", True),
        ("any", "x", "anything", True),
    ],
)
def test_matchers(spec, golden, actual, ok) -> None:
    assert value_matches(ArgMatcher.model_validate(spec), golden, actual) is ok


def test_unknown_matcher_is_an_error() -> None:
    with pytest.raises(ValidationError, match="unknown matcher"):
        ArgMatcher.model_validate({"similar": 3})


def test_default_matchers_are_exact_for_ids_and_normalized_for_text() -> None:
    call = ExpectedCall(name="register", args={"session_id": "H-101", "name": "Priya Raman"})
    assert call.matcher_for("session_id").rule == "exact"
    assert call.matcher_for("name").rule == "normalized"
    assert args_match(call, {"session_id": "H-101", "name": "PRIYA RAMAN", "extra": 1})
    assert not args_match(call, {"session_id": "H-101"})


def test_fact_patterns_allow_alternatives() -> None:
    fact = FactPattern.model_validate(["\\$1,?299", "1299 dollars", "twelve ninety-nine"])
    assert fact.matches("That's twelve ninety-nine.")
    assert fact.matches("It costs $1,299")
    assert not fact.matches("It costs $1,199")
    with pytest.raises(ValidationError, match="invalid regex"):
        FactPattern.model_validate("(unclosed")


def test_tool_schema_must_be_an_object_with_known_required() -> None:
    with pytest.raises(ValidationError, match="required parameters not in properties"):
        ToolSpec(
            name="t",
            description="d",
            parameters={"type": "object", "properties": {}, "required": ["x"]},
        )
    with pytest.raises(ValidationError, match="type: object"):
        ToolSpec(name="t", description="d", parameters={"type": "string"})


def test_dimension_rules_add_category_dimensions_once() -> None:
    rules = DimensionRules(
        by_category={
            "long_range_memory": ("state_tracking",),
            "cancellation_flow": ("state_tracking",),
        }
    )
    turn = Turn(
        id="1", text="a", golden_text="b", categories=("long_range_memory", "cancellation_flow")
    )
    assert rules.for_turn(turn) == (
        "tool_use",
        "instruction_following",
        "kb_grounding",
        "state_tracking",
    )


def test_normalize_text() -> None:
    assert normalize_text("  Café — can't STOP! ") == "cafe cannot stop"


def test_spoken_text_prefers_what_was_heard() -> None:
    rec = TurnRecord(
        turn="0", index=0, user_text="u", assistant_text="provider", timings=TurnTimings(start=0)
    )
    assert rec.spoken_text == "provider"
    assert rec.model_copy(update={"heard_text": "heard"}).spoken_text == "heard"
