"""The tool backend simulator: deterministic, stateful, faults keyed by arguments."""

from __future__ import annotations

import pytest

from voxbench.benchmarks.backend import BackendSpec, HarnessOptions, ToolBackend, state_matches
from voxbench.benchmarks.loader import load_benchmark


@pytest.fixture
def backend() -> ToolBackend:
    bench = load_benchmark("smoke")
    b = ToolBackend(BackendSpec.model_validate(bench.backend), {t.name for t in bench.tools})
    b.begin_turn("t1")
    return b


def register(b: ToolBackend, sid: str) -> dict:
    return b.call("register_for_session", {"name": "Priya Raman", "session_id": sid})[0]


def test_registration_capacity_and_conflicts(backend: ToolBackend) -> None:
    assert register(backend, "H-101")["status"] == "success"
    full = register(backend, "H-102")
    assert full["error"] == "SESSION_FULL"
    assert register(backend, "H-101")["status"] == "success"  # same turn: a duplicate
    backend.begin_turn("t2")
    assert register(backend, "H-101")["error"] == "ALREADY_REGISTERED"
    assert register(backend, "H-999")["error"] == "UNKNOWN_SESSION"
    assert backend.snapshot()["registrations"] == ["H-101"]


def test_double_booking_is_refused() -> None:
    spec = BackendSpec.model_validate(
        {
            "sessions": {
                "A": {"title": "a", "day": "2026-01-01", "start": "10:00", "end": "11:00"},
                "B": {"title": "b", "day": "2026-01-01", "start": "10:30", "end": "11:30"},
                "C": {"title": "c", "day": "2026-01-02", "start": "10:30", "end": "11:30"},
            },
            "tools": {
                "reg": {"op": "register", "session": "id"},
                "chk": {"op": "check_conflict", "sessions": ["a", "b"]},
            },
        }
    )
    b = ToolBackend(spec)
    b.begin_turn("0")
    assert b.call("reg", {"id": "A"})[0]["status"] == "success"
    clash = b.call("reg", {"id": "B"})[0]
    assert clash["error"] == "SCHEDULE_CONFLICT" and clash["conflicts_with"] == "A"
    assert b.call("reg", {"id": "C"})[0]["status"] == "success"
    assert b.call("chk", {"a": "A", "b": "B"})[0]["conflict"] is True
    assert b.call("chk", {"a": "A", "b": "C"})[0]["conflict"] is False


def test_transient_fault_is_keyed_by_arguments_not_order(backend: ToolBackend) -> None:
    # Booking another session first does not move the fault onto it.
    assert register(backend, "H-103")["status"] == "success"
    first = register(backend, "H-104")
    assert first["error"] == "INTERNAL_ERROR"
    assert register(backend, "H-104")["status"] == "success"


def test_duplicates_answer_consistently_without_acting_twice(backend: ToolBackend) -> None:
    args = {"name": "Priya Raman", "dietary_preference": "vegetarian"}
    first, dup1 = backend.call("submit_dietary_request", args)
    again, dup2 = backend.call(
        "submit_dietary_request", {"name": "priya raman", "dietary_preference": "Vegetarian"}
    )
    assert (dup1, dup2) == (False, True)
    assert again == first
    assert backend.snapshot()["requests"] == {"dietary_request": ["vegetarian"]}
    backend.begin_turn("t2")
    _, dup3 = backend.call("submit_dietary_request", args)
    assert dup3 is False  # duplicates are per turn


def test_cancellation_of_earlier_actions(backend: ToolBackend) -> None:
    register(backend, "H-101")
    backend.call("submit_dietary_request", {"name": "P", "dietary_preference": "vegan"})
    cancel = backend.call(
        "cancel_action", {"action_type": "registration", "name": "P", "details": "the H-101 talk"}
    )[0]
    assert cancel["status"] == "success"
    assert (
        backend.call(
            "cancel_action", {"action_type": "registration", "name": "P", "details": "H-101"}
        )[0]["error"]
        == "NOT_FOUND"
    )
    assert (
        backend.call("cancel_action", {"action_type": "dietary_request", "name": "P"})[0]["status"]
        == "success"
    )
    snap = backend.snapshot()
    assert snap["registrations"] == [] and snap["requests"] == {}
    assert snap["cancelled"] == {"registration": ["H-101"], "dietary_request": ["vegan"]}
    # A cancelled seat is free again.
    assert register(backend, "H-101")["status"] == "success"


def test_unknown_tool_and_missing_arguments(backend: ToolBackend) -> None:
    assert backend.call("fly_to_moon", {})[0]["error"] == "UNKNOWN_TOOL"
    assert backend.call("register_for_session", {"name": "P"})[0]["error"] == "INVALID_ARGUMENTS"


def test_export_and_restore_round_trip(backend: ToolBackend) -> None:
    register(backend, "H-101")
    register(backend, "H-104")  # consumes the transient fault
    saved = backend.export_state()
    register(backend, "H-103")
    backend.restore_state(saved)
    assert backend.snapshot()["registrations"] == ["H-101"]
    assert register(backend, "H-104")["status"] == "success"  # the fault stays consumed


def test_state_diff_is_readable() -> None:
    actual = {
        "registrations": ["H-101", "H-103"],
        "requests": {"dietary_request": ["Vegan"]},
        "ended": False,
    }
    assert (
        state_matches(
            {"registrations": ["H-103", "H-101"], "requests": {"dietary_request": ["vegan"]}},
            actual,
        )
        == []
    )
    diff = state_matches({"registrations": ["H-104"], "ended": True}, actual)
    assert "registrations: missing H-104" in diff
    assert "registrations: unexpected H-101, H-103" in diff
    assert "ended: expected True, got False" in diff


def test_canned_engine_matches_by_call_then_order() -> None:
    spec = BackendSpec.model_validate(
        {
            "engine": "canned",
            "canned": {
                "5": [
                    {
                        "call": {"name": "reg", "args": {"id": "B"}},
                        "result": {"status": "error", "error": "FULL"},
                    },
                    {"call": {"name": "reg", "args": {"id": "A"}}, "result": {"status": "success"}},
                ]
            },
        }
    )
    b = ToolBackend(spec, {"reg"})
    b.begin_turn("5")
    assert b.call("reg", {"id": "A"})[0] == {"status": "success"}
    assert b.call("reg", {"id": "B"})[0]["error"] == "FULL"
    b.begin_turn("6")
    assert b.call("reg", {"id": "C"})[0] == {"status": "success"}


# -- harness options: voxbench's rules and upstream's ---------------------------------

FULL_1 = {"status": "error", "error_code": "SESSION_FULL", "message": "Session S1 is at capacity"}
FULL_3 = {"status": "error", "error_code": "SESSION_FULL", "message": "Session S3 is at capacity"}
BROKEN = {"status": "error", "error_code": "INTERNAL_ERROR", "message": "could not be processed"}


def _cascade(harness: HarnessOptions) -> ToolBackend:
    """Turn "38": two registrations, both full; turn "40": one that fails once."""
    reg = {"name": "reg", "args": {"name": "Jo", "session_id": "S1"}}
    spec = BackendSpec.model_validate(
        {
            "engine": "canned",
            "canned": {
                "38": [
                    {"call": reg, "result": FULL_1},
                    {"call": {**reg, "args": {"name": "Jo", "session_id": "S3"}}, "result": FULL_3},
                ],
                "40": [{"call": {**reg, "args": {"session_id": "S5"}}, "result": BROKEN}],
                "41": [{"result": {"status": "success", "note": "single"}, "every_call": True}],
            },
        }
    )
    return ToolBackend(spec, {"reg"}, harness=harness)


def test_voxbench_harness_replays_a_retried_calls_own_result() -> None:
    b = _cascade(HarnessOptions())
    b.begin_turn("38")
    assert b.call("reg", {"name": "Jo", "session_id": "S1"}) == (FULL_1, False)
    # The retry gets S1's answer again, never S3's "at capacity" written for another call.
    assert b.call("reg", {"name": "Jo", "session_id": "S1"}) == (FULL_1, False)
    assert b.call("reg", {"name": "Jo", "session_id": "S3"}) == (FULL_3, False)
    b.begin_turn("40")
    assert b.call("reg", {"name": "Jo", "session_id": "S5"})[0] == BROKEN
    assert b.call("reg", {"name": "Jo", "session_id": "S5"})[0] == BROKEN  # no silent success


def test_upstream_harness_skips_repeats_and_hands_results_out_in_order() -> None:
    b = _cascade(HarnessOptions(duplicate_calls="skip", canned_results="in_order"))
    b.begin_turn("38")
    assert b.call("reg", {"name": "Jo", "session_id": "S1"}) == (FULL_1, False)
    # ConversationBench: a repeat of a call made in the turn, failed or not, is skipped.
    assert b.call("reg", {"name": "Jo", "session_id": "S1"}) == (
        {"status": "duplicate_skipped"},
        True,
    )
    # The same arguments in another order are another call to upstream (it keys on the
    # arguments as sent): it takes the next listed result.
    assert b.call("reg", {"session_id": "S1", "name": "Jo"}) == (FULL_3, False)
    # Past the end of the list: a plain success.
    assert b.call("reg", {"name": "Jo", "session_id": "S9"}) == ({"status": "success"}, False)
    b.begin_turn("40")
    assert b.call("reg", {"name": "Jo", "session_id": "S5"})[0] == BROKEN
    assert b.call("reg", {"name": "Jo", "session_id": "S5"})[0] == {"status": "duplicate_skipped"}
    assert b.call("reg", {"name": "Jo ", "session_id": "S5"})[0] == {"status": "success"}
    b.begin_turn("41")  # a single upstream value answers every call
    assert b.call("reg", {"session_id": "A"})[0]["note"] == "single"
    assert b.call("reg", {"session_id": "B"})[0]["note"] == "single"
    b.forget_duplicates()  # a nudge: earlier calls are no longer repeats
    assert b.call("reg", {"session_id": "A"}) == ({"status": "success", "note": "single"}, False)


def test_aiewf_harness_answers_every_call_with_success() -> None:
    b = _cascade(HarnessOptions(duplicate_calls="skip", canned_results="success"))
    b.begin_turn("38")
    assert b.call("reg", {"name": "Jo", "session_id": "S1"}) == ({"status": "success"}, False)
    assert b.call("reg", {"name": "Jo", "session_id": "S1"})[1] is True
