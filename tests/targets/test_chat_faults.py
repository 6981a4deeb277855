"""Injected faults end in a recorded retry or a recorded turn failure, never a crash or hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.errors import AuthenticationError
from voxbench.core.rundir import RunDirectory
from voxbench.testing import FakeAnthropicServer, FakeGeminiServer, FakeOpenAIServer, GoldenScript

from .chat_fixtures import run_smoke, runner_events, turns

SERVERS = {
    "openai/gpt-4o-mini": FakeOpenAIServer,
    "anthropic/claude-sonnet-4-5": FakeAnthropicServer,
    "gemini/gemini-3-flash": FakeGeminiServer,
}


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(var, "test-key-123456")


async def _run(tmp_path: Path, target: str, faults: list[str], **extra: object) -> Path:
    script = GoldenScript(load_benchmark("smoke"))
    async with SERVERS[target](script, faults=faults) as server:
        return await run_smoke(tmp_path, target, server.url, **extra)


def _assert_complete_run(path: Path) -> None:
    records = turns(path)
    assert [r.turn for r in records] == [str(i) for i in range(10)]  # no lost turn
    assert runner_events(path, "run_finished")


@pytest.mark.parametrize("target", sorted(SERVERS))
@pytest.mark.parametrize(
    ("fault", "category", "reconnect"),
    [
        ("429@2:retry_after=0.05", "rate_limit", False),
        ("500@2", "server", False),
        ("drop@3", "connectivity", True),  # request 3: the step after turn 1's tool call
    ],
)
async def test_retryable_faults_are_retried_and_the_run_completes(
    tmp_path: Path, target: str, fault: str, category: str, reconnect: bool
) -> None:
    path = await _run(tmp_path, target, [fault])
    _assert_complete_run(path)
    assert all(r.status == "ok" for r in turns(path))
    (retry,) = runner_events(path, "turn_retry")
    assert retry.turn == "1"
    assert retry.reason.startswith(category)
    assert retry.reconnect is reconnect
    if category == "rate_limit":
        assert retry.delay == pytest.approx(0.05)  # Retry-After honoured
    assert turns(path)[1].retries == 1


@pytest.mark.parametrize("target", sorted(SERVERS))
async def test_a_hang_is_retried_after_its_timeout(tmp_path: Path, target: str) -> None:
    # Long enough that no answered turn reaches it on a busy host (at 0.5 s, a turn of a
    # test sharing 2 cores with another worker timed out too).
    path = await _run(tmp_path, target, ["hang@2"], turn_timeout=2.0)
    _assert_complete_run(path)
    records = turns(path)
    assert [r.status for r in records] == ["ok"] * 10
    assert records[1].retries == 1 and records[1].reconnected
    assert [e.turn for e in runner_events(path, "turn_timeout")] == ["1"]
    (retry,) = runner_events(path, "turn_retry")
    assert retry.reason == "timeout: no complete response within 2 s"


@pytest.mark.parametrize("target", sorted(SERVERS))
async def test_a_hang_on_every_attempt_fails_that_turn_and_the_run_goes_on(
    tmp_path: Path, target: str
) -> None:
    path = await _run(tmp_path, target, ["hang@2-3"], turn_timeout=0.3, max_retries=1)
    _assert_complete_run(path)
    records = turns(path)
    assert records[1].status == "error"
    assert records[1].errors == [
        "gave up after 1 retries: timeout: no complete response within 0.3 s"
    ]
    assert [r.status for r in records[2:]] == ["ok"] * 8


@pytest.mark.parametrize("target", sorted(SERVERS))
async def test_a_rejected_key_stops_the_run_with_the_variable_to_fix(
    tmp_path: Path, target: str
) -> None:
    var = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
    with pytest.raises(AuthenticationError, match=var[target.split("/")[0]]):
        await _run(tmp_path, target, ["401@1"])
    (path,) = (tmp_path / "runs" / "smoke").iterdir()
    run = RunDirectory.open_existing(path)
    assert run.info().status == "error" and var[target.split("/")[0]] in (run.info().error or "")
    assert run.turns() == [] and not runner_events(path, "turn_retry")


@pytest.mark.parametrize("target", sorted(SERVERS))
async def test_malformed_tool_json_is_recorded_then_the_run_goes_on(
    tmp_path: Path, target: str
) -> None:
    path = await _run(tmp_path, target, ["malformed_args@2"])
    _assert_complete_run(path)
    records = turns(path)
    if target.startswith("gemini"):
        # Gemini reports a broken call as finishReason MALFORMED_FUNCTION_CALL: retried.
        (retry,) = runner_events(path, "turn_retry")
        assert retry.reason.startswith("malformed_tool_call")
        assert records[1].status == "ok"
    else:
        calls = records[1].tool_calls
        assert calls[0].parse_error and calls[0].raw_arguments
        assert calls[0].result["error"] == "MALFORMED_ARGUMENTS"
        # The golden script re-sends the call properly after the error result.
        assert calls[1].arguments == {"name": "Priya Raman", "session_id": "H-101"}


@pytest.mark.parametrize("target", sorted(SERVERS))
async def test_duplicated_events_change_nothing(tmp_path: Path, target: str) -> None:
    clean = await _run(tmp_path / "clean", target, [])
    noisy = await _run(tmp_path / "noisy", target, ["duplicate"])
    for a, b in zip(turns(clean), turns(noisy), strict=True):
        assert b.status == "ok"
        assert b.assistant_text == a.assistant_text
        assert [(c.name, c.arguments) for c in b.tool_calls] == [
            (c.name, c.arguments) for c in a.tool_calls
        ]
        assert b.usage == a.usage
