"""Tool-use rules per benchmark family, as data the judge reads (issue 12, items 2 and 3).

Each test is a small hand-built conversation whose expected verdicts are worked out by hand
in the comments: which turns fail ``tool_use`` under voxbench's own rules, ConversationBench's
and AIEWF's.
"""

from __future__ import annotations

from typing import Any

import pytest

from voxbench.benchmarks.compat import load_compat_profile
from voxbench.core.benchmark import (
    Benchmark,
    Expectation,
    ExpectedCall,
    ScoringRules,
    ToolSpec,
    ToolUseRules,
    Turn,
)
from voxbench.core.matching import meaning_matches, upstream_text_matches
from voxbench.core.records import ToolCallRecord, TurnRecord, TurnTimings
from voxbench.judging.deterministic import judge_deterministic

REGISTER = ExpectedCall(name="register", args={"name": "Ana Silva", "session_id": "S1"})
SUGGESTION = "A session about open telemetry tracing."
SUGGEST = ExpectedCall(name="suggest", args={"name": "Ana Silva", "suggestion_text": SUGGESTION})
LOOKUP = ExpectedCall(name="lookup")
VOXBENCH = ScoringRules()
CB = load_compat_profile("conversation-bench").scoring
AIEWF = load_compat_profile("aiewf").scoring


def tool(name: str, *params: str) -> ToolSpec:
    props = {p: {"type": "string"} for p in params}
    return ToolSpec(name=name, description=name, parameters={"type": "object", "properties": props})


def benchmark(suggest: ExpectedCall = SUGGEST) -> Benchmark:
    """Turn 0 expects no call (a lookup is allowed), turn 1 a registration, turn 2 nothing,
    turn 3 a session suggestion."""
    return Benchmark(
        id="hand-built",
        version="1",
        description="four turns",
        system_prompt="{knowledge_base}",
        current_date="2025-06-02",
        knowledge_base="kb",
        tools=(
            tool("register", "name", "session_id"),
            tool("suggest", "name", "suggestion_text"),
            tool("lookup", "query"),
        ),
        turns=(
            Turn(
                id="0",
                text="What is on?",
                golden_text="Talks.",
                expect=Expectation(allowed_calls=(LOOKUP,)),
            ),
            Turn(
                id="1",
                text="Register me for S1.",
                golden_text="Done.",
                expect=Expectation(required_calls=(REGISTER,)),
            ),
            Turn(id="2", text="Thanks.", golden_text="Welcome."),
            Turn(
                id="3",
                text="I suggest open telemetry tracing.",
                golden_text="Submitted.",
                expect=Expectation(required_calls=(suggest,)),
            ),
        ),
    )


def records(calls: dict[str, list[tuple[str, dict[str, Any]]]]) -> list[TurnRecord]:
    """One record per turn; ``calls[turn]`` overrides the golden calls of that turn."""
    golden = {"1": [("register", REGISTER.args)], "3": [("suggest", SUGGEST.args)]}
    out = []
    for i in range(4):
        made = calls.get(str(i), golden.get(str(i), []))
        out.append(
            TurnRecord(
                turn=str(i),
                index=i,
                user_text="u",
                assistant_text="a",
                timings=TurnTimings(start=float(i)),
                tool_calls=[
                    ToolCallRecord(call_id=f"{i}-{k}", name=n, arguments=dict(a), result={})
                    for k, (n, a) in enumerate(made)
                ],
            )
        )
    return out


def failed_turns(
    calls: dict[str, list[tuple[str, dict[str, Any]]]],
    scoring: ScoringRules,
    bench: Benchmark | None = None,
) -> list[str]:
    result = judge_deterministic(bench or benchmark(), records(calls), scoring)
    return [j.turn for j in result.judgments if j.dimension == "tool_use" and j.passed is False]


def test_the_golden_conversation_passes_under_every_rule_set() -> None:
    for scoring in (VOXBENCH, CB, AIEWF):
        assert failed_turns({}, scoring) == []


# -- rule 1: a turn that expects no call ---------------------------------------------------

ALLOWED_CALL_ON_TURN_0 = {"0": [("lookup", {"query": "talks"})]}
SPURIOUS_CALL_ON_TURN_2 = {"2": [("register", {"name": "Ana Silva", "session_id": "S9"})]}


@pytest.mark.parametrize(
    ("rule", "allowed_fails", "spurious_fails"),
    [
        # voxbench: an allowed call is fine, a call neither required nor allowed fails.
        ("fail_unexpected_calls", [], ["2"]),
        # ConversationBench: tool use is not scored where no call is expected: both pass.
        ("pass_any_call", [], []),
        # AIEWF: passes only when no call was made: both fail.
        ("pass_if_no_call", ["0"], ["2"]),
    ],
)
def test_rule_for_a_turn_that_expects_no_call(
    rule: str, allowed_fails: list[str], spurious_fails: list[str]
) -> None:
    scoring = ScoringRules(tool_use=ToolUseRules(no_expected_call_turn=rule))
    assert failed_turns(ALLOWED_CALL_ON_TURN_0, scoring) == allowed_fails
    assert failed_turns(SPURIOUS_CALL_ON_TURN_2, scoring) == spurious_fails


def test_the_profiles_state_their_no_call_rule() -> None:
    assert failed_turns(SPURIOUS_CALL_ON_TURN_2, CB) == []
    assert failed_turns(SPURIOUS_CALL_ON_TURN_2, AIEWF) == ["2"]
    assert failed_turns(ALLOWED_CALL_ON_TURN_0, AIEWF) == ["0"]


# -- rule 2: a call made one turn early ----------------------------------------------------

# The suggestion due on turn 3 is made on turn 2; nothing is called on turn 3.
EARLY = {"2": [("suggest", SUGGEST.args)], "3": []}


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        # voxbench: counted once, on turn 3 where it was due; turn 2 is credited (not spurious).
        ("penalize_due_turn", ["3"]),
        # ConversationBench / AIEWF: already satisfied on turn 3, and credited on turn 2.
        ("credit_due_turn", []),
    ],
)
def test_rule_for_an_early_call(rule: str, expected: list[str]) -> None:
    scoring = ScoringRules(tool_use=ToolUseRules(early_calls=rule))
    assert failed_turns(EARLY, scoring) == expected


def test_an_early_call_is_credited_under_both_public_profiles() -> None:
    # Even AIEWF's "no call on a turn that expects none" does not fail turn 2: the call there
    # is credited to turn 3.
    assert failed_turns(EARLY, CB) == [] and failed_turns(EARLY, AIEWF) == []


# -- rule 3: a call made one turn late -----------------------------------------------------

# The registration due on turn 1 is made on turn 2.
LATE = {"1": [], "2": [("register", REGISTER.args)]}


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        # It does not rescue turn 1 (where it was due); turn 2 is credited.
        ("penalize_due_turn", ["1"]),
        # The rule --compat used to apply: the late call rescues turn 1 too.
        ("credit_due_turn", []),
    ],
)
def test_rule_for_a_late_call(rule: str, expected: list[str]) -> None:
    scoring = ScoringRules(tool_use=ToolUseRules(late_calls=rule))
    assert failed_turns(LATE, scoring) == expected


def test_a_late_call_rescues_nothing_under_the_public_profiles() -> None:
    assert failed_turns(LATE, CB) == ["1"] and failed_turns(LATE, AIEWF) == ["1"]


def test_a_benchmark_package_states_its_rules_in_a_scoring_block(tmp_path) -> None:
    import shutil

    import yaml

    from voxbench.benchmarks.loader import BUILTIN_DIR, load_benchmark

    shutil.copytree(BUILTIN_DIR / "smoke", tmp_path / "smoke")
    header_file = tmp_path / "smoke" / "benchmark.yaml"
    header = yaml.safe_load(header_file.read_text())
    before = load_benchmark(tmp_path / "smoke")
    header["scoring"] = {"tool_use": {"no_expected_call_turn": "pass_any_call"}}
    header_file.write_text(yaml.safe_dump(header))
    after = load_benchmark(tmp_path / "smoke")
    assert after.scoring.tool_use.no_expected_call_turn == "pass_any_call"
    # Scoring rules do not change what the benchmark is: its runs can be judged again.
    assert after.content_hash == before.content_hash
    header["scoring"] = {"tool_use": {"late_calls": "maybe"}}
    header_file.write_text(yaml.safe_dump(header))
    with pytest.raises(Exception, match="late_calls"):
        load_benchmark(tmp_path / "smoke")


# -- arguments (item 3) ----------------------------------------------------------------------


def made_suggestion(text: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    return {"3": [("suggest", {"name": "Ana Silva", "suggestion_text": text})]}


@pytest.mark.parametrize(
    "text", ["OpenTelemetry tracing", "OpenTelemetry tracing session", "open telemetry tracing"]
)
def test_the_canonical_spelling_passes_in_compat_mode(text: str) -> None:
    # CB turn 10 / AIEWF turn 11: their harness's normal form spells the product name as two
    # words, then containment or word overlap decides.
    assert upstream_text_matches(SUGGESTION, text)
    assert failed_turns(made_suggestion(text), CB) == []
    assert failed_turns(made_suggestion(text), AIEWF) == []


def test_voxbench_mode_compares_declared_free_text_for_meaning() -> None:
    text = made_suggestion("OpenTelemetry tracing")
    # Undeclared, a string argument is compared normalized: a different wording fails.
    assert failed_turns(text, VOXBENCH) == ["3"]
    # Declared free text, it is compared for meaning.
    free = ExpectedCall(name="suggest", args=SUGGEST.args, match={"suggestion_text": "free_text"})
    assert failed_turns(text, VOXBENCH, benchmark(free)) == []
    assert meaning_matches(SUGGESTION, "open-telemetry tracing sessions")
    assert not meaning_matches(SUGGESTION, "Kubernetes tracing")
    assert not meaning_matches(SUGGESTION, "Need vegetarian lunch options")


def test_ids_stay_exact_and_other_content_fails_in_every_mode() -> None:
    wrong_id = {"1": [("register", {"name": "Ana Silva", "session_id": "S2"})]}
    unrelated = made_suggestion("Need vegetarian lunch options")
    free = ExpectedCall(name="suggest", args=SUGGEST.args, match={"suggestion_text": "free_text"})
    for scoring in (VOXBENCH, CB, AIEWF):
        assert failed_turns(wrong_id, scoring) == ["1"]
        assert failed_turns(unrelated, scoring, benchmark(free)) == ["3"]


def test_a_free_text_mismatch_is_left_for_the_llm_judge_to_decide() -> None:
    paraphrase = made_suggestion("Distributed tracing with the OTel standard")
    result = judge_deterministic(benchmark(), records(paraphrase), CB)
    checks = result.checks["3"]
    assert checks.only_free_text_mismatches
    assert checks.summary()["free_text_argument_mismatches"][0]["differences"] == [
        f"suggestion_text: expected {SUGGESTION!r}, got 'Distributed tracing with the OTel standard'"
    ]
    # A wrong id is code's to decide, never the judge's.
    wrong_id = {"1": [("register", {"name": "Ana Silva", "session_id": "S2"})]}
    result = judge_deterministic(benchmark(), records(wrong_id), CB)
    assert not result.checks["1"].only_free_text_mismatches
