"""Issue 11: every provider fault ends in a clear turn or run outcome (runner and sessions)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.runner.scripted import ScriptedSession
from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.errors import AuthenticationError, PrerequisiteError, RunIncompleteError
from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import RunConfig
from voxbench.runner.credentials import check_credentials
from voxbench.runner.launch import resume_run, run_conversation
from voxbench.testing import FakeOpenAIServer, GoldenScript
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.secrets_scan import find_secrets

KEY = "test-key-123456"


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def _config(tmp_path: Path, target: str, base_url: str | None, **kw: object) -> RunConfig:
    return RunConfig(
        benchmark="smoke", target=target, base_url=base_url, runs_dir=tmp_path / "runs", **kw
    )


def _latest_run(tmp_path: Path) -> RunDirectory:
    (path,) = (tmp_path / "runs" / "smoke").iterdir()
    return RunDirectory.open_existing(path)


def _sent(run: RunDirectory, turn: str) -> list[str]:
    return [e.text for e in run.events() if e.type == "user_text_sent" and e.turn == turn]


# -- defect 1: a give-up poisons the next turn ------------------------------------------


async def test_the_turn_after_a_give_up_is_sent_and_answered_http(tmp_path: Path) -> None:
    smoke = load_benchmark("smoke")
    # Requests 2-5 are turn 1's four attempts: it gives up; request 6 is turn 2.
    async with FakeOpenAIServer(GoldenScript(smoke), faults=["server_error@2-5"]) as server:
        path = await run_conversation(
            _config(tmp_path, "openai/gpt-4o-mini", server.url, only_turns="0-2")
        )
    run = RunDirectory.open_existing(path)
    records = run.turns()
    assert [r.status for r in records] == ["ok", "error", "ok"]
    assert "gave up after 3 retries" in records[1].errors[0]
    assert records[2].assistant_text == smoke.turns[2].golden_text
    assert _sent(run, "2") == [smoke.turns[2].text]


async def test_the_turn_after_a_give_up_on_a_dropped_socket_reconnects(tmp_path: Path) -> None:
    smoke = load_benchmark("smoke")
    # Responses 2-5 are turn 1's four attempts, each cut mid-answer.
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), faults=["drop@2-5"]) as server:
        path = await run_conversation(
            _config(
                tmp_path,
                "openai-realtime/gpt-realtime",
                server.url,
                only_turns="0-2",
                turn_timeout=30,
            )  # fmt: skip
        )
    run = RunDirectory.open_existing(path)
    records = run.turns()
    assert [r.status for r in records] == ["ok", "error", "ok"]
    assert records[2].assistant_text == smoke.turns[2].golden_text
    assert not [e for e in run.events() if e.type == "turn_timeout"]


async def test_a_stale_turn_complete_is_never_taken_for_the_next_turns_answer(
    tmp_path: Path,
) -> None:
    async def answer_twice(s: ScriptedSession, _: str) -> None:
        await s.say("first")
        await s.complete()  # a duplicated completion: the second one is stale

    run_dir = RunDirectory.open_existing(
        await run_conversation(
            _config(tmp_path, "local/oracle", None, only_turns="0-1"),
            session_factory=lambda: ScriptedSession({0: answer_twice}),
        )
    )
    records = run_dir.turns()
    assert [r.status for r in records] == ["ok", "ok"]
    assert records[1].assistant_text == "ok"
    # The stale completion is on the timeline, outside every turn.
    completions = [e.turn for e in run_dir.events() if e.type == "turn_complete"]
    assert completions == ["0", None, "1"]


# -- defect 2: authentication failures look like silence -------------------------------


async def test_a_rejected_key_stops_the_run_at_once_naming_the_variable(tmp_path: Path) -> None:
    smoke = load_benchmark("smoke")
    async with FakeOpenAIServer(GoldenScript(smoke), faults=["unauthorized@1-100"]) as server:
        with pytest.raises(AuthenticationError, match="OPENAI_API_KEY") as raised:
            await run_conversation(_config(tmp_path, "openai/gpt-4o-mini", server.url))
    assert raised.value.exit_code == 3
    run = _latest_run(tmp_path)
    info = run.info()
    assert info.status == "error" and "OPENAI_API_KEY" in (info.error or "")
    assert run.turns() == []  # nothing recorded as a model answer; resume re-runs turn 0
    assert len(server.requests) == 1  # stopped at once: no retry, no next turn


async def test_a_rejected_realtime_key_stops_the_run_naming_the_variable(tmp_path: Path) -> None:
    smoke = load_benchmark("smoke")
    async with FakeOpenAIRealtimeServer(
        GoldenScript(smoke), faults=["unauthorized@1-100"]
    ) as server:
        with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
            await run_conversation(_config(tmp_path, "openai-realtime/gpt-realtime", server.url))
    assert _latest_run(tmp_path).info().status == "error"


async def test_a_refused_realtime_handshake_stops_the_run(tmp_path: Path) -> None:
    smoke = load_benchmark("smoke")
    async with FakeOpenAIRealtimeServer(GoldenScript(smoke), api_key="the-right-key") as server:
        with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
            await run_conversation(_config(tmp_path, "openai-realtime/gpt-realtime", server.url))
    assert len(server.handshakes) == 1
    assert _latest_run(tmp_path).info().status == "error"


async def test_a_run_in_which_every_turn_failed_ends_in_error(tmp_path: Path) -> None:
    smoke = load_benchmark("smoke")
    async with FakeOpenAIServer(GoldenScript(smoke), faults=["server_error"]) as server:
        with pytest.raises(RunIncompleteError, match="every turn failed") as raised:
            await run_conversation(
                _config(tmp_path, "openai/gpt-4o-mini", server.url, only_turns="0-1")
            )
    assert raised.value.exit_code == 4
    run = _latest_run(tmp_path)
    assert run.info().status == "error" and "every turn failed" in (run.info().error or "")
    assert [r.status for r in run.turns()] == ["error", "error"]  # recorded, resumable


# -- defect 8: URL userinfo in artifacts ------------------------------------------------


async def test_base_url_credentials_never_reach_an_artifact(tmp_path: Path) -> None:
    smoke = load_benchmark("smoke")
    async with FakeOpenAIServer(GoldenScript(smoke), faults=["server_error@1"]) as server:
        url = server.url.replace("http://", "http://alice:hunter2-pass@")
        path = await run_conversation(_config(tmp_path, "openai/gpt-4o-mini", url, only_turns="0"))
    info = RunDirectory.open_existing(path).info()
    assert info.status == "success"
    assert "hunter2-pass" not in (path / "run.json").read_text()
    assert "http://***@127.0.0.1" in info.config["base_url"]  # the host stays readable
    from voxbench.evaluation import evaluate_run

    await asyncio.to_thread(evaluate_run, path)  # analysis, judgments, scorecard too
    assert (path / RunDirectory.SCORECARD).is_file() and (path / RunDirectory.REPORT).is_file()
    # A report quoting the endpoint is redacted as it is written, like every JSON file.
    RunDirectory(path).write_text(path / "notes.md", f"endpoint: {url}\n")
    assert (
        path / "notes.md"
    ).read_text() == f"endpoint: {url.replace('alice:hunter2-pass', '***')}\n"
    assert find_secrets(path, secrets=[KEY, "hunter2-pass"]) == []


# -- defect 10: timeouts, cancellation, checkpoint/transcript pairs ---------------------


async def test_a_hung_turn_is_retried_on_a_fresh_session(tmp_path: Path) -> None:
    smoke = load_benchmark("smoke")
    async with FakeOpenAIServer(GoldenScript(smoke), faults=["hang@2"]) as server:
        path = await run_conversation(
            _config(tmp_path, "openai/gpt-4o-mini", server.url, only_turns="0-2", turn_timeout=2.0)
        )
    run = RunDirectory.open_existing(path)
    records = run.turns()
    assert [r.status for r in records] == ["ok", "ok", "ok"]
    assert records[1].retries == 1 and records[1].reconnected
    (timeout,) = [e for e in run.events() if e.type == "turn_timeout"]
    (retry,) = [e for e in run.events() if e.type == "turn_retry"]
    assert timeout.turn == retry.turn == "1" and retry.reason.startswith("timeout")


async def test_a_cancelled_run_says_cancelled_in_run_json(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def stall(s: ScriptedSession, _: str) -> None:
        started.set()
        await asyncio.sleep(3600)

    task = asyncio.create_task(
        run_conversation(
            _config(tmp_path, "local/oracle", None),
            session_factory=lambda: ScriptedSession({1: stall}),
        )
    )
    await asyncio.wait_for(started.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    run = _latest_run(tmp_path)
    assert run.info().status == "cancelled"
    assert [r.turn for r in run.turns()] == ["0"]


async def test_a_kill_between_checkpoint_and_transcript_leaves_one_checkpoint_per_turn(
    tmp_path: Path,
) -> None:
    path = await run_conversation(_config(tmp_path, "local/oracle", None, only_turns="0-3"))
    run = RunDirectory.open_existing(path)
    # As a kill leaves it: turn 3's checkpoint was written, its transcript line was not.
    lines = run.transcript_file.read_text().splitlines(keepends=True)
    run.transcript_file.write_text("".join(lines[:3]))
    await resume_run(path)
    checkpoints = [row["turn"] for row in _rows(run.checkpoints_file)]
    assert checkpoints == ["0", "1", "2", "3"]
    assert [r.turn for r in run.turns()] == ["0", "1", "2", "3"]


def _rows(file: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in file.read_text().splitlines() if line.strip()]


# -- defect 15c: every credential is checked before the first turn ---------------------


def test_missing_credentials_are_named_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    check_credentials("anthropic/claude-sonnet-4-5", judge="anthropic/claude-sonnet-4-5")
    check_credentials("local/oracle", stt="local/whisper-tiny.en", tts="local/espeak")
    with pytest.raises(PrerequisiteError, match="OPENAI_API_KEY"):
        check_credentials("anthropic/claude-sonnet-4-5", judge="openai/gpt-4o-mini")
    with pytest.raises(PrerequisiteError, match="OPENAI_API_KEY"):
        check_credentials("cascade/anthropic/claude-sonnet-4-5", tts="openai/tts-1")
    with pytest.raises(PrerequisiteError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        check_credentials("gemini-live/gemini-2.5-flash")


async def test_a_run_without_its_key_stops_before_the_first_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(PrerequisiteError, match="OPENAI_API_KEY"):
        await run_conversation(
            _config(tmp_path, "cascade/local/oracle", None, mode="audio", tts="openai/tts-1")
        )
    assert not (tmp_path / "runs").exists()  # nothing was started
