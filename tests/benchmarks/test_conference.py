"""The built-in hard benchmark ``conference`` (Copperline 2026): size, coverage, internal
consistency, agreement between the knowledge base and the backend, the oracle's perfect
score, the baseline's low one, and the backend features the benchmark relies on."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import pytest
import yaml

from voxbench.benchmarks.backend import BackendSpec, ToolBackend, state_matches
from voxbench.benchmarks.consistency import consistency_problems
from voxbench.benchmarks.loader import load_benchmark
from voxbench.benchmarks.stats import benchmark_stats
from voxbench.core.benchmark import Benchmark
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import evaluate_run, oracle_check
from voxbench.judging.deterministic import judge_deterministic
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation

NAME = "Sofia Marchetti"
REQUIRED_CATEGORIES = (
    "basic_qa",
    "numerical_reasoning",
    "long_range_memory",
    "cross_turn_reasoning",
    "ambiguous_entity",
    "compound_ambiguity",
    "tool_use",
    "multi_step_tool",
    "error_recovery",
    "cancellation_flow",
    "implicit_correction",
    "negation_reasoning",
    "adversarial_trap",
    "distractor_injection",
)


@pytest.fixture(scope="module")
def bench() -> Benchmark:
    return load_benchmark("conference")


@pytest.fixture(scope="module")
def spec(bench: Benchmark) -> BackendSpec:
    return BackendSpec.model_validate(bench.backend)


def _turn(bench: Benchmark, turn_id: str):
    return bench.turns[bench.turn_index(turn_id)]


# -- size and coverage ------------------------------------------------------------------


def test_size_meets_the_issue(bench: Benchmark) -> None:
    stats = benchmark_stats(bench)
    assert [t.id for t in bench.turns] == [str(i) for i in range(75)]
    assert stats.tools >= 9
    assert stats.tool_turns >= 16
    assert stats.expected_calls >= 25
    assert stats.kb_lines >= 900
    assert 10_000 <= stats.kb_tokens <= 14_000


def test_every_category_is_on_at_least_three_turns(bench: Benchmark) -> None:
    counts = Counter(c for t in bench.turns for c in set(t.categories))
    thin = {c: counts[c] for c in REQUIRED_CATEGORIES if counts[c] < 3}
    assert not thin, thin
    assert set(counts) <= set(REQUIRED_CATEGORIES), set(counts) - set(REQUIRED_CATEGORIES)


def test_hard_subcategories_are_all_present(bench: Benchmark) -> None:
    def subs(category: str) -> set[str | None]:
        return {t.subcategory for t in bench.turns if category in t.categories}

    assert {
        "authority_appeal",
        "plausible_hallucination",
        "prompt_injection",
        "near_miss_entity",
        "false_recall",
    } <= subs("adversarial_trap")
    assert {"buried_question", "emotional_manipulation", "technical_tangent"} <= subs(
        "distractor_injection"
    )
    assert {
        "cascading_failure",
        "partial_success",
        "ambiguous_error",
        "transient_error",
        "session_full",
    } <= subs("error_recovery")
    assert {"nested_misconception", "partial_truth", "false_attribution"} <= subs(
        "implicit_correction"
    )
    assert {"conditional_chain", "parallel_calls", "swap"} <= subs("multi_step_tool")


def test_long_range_memory_turns_recall_something_said_30_turns_earlier(
    bench: Benchmark,
) -> None:
    for i, turn in enumerate(bench.turns):
        if "long_range_memory" not in turn.categories:
            continue
        early = " ".join(t.text + " " + t.golden_text for t in bench.turns[: max(i - 29, 0)])
        assert any(f.matches(early) for f in turn.expect.must_mention), turn.id


def test_dimension_rules(bench: Benchmark) -> None:
    rules = bench.dimensions.by_category
    for category in (
        "long_range_memory",
        "cross_turn_reasoning",
        "cancellation_flow",
        "implicit_correction",
        "error_recovery",
    ):
        assert "state_tracking" in rules[category]
    for category in ("ambiguous_entity", "compound_ambiguity", "numerical_reasoning"):
        assert "ambiguity_handling" in rules[category]


def test_tool_turns_have_state_and_the_call_ends_with_end_session(bench: Benchmark) -> None:
    for turn in bench.turns:
        if turn.expect.required_calls:
            assert turn.expect.state is not None, turn.id
    last = bench.turns[-1]
    assert [c.name for c in last.expect.required_calls] == ["end_session"]
    assert last.expect.state and last.expect.state["ended"] is True
    ends = [
        t.id for t in bench.turns if any(c.name == "end_session" for c in t.expect.required_calls)
    ]
    assert ends == [last.id]


def test_every_tool_is_bound_to_a_backend_operation(bench: Benchmark, spec: BackendSpec) -> None:
    assert {t.name for t in bench.tools} == set(spec.tools)


def test_clarifying_turns_ask_and_forbid_acting(bench: Benchmark) -> None:
    for turn in bench.turns:
        ambiguous = {"ambiguous_entity", "compound_ambiguity"} & set(turn.categories)
        if ambiguous and not turn.expect.required_calls:
            assert turn.golden_text.rstrip().endswith("?"), turn.id
            assert turn.expect.forbidden_calls, turn.id


def test_traps_forbid_or_check_what_they_tempt(bench: Benchmark) -> None:
    for turn in bench.turns:
        if "adversarial_trap" in turn.categories:
            assert turn.expect.must_not_claim, turn.id


# -- spoken style -----------------------------------------------------------------------


def test_user_turns_are_spoken_words(bench: Benchmark) -> None:
    for turn in bench.turns:
        assert not re.search(r"\d", turn.text), (turn.id, turn.text)
        assert "CL-" not in turn.text


def test_golden_answers_read_aloud(bench: Benchmark) -> None:
    for turn in bench.turns:
        text = turn.golden_text
        assert "\n" not in text.strip(), turn.id
        assert not re.search(r"[*#`_|\[\]]|^\s*([-•]|\d+[.)])\s", text), (turn.id, text)
        assert "CL-" not in text, turn.id


# -- dates ------------------------------------------------------------------------------


def test_current_date_is_the_second_conference_day(bench: Benchmark) -> None:
    today = date.fromisoformat(bench.current_date)
    assert f"{today:%A}, {today:%B} {today.day}" == "Wednesday, October 14"
    assert "Wednesday, October 14: Conference Day 2" in bench.knowledge_base
    assert "Thursday, October 15: Conference Day 3, the final day" in bench.knowledge_base


def test_day_relative_words_agree_with_the_date(bench: Benchmark, spec: BackendSpec) -> None:
    """Where a turn speaks of one relative day only, its sessions are on that day."""
    today = date.fromisoformat(bench.current_date)
    offsets = {
        r"\byesterday\b": -1,
        r"\btoday\b|\bthis (morning|afternoon)\b|\btonight\b": 0,
        r"\btomorrow\b": 1,
    }
    checked = 0
    for turn in bench.turns:
        spoken = (turn.text + " " + turn.golden_text).lower()
        days = {off for pattern, off in offsets.items() if re.search(pattern, spoken)}
        ids = [
            v
            for c in turn.expect.required_calls
            for k, v in c.args.items()
            if k.startswith("session_id")
        ]
        if len(days) != 1 or not ids:
            continue
        (offset,) = days
        for sid in ids:
            assert spec.sessions[sid].day == today + timedelta(days=offset), (turn.id, sid)
            checked += 1
    assert checked >= 10


def test_votes_and_registrations_respect_time(bench: Benchmark, spec: BackendSpec) -> None:
    today = date.fromisoformat(bench.current_date)
    for turn in bench.turns:
        for call in turn.expect.required_calls:
            sid = call.args.get("session_id")
            if call.name == "vote_for_session":
                assert spec.sessions[sid].day < today, (turn.id, sid)
            if call.name == "register_for_session":
                assert spec.sessions[sid].day >= today, (turn.id, sid)
                assert spec.sessions[sid].registration == "open", (turn.id, sid)


# -- knowledge base against backend ---------------------------------------------------------

_BLOCK = re.compile(
    r"^### (CL-\d{3}) · (.+?)( \(CANCELLED\))?\n"
    r"- When: (\w+), (\w+ \d+), (\d{1,2}:\d\d)(?: (AM|PM))?–(\d{1,2}:\d\d) (AM|PM) \(.+\)\n"
    r"- Where: (.+?), Level (\d) \(([\d,]+) (?:workshop )?seats[^)]*\)(.*)\n"
    r"((?:- .*\n)+)",
    re.MULTILINE,
)


_MONTHS = [date(2026, m, 1).strftime("%B") for m in range(1, 13)]


def _clock(hm: str, meridiem: str) -> str:
    hour, minute = (int(x) for x in hm.split(":"))
    hour = hour % 12 + (12 if meridiem == "PM" else 0)
    return f"{hour:02d}:{minute:02d}"


def _kb_sessions(kb: str) -> dict[str, dict]:
    out = {}
    for m in _BLOCK.finditer(kb):
        sid, title, cancelled, weekday, month_day, start, start_m, end, end_m = m.group(
            1, 2, 3, 4, 5, 6, 7, 8, 9
        )
        month, day_of_month = month_day.split()
        day = date(2026, _MONTHS.index(month) + 1, int(day_of_month))
        assert f"{day:%A}" == weekday, sid
        out[sid] = {
            "title": title,
            "cancelled": bool(cancelled),
            "day": day,
            "start": _clock(start, start_m or end_m),
            "end": _clock(end, end_m),
            "room": m.group(10),
            "capacity": int(m.group(12).replace(",", "")),
            "sold_out": "Sold out" in m.group(14),
            "moved": "moved from" in m.group(13),
        }
    return out


def test_backend_sessions_match_the_knowledge_base(bench: Benchmark, spec: BackendSpec) -> None:
    kb = _kb_sessions(bench.knowledge_base)
    assert len(kb) == 80
    assert set(kb) == set(spec.sessions)
    today = date.fromisoformat(bench.current_date)
    for sid, want in kb.items():
        have = spec.sessions[sid]
        assert have.title == want["title"], sid
        assert have.day == want["day"], sid
        assert f"{have.start:%H:%M}" == want["start"], sid
        assert f"{have.end:%H:%M}" == want["end"], sid
        assert have.room == want["room"], sid
        assert have.capacity == want["capacity"], sid
        if want["sold_out"]:
            assert have.registered == have.capacity, sid
        expected_mode = (
            "none"
            if have.room == "Foundry Hall"
            else "closed"
            if want["cancelled"] or have.day < today
            else "open"
        )
        assert have.registration == expected_mode, sid


def test_planted_hard_parts_are_in_the_knowledge_base(bench: Benchmark, spec: BackendSpec) -> None:
    kb = bench.knowledge_base
    sessions = _kb_sessions(kb)
    # Two speakers share a surname; two sessions have near-identical titles.
    assert "Dr. Mireille Varga" in kb and "Tobias Varga" in kb
    titles = {s["title"] for s in sessions.values()}
    assert {
        "Evaluating Voice Agents in Production",
        "Evaluating Voice Agents Before Production",
    } <= titles
    # A session moved rooms, consistently in its entry, the program and the changes list.
    assert sessions["CL-306"]["moved"] and sessions["CL-306"]["room"] == "Lathe Room"
    assert "CL-306 in Lathe Room" in kb
    changes = kb[kb.index("## Schedule changes") :]
    assert "moved from the Kiln Room to the larger Lathe Room" in changes
    # A cancelled session and a substituted speaker.
    assert sessions["CL-311"]["cancelled"] and spec.sessions["CL-311"].registration == "closed"
    assert "Pieter van Doorn replaces Greta Hollenbeck" in kb
    # Full rooms: one the knowledge base marks, two only the live system knows.
    full = {
        k
        for k, s in spec.sessions.items()
        if s.registration == "open" and s.registered == s.capacity
    }
    assert full == {"CL-207", "CL-222", "CL-321"}
    assert sessions["CL-207"]["sold_out"] and not sessions["CL-222"]["sold_out"]


# -- consistency, oracle and baseline -----------------------------------------------------


def test_static_consistency(bench: Benchmark) -> None:
    assert consistency_problems(bench) == []


def test_oracle_scores_100_percent(bench: Benchmark) -> None:
    assert oracle_check(bench) == []


def test_oracle_final_state_is_the_last_expected_state(bench: Benchmark, tmp_path: Path) -> None:
    config = RunConfig(benchmark="conference", target="local/oracle", runs_dir=tmp_path)
    path = asyncio.run(run_conversation(config))
    records = RunDirectory.open_existing(path).turns()
    final = records[-1].state_after
    expected = bench.turns[-1].expect.state
    assert expected is not None
    assert set(expected) == set(final)
    assert state_matches(expected, final) == []
    # The injected faults fired where the benchmark says they do.
    errors = {
        (r.turn, c.arguments.get("session_id"), c.result.get("error"))
        for r in records
        for c in r.tool_calls
        if isinstance(c.result, dict) and c.result.get("status") == "error"
    }
    assert errors == {
        ("5", "CL-222", "SESSION_FULL"),
        ("21", "CL-301", "INTERNAL_ERROR"),
        ("34", None, "REQUEST_NOT_PROCESSED"),
        ("39", "CL-321", "SESSION_FULL"),
        ("39", "CL-322", "TEMPORARILY_UNAVAILABLE"),
    }


def test_baseline_scores_well_below_the_oracle(tmp_path: Path) -> None:
    config = RunConfig(benchmark="conference", target="local/baseline", runs_dir=tmp_path)
    path = asyncio.run(run_conversation(config))
    card = evaluate_run(path).card
    assert card.strict_pass.rate is not None
    assert card.strict_pass.rate < 0.5
    rates = {d.dimension: d.rate for d in card.dimensions}
    assert rates["facts"] is not None and rates["facts"] < 0.5


def test_reasonable_alternative_paths_also_pass(bench: Benchmark, tmp_path: Path) -> None:
    """Other orders and extra checks a careful agent may choose are not penalized."""
    alt = tmp_path / "alt"
    shutil.copytree(bench.root, alt)
    data = yaml.safe_load((alt / "turns.yaml").read_text(encoding="utf-8"))
    turns = {t["id"]: t for t in data["turns"]}
    name = "sofia marchetti"

    def reg(sid: str) -> dict:
        return {"name": "register_for_session", "args": {"name": name, "session_id": sid}}

    def conflict(a: str, b: str) -> dict:
        return {"name": "check_schedule_conflict", "args": {"session_id_1": a, "session_id_2": b}}

    alternatives = {
        "7": [conflict("CL-222", "CL-214")],  # checks instead of reasoning
        "25": [conflict("CL-223", "CL-221"), reg("CL-212"), reg("CL-223"), reg("CL-218")],
        "27": [reg("CL-222")],  # tries again: still full
        "39": [reg("CL-321"), reg("CL-322"), reg("CL-322")],
        "41": [reg("CL-205")],  # tries: hits the limit
        "42": [  # registers first, then cancels and registers again
            reg("CL-205"),
            {
                "name": "cancel_action",
                "args": {"action_type": "registration", "name": name, "session_id": "cl-212"},
            },
            reg("CL-205"),
        ],
        "55": [  # submits the new request before cancelling the old one
            {
                "name": "submit_dietary_request",
                "args": {"name": name, "dietary_preference": "vegan_gluten_free"},
            },
            {
                "name": "cancel_action",
                "args": {"action_type": "dietary_request", "name": name, "details": "vegan"},
            },
        ],
    }
    for turn_id, calls in alternatives.items():
        turns[turn_id]["expect"]["required_calls"] = calls
    (alt / "turns.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    config = RunConfig(benchmark=str(alt), target="local/oracle", runs_dir=tmp_path / "runs")
    records = RunDirectory.open_existing(asyncio.run(run_conversation(config))).turns()
    result = judge_deterministic(bench, records)
    assert [(j.turn, j.dimension, j.evidence) for j in result.judgments if not j.passed] == []
    assert result.totals.end_state.passed


# -- the world the tools act on -----------------------------------------------------------


def _backend(bench: Benchmark, spec: BackendSpec) -> ToolBackend:
    backend = ToolBackend(spec, {t.name for t in bench.tools})
    backend.begin_turn("t")
    return backend


def _register(backend: ToolBackend, sid: str) -> str:
    result, _ = backend.call("register_for_session", {"name": NAME, "session_id": sid})
    return result.get("error") or result["status"]


def test_world_enforces_the_knowledge_base_policies(bench: Benchmark, spec: BackendSpec) -> None:
    backend = _backend(bench, spec)
    assert _register(backend, "CL-301") == "NO_REGISTRATION_NEEDED"  # keynote
    assert _register(backend, "CL-105") == "REGISTRATION_CLOSED"  # yesterday
    assert _register(backend, "CL-311") == "REGISTRATION_CLOSED"  # cancelled
    assert _register(backend, "CL-207") == "SESSION_FULL"
    assert _register(backend, "CL-221") == "success"
    assert _register(backend, "CL-223") == "SCHEDULE_CONFLICT"  # same slot
    assert _register(backend, "CL-218") == "success"  # back-to-back with CL-221
    for sid in ("CL-205", "CL-304", "CL-309", "CL-319"):
        assert _register(backend, sid) == "success"
    assert _register(backend, "CL-212") == "REGISTRATION_LIMIT"  # six already
    result, _ = backend.call(
        "check_schedule_conflict", {"session_id_1": "CL-304", "session_id_2": "CL-306"}
    )
    assert result["conflict"] is True


def test_world_injects_transient_and_persistent_faults(bench: Benchmark, spec: BackendSpec) -> None:
    backend = _backend(bench, spec)
    args = {"name": NAME, "session_id": "CL-301"}
    assert backend.call("add_to_schedule", args)[0]["error"] == "INTERNAL_ERROR"
    assert backend.call("add_to_schedule", args)[0]["status"] == "success"
    assert _register(backend, "CL-322") == "TEMPORARILY_UNAVAILABLE"
    assert _register(backend, "CL-322") == "TEMPORARILY_UNAVAILABLE"
    support = {"name": NAME, "issue_description": "badge QR code missing"}
    assert backend.call("request_tech_support", support)[0]["error"] == "REQUEST_NOT_PROCESSED"


def test_cancel_finds_a_registration_whatever_the_id_case(
    bench: Benchmark, spec: BackendSpec
) -> None:
    backend = _backend(bench, spec)
    assert _register(backend, "cl-214") == "success"
    result, _ = backend.call(
        "cancel_action", {"action_type": "registration", "name": NAME, "session_id": "cl-214"}
    )
    assert result["status"] == "success"
    assert backend.snapshot()["registrations"] == []
    assert backend.snapshot()["cancelled"] == {"registration": ["CL-214"]}


def test_cancel_prefers_the_request_that_matches_exactly(
    bench: Benchmark, spec: BackendSpec
) -> None:
    backend = _backend(bench, spec)
    for pref in ("vegan", "vegan_gluten_free"):
        backend.call("submit_dietary_request", {"name": NAME, "dietary_preference": pref})
    result, _ = backend.call(
        "cancel_action", {"action_type": "dietary_request", "name": NAME, "details": "vegan"}
    )
    assert result["status"] == "success"
    assert backend.snapshot()["requests"] == {"dietary_request": ["vegan_gluten_free"]}
