"""Fake-server scripts and fault specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.errors import ConfigError
from voxbench.testing import (
    Fault,
    FaultPlan,
    GoldenScript,
    ListScript,
    Reply,
    ScriptCall,
    ScriptExhausted,
    ScriptMessage,
    ToolOutcome,
    load_script_file,
)


def test_fault_specs_parse_kinds_aliases_ranges_and_options() -> None:
    assert Fault.parse("429@2:retry_after=0.5") == Fault("rate_limit", frozenset({2}), 0.5)
    assert Fault.parse("drop@2-4,7").requests == frozenset({2, 3, 4, 7})
    assert Fault.parse("hang").requests is None and Fault.parse("hang@*").hits(99)
    assert Fault.parse("malformed@1").kind == "malformed_args"
    plan = FaultPlan.parse(["500@1", "duplicate"])
    assert [f.kind for f in plan.for_request(1)] == ["server_error", "duplicate"]
    assert [f.kind for f in plan.for_request(2)] == ["duplicate"]


@pytest.mark.parametrize(
    "spec", ["explode", "429@0", "429@3-1", "429@x", "429:retry_after", "500:wait=1"]
)
def test_bad_fault_specs_say_what_is_expected(spec: str) -> None:
    with pytest.raises(ConfigError, match="expected KIND"):
        Fault.parse(spec)


def _user(text: str) -> ScriptMessage:
    return ScriptMessage(role="user", text=text)


def test_golden_script_calls_then_retries_a_transient_error_once_then_speaks() -> None:
    bench = load_benchmark("smoke")
    script = GoldenScript(bench)
    turn = bench.turns[4]
    call = ScriptCall("register_for_session", {"name": "Priya Raman", "session_id": "H-104"})
    first = script.reply([_user(turn.text)])
    assert first == Reply(calls=(call,))
    failed = ToolOutcome("c1", call.name, {"status": "error", "error": "INTERNAL_ERROR"})
    conversation = [
        _user(turn.text),
        ScriptMessage(role="assistant", calls=(call,)),
        ScriptMessage(role="tool", results=(failed,)),
    ]
    assert script.reply(conversation) == Reply(calls=(call,))
    conversation += [
        ScriptMessage(role="assistant", calls=(call,)),
        ScriptMessage(role="tool", results=(failed,)),
    ]
    assert script.reply(conversation) == Reply(text=turn.golden_text)  # retried once only


def test_golden_script_finds_turns_by_text_or_by_position() -> None:
    bench = load_benchmark("smoke")
    script = GoldenScript(bench)
    assert (
        script.reply([_user("  " + bench.turns[3].text.upper())]).text == bench.turns[3].golden_text
    )
    paraphrase = [
        _user("hello?"),
        ScriptMessage(role="assistant", text="hi"),
        _user("what about lunch"),
    ]
    assert script.turn_for(paraphrase) is bench.turns[1]
    assert script.transcribe(1) == bench.turns[0].text


def test_list_script_replies_in_order_then_says_it_is_exhausted() -> None:
    script = ListScript([Reply(text="a"), Reply(text="b")], transcripts=["t1", "t2"])
    assert [script.reply([]).text, script.reply([]).text] == ["a", "b"]
    with pytest.raises(ScriptExhausted):
        script.reply([])
    assert [script.transcribe(n) for n in (1, 2, 3)] == ["t1", "t2", "t1"]


def test_script_files_load_replies_transcripts_and_faults(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "replies:\n"
        "  - say: Hello\n"
        "  - call: lookup\n    args: {q: x}\n"
        "  - say: Both\n    calls:\n      - {name: a}\n      - {name: b, raw_args: '{\"x\": '}\n"
        "  - Plain text\n"
        "transcripts: [one]\n"
        "faults: ['429@1']\n"
    )
    script, faults = load_script_file(path)
    assert script.replies[0] == Reply(text="Hello")
    assert script.replies[1].calls == (ScriptCall("lookup", {"q": "x"}),)
    assert script.replies[2].calls[1].arguments_json() == '{"x": '
    assert script.replies[3] == Reply(text="Plain text")
    assert script.transcripts == ["one"] and faults.faults[0].kind == "rate_limit"


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ("- a\n", "replies"),
        ("replies: []\nextra: 1\n", "unknown key"),
        ("replies:\n  - {calls: [{args: {}}]}\n", "replies[0].calls[0]"),
        ("replies:\n  - {say: hi, shout: yes}\n", "replies[0]"),
    ],
)
def test_bad_script_files_name_the_file_and_field(tmp_path: Path, content: str, where: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(ConfigError, match="bad.yaml") as info:
        load_script_file(path)
    assert where in str(info.value)
