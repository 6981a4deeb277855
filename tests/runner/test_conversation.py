"""The text-mode runner, driven with scripted sessions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.runner.scripted import ScriptedSession
from voxbench.core.errors import ConfigError, RunError
from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import RunConfig, parse_turn_selection
from voxbench.runner.launch import run_conversation


def config(tmp_path: Path, **kw) -> RunConfig:
    return RunConfig(benchmark="smoke", target="local/oracle", runs_dir=tmp_path / "runs", **kw)


async def run_scripted(tmp_path: Path, factory, **kw) -> RunDirectory:
    path = await run_conversation(config(tmp_path, **kw), session_factory=factory)
    return RunDirectory.open_existing(path)


async def test_oracle_run_writes_every_artifact(tmp_path: Path) -> None:
    path = await run_conversation(config(tmp_path))
    run = RunDirectory.open_existing(path)
    info = run.info()
    assert info.status == "success" and info.target.name == "local/oracle"
    records = run.turns()
    assert [r.turn for r in records] == [str(i) for i in range(10)]
    assert all(r.status == "ok" for r in records)
    assert records[4].tool_calls[0].result["error"] == "INTERNAL_ERROR"
    assert records[4].tool_calls[1].result["status"] == "success"
    assert records[-1].state_after["ended"] is True
    events = run.events()
    assert [e.seq for e in events] == list(range(len(events)))
    assert all(b.t >= a.t for a, b in zip(events, events[1:], strict=False))
    types = {e.type for e in events}
    assert {
        "run_started",
        "turn_started",
        "tool_call",
        "tool_result",
        "assistant_text",
        "turn_complete",
        "run_finished",
    } <= types
    assert len((path / "checkpoints.jsonl").read_text().splitlines()) == 10
    assert path.parent.name == "smoke" and "local-oracle" in path.name


async def test_only_turns(tmp_path: Path) -> None:
    run = await run_scripted(tmp_path, lambda: ScriptedSession(), only_turns="0,3-5")
    assert [r.turn for r in run.turns()] == ["0", "3", "4", "5"]
    assert parse_turn_selection("2, 7-9,1") == [1, 2, 7, 8, 9]
    with pytest.raises(ConfigError, match="bad turn selection"):
        parse_turn_selection("3-1")
    with pytest.raises(RunError, match="do not exist"):
        await run_scripted(tmp_path, lambda: ScriptedSession(), only_turns="99")


async def test_tool_rounds_and_malformed_calls(tmp_path: Path) -> None:
    async def step(s: ScriptedSession, _: str) -> None:
        bad = await s.raw_tool_call("c1", "register_for_session", "{not json")
        good = await s.call_tool(
            "register_for_session", {"name": "Priya Raman", "session_id": "H-101"}
        )
        await s.say(f"{bad['error']} then {good['status']}")

    run = await run_scripted(tmp_path, lambda: ScriptedSession({1: step}), only_turns="1")
    rec = run.turns()[0]
    assert rec.assistant_text == "MALFORMED_ARGUMENTS then success"
    assert rec.tool_calls[0].parse_error and rec.tool_calls[0].raw_arguments == "{not json"
    assert rec.state_after["registrations"] == ["H-101"]


async def test_tool_call_cap(tmp_path: Path) -> None:
    async def step(s: ScriptedSession, _: str) -> None:
        results = [await s.call_tool("end_session", {}) for _ in range(4)]
        await s.say(",".join(r.get("error", r["status"]) for r in results))

    run = await run_scripted(
        tmp_path, lambda: ScriptedSession({0: step}), only_turns="0", max_tool_calls_per_turn=2
    )
    assert run.turns()[0].assistant_text == "success,success,TOO_MANY_CALLS,TOO_MANY_CALLS"


async def test_timeout_is_a_recorded_failure_not_a_hang(tmp_path: Path) -> None:
    async def hang(s: ScriptedSession, _: str) -> None:
        await s.say("thinking")
        await asyncio.sleep(3600)

    run = await run_scripted(
        tmp_path, lambda: ScriptedSession({1: hang}), only_turns="0-2", turn_timeout=0.2
    )
    records = run.turns()
    assert [r.status for r in records] == ["ok", "error", "ok"]
    assert "no complete response within 0.2 s" in records[1].errors[0]
    assert any(e.type == "turn_timeout" for e in run.events())


async def test_retryable_error_retries_with_a_fresh_session(tmp_path: Path) -> None:
    sessions: list[ScriptedSession] = []

    def factory() -> ScriptedSession:
        async def fail_once(s: ScriptedSession, _: str) -> None:
            if len(sessions) == 1:
                await s.emit_error(
                    category="rate_limit", message="429", retryable=True, retry_after=0.0
                )
                await asyncio.sleep(3600)
            await s.say("recovered")

        session = ScriptedSession({2: fail_once})
        sessions.append(session)
        return session

    run = await run_scripted(tmp_path, factory, only_turns="0-3")
    records = run.turns()
    assert records[2].assistant_text == "recovered" and records[2].retries == 1
    assert len(sessions) == 2 and sessions[1].history_len == 4  # turns 0 and 1 rehydrated
    retry = [e for e in run.events() if e.type == "turn_retry"]
    assert retry and retry[0].reason == "rate_limit: 429"


async def test_dropped_session_reconnects_and_is_recorded(tmp_path: Path) -> None:
    sessions: list[ScriptedSession] = []

    def factory() -> ScriptedSession:
        async def drop(s: ScriptedSession, _: str) -> None:
            if len(sessions) == 1:
                await s.emit_error(
                    category="connectivity", message="socket closed", fatal=True, retryable=True
                )
                await asyncio.sleep(3600)
            await s.say("back")

        session = ScriptedSession({1: drop})
        sessions.append(session)
        return session

    run = await run_scripted(tmp_path, factory, only_turns="0-2")
    rec = run.turns()[1]
    assert rec.reconnected and rec.assistant_text == "back"


async def test_persistent_errors_fail_the_turn_and_the_run_goes_on(tmp_path: Path) -> None:
    async def always(s: ScriptedSession, _: str) -> None:
        await s.emit_error(category="server", message="500", retryable=True)
        await asyncio.sleep(3600)

    run = await run_scripted(
        tmp_path, lambda: ScriptedSession({1: always}), only_turns="0-2", max_retries=2
    )
    records = run.turns()
    assert [r.status for r in records] == ["ok", "error", "ok"]
    assert records[1].retries == 2 and "gave up after 2 retries" in records[1].errors[0]


async def test_agent_ending_the_call_early_skips_the_rest(tmp_path: Path) -> None:
    async def hang_up(s: ScriptedSession, _: str) -> None:
        await s.call_tool("end_session", {})
        await s.say("bye")

    run = await run_scripted(tmp_path, lambda: ScriptedSession({7: hang_up}))
    records = run.turns()
    assert len(records) == 10
    assert [r.status for r in records[8:]] == ["ended_early", "ended_early"]


async def test_backend_state_is_restored_before_a_retry(tmp_path: Path) -> None:
    calls: list[dict] = []

    def factory() -> ScriptedSession:
        async def register_then_fail(s: ScriptedSession, _: str) -> None:
            result = await s.call_tool(
                "register_for_session", {"name": "P R", "session_id": "H-101"}
            )
            calls.append(result)
            if len(calls) == 1:
                await s.emit_error(
                    category="connectivity", message="drop", fatal=True, retryable=True
                )
                await asyncio.sleep(3600)
            await s.say("done")

        return ScriptedSession({1: register_then_fail})

    run = await run_scripted(tmp_path, factory, only_turns="1")
    assert [c["status"] for c in calls] == ["success", "success"]  # not ALREADY_REGISTERED
    assert run.turns()[0].state_after["registrations"] == ["H-101"]


async def test_secrets_in_options_never_reach_run_json(tmp_path: Path) -> None:
    path = await run_conversation(
        config(
            tmp_path, target_options={"api_key": "sk-live-abcdefghijklmnopqrstu"}, only_turns="0"
        )
    )
    text = (path / "run.json").read_text()
    assert "abcdefghijklmnop" not in text
    assert json.loads(text)["target"]["args"]["api_key"] == "***"


async def test_a_reconnect_hands_the_last_sessions_resume_handle_to_the_next(
    tmp_path: Path,
) -> None:
    sessions: list[ScriptedSession] = []

    class Resumable(ScriptedSession):
        def resume_handle(self) -> str | None:
            return f"handle-of-{sessions.index(self)}-after-{len(self.turns_heard)}"

    def factory() -> ScriptedSession:
        async def drop(s: ScriptedSession, _: str) -> None:
            if len(sessions) == 1:
                await s.emit_error(
                    category="connectivity", message="socket closed", fatal=True, retryable=True
                )
                await asyncio.sleep(3600)
            await s.say("back")

        session = Resumable({1: drop})
        sessions.append(session)
        return session

    run = await run_scripted(tmp_path, factory, only_turns="0-2")
    assert run.turns()[1].reconnected
    assert sessions[0].setup.resume_handle is None
    # The dropped session heard turns 0 and 1; its handle goes to the next, with history.
    assert sessions[1].setup.resume_handle == "handle-of-0-after-2"
    assert sessions[1].history_len == 2


async def test_a_connection_lost_between_turns_is_replaced_before_the_next_turn(
    tmp_path: Path,
) -> None:
    sessions: list[ScriptedSession] = []

    def factory() -> ScriptedSession:
        async def answer_then_drop(s: ScriptedSession, _: str) -> None:
            await s.say("ok")
            await s.complete()
            await s.emit_error(
                category="connectivity", message="socket closed", fatal=True, retryable=True
            )

        session = ScriptedSession({0: answer_then_drop})
        sessions.append(session)
        return session

    run = await run_scripted(tmp_path, factory, only_turns="0-1", turn_timeout=5.0)
    records = run.turns()
    # Turn 1 went to a fresh session at once: no timeout, no retry on the dead one.
    assert [r.status for r in records] == ["ok", "ok"] and records[1].retries == 0
    assert len(sessions) == 2 and sessions[1].turns_heard == [sessions[1].texts[1]]
    dropped = [e for e in run.events() if e.type == "target_error"]
    assert dropped and dropped[0].turn is None
