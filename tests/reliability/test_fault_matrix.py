"""Every adapter × every fault ends in a clear per-turn or run-level outcome (issue 11).

Each case runs turns 0-2 of the smoke benchmark (turn 1 calls a tool, so its answer is the
2nd and 3rd request) against a protocol-faithful fake with one injected fault, then checks
what a user would see: which turns are ok, what was retried, how the run ended, and that no
artifact holds a secret. Outcomes are read from the recorded events, never from the clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from voxbench.benchmarks.loader import load_benchmark
from voxbench.core.errors import AuthenticationError, RunIncompleteError
from voxbench.core.records import TurnRecord
from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.testing import (
    FakeAnthropicServer,
    FakeBedrockServer,
    FakeGeminiServer,
    FakeOpenAIServer,
    GoldenScript,
)
from voxbench.testing.gemini_live import FakeGeminiLiveServer
from voxbench.testing.openai_realtime import FakeOpenAIRealtimeServer
from voxbench.testing.secrets_scan import find_secrets
from voxbench.testing.ultravox import FakeUltravoxServer

KEY = "matrix-key-1234567890"
HANG_TIMEOUT = 1.5
"""Seconds a turn may take in the hang cases (far above a fake's answer, short to wait)."""


@dataclass(frozen=True)
class Adapter:
    target: str
    server: Callable[..., Any]
    key_vars: tuple[str, ...]
    http: bool
    """An HTTP text API (a 429 carries ``Retry-After``); False: a realtime websocket."""


ADAPTERS = {
    "openai": Adapter("openai/gpt-4o-mini", FakeOpenAIServer, ("OPENAI_API_KEY",), True),
    "anthropic": Adapter(
        "anthropic/claude-sonnet-4-5", FakeAnthropicServer, ("ANTHROPIC_API_KEY",), True
    ),
    "gemini": Adapter("gemini/gemini-3-flash", FakeGeminiServer, ("GEMINI_API_KEY",), True),
    "bedrock": Adapter(
        "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0",
        FakeBedrockServer,
        ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        True,
    ),
    "openai-realtime": Adapter(
        "openai-realtime/gpt-realtime", FakeOpenAIRealtimeServer, ("OPENAI_API_KEY",), False
    ),
    "gemini-live": Adapter(
        "gemini-live/gemini-3.1-flash-live-preview",
        FakeGeminiLiveServer,
        ("GEMINI_API_KEY",),
        False,
    ),
    "ultravox": Adapter("ultravox/ultravox-v0.7", FakeUltravoxServer, ("ULTRAVOX_API_KEY",), False),
}

FAULTS = (
    "rate_limit",
    "server_error",
    "drop",
    "hang",
    # Broken tool-call JSON breaks the wire format on purpose (Gemini Live sends args as an
    # object): the conformance check must not fail the fake for doing what it was told.
    pytest.param("malformed_args", marks=pytest.mark.wire_nonconforming),
    "duplicate",
    "out_of_order",
    "unauthorized",
    "give_up_then_recover",
    "persistent",
)


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "ULTRAVOX_API_KEY"):
        monkeypatch.setenv(var, KEY)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", KEY)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "BEDROCK_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def _spec(fault: str) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """``(fault specs, server options, run options)`` of a matrix fault."""
    specs = {
        "rate_limit": ["429@2:retry_after=0.05"],
        "server_error": ["500@2"],
        "drop": ["drop@3"],  # turn 1's answer after its tool call, cut mid-stream
        "hang": ["hang@2"],
        "malformed_args": ["malformed_args@2"],
        "duplicate": ["duplicate"],
        "out_of_order": [],
        "unauthorized": ["unauthorized@1-100"],
        "give_up_then_recover": ["500@2-5"],  # turn 1's four attempts all fail
        "persistent": ["500"],
    }[fault]
    server = {"out_of_order": True} if fault == "out_of_order" else {}
    run = {"turn_timeout": HANG_TIMEOUT if fault == "hang" else 20.0}
    return specs, server, run


async def _run(tmp_path: Path, adapter: Adapter, fault: str) -> tuple[Path, BaseException | None]:
    specs, server_options, run_options = _spec(fault)
    script = GoldenScript(load_benchmark("smoke"))
    raised: BaseException | None = None
    async with adapter.server(script, faults=specs, **server_options) as server:
        config = RunConfig(
            benchmark="smoke",
            target=adapter.target,
            base_url=server.url,
            runs_dir=tmp_path / "runs",
            only_turns=[0, 1, 2],
            max_retries=3,
            **run_options,
        )
        try:
            await run_conversation(config)
        except (AuthenticationError, RunIncompleteError) as exc:
            raised = exc
    (path,) = (tmp_path / "runs" / "smoke").iterdir()
    return path, raised


def _events(run: RunDirectory, kind: str) -> list[Any]:
    return [e for e in run.events() if e.type == kind]


def _answered_golden(records: list[TurnRecord]) -> None:
    smoke = load_benchmark("smoke")
    for record in records:
        turn = smoke.turns[int(record.turn)]
        assert record.status == "ok", record.errors
        assert record.assistant_text == turn.golden_text
        made = [c.name for c in record.tool_calls if c.parse_error is None]
        assert made == [c.name for c in turn.expect.required_calls]


def _unsupported(adapter: str, fault: str) -> str | None:
    if fault == "out_of_order" and ADAPTERS[adapter].http:
        return "HTTP streams are ordered by the transport; only realtime fakes reorder events"
    return None


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
async def test_every_fault_ends_in_a_clear_outcome(
    tmp_path: Path, adapter: str, fault: str
) -> None:
    if why := _unsupported(adapter, fault):
        pytest.skip(why)
    spec = ADAPTERS[adapter]
    path, raised = await _run(tmp_path, spec, fault)
    run = RunDirectory.open_existing(path)
    records = run.turns()
    info = run.info()
    retries = _events(run, "turn_retry")
    assert find_secrets(path, secrets=[KEY]) == []

    if fault == "unauthorized":
        # One clear message naming the key to fix; nothing recorded as the model's answer.
        assert isinstance(raised, AuthenticationError)
        assert any(var in str(raised) for var in spec.key_vars)
        assert info.status == "error" and info.error == str(raised)
        assert records == [] and retries == []
        return
    if fault == "persistent":
        assert isinstance(raised, RunIncompleteError)
        assert info.status == "error" and "every turn failed" in (info.error or "")
        assert [r.status for r in records] == ["error"] * 3
        assert all("gave up after 3 retries" in r.errors[0] for r in records)
        return

    assert raised is None and info.status == "success"
    assert [r.turn for r in records] == ["0", "1", "2"]
    if fault == "give_up_then_recover":
        assert [r.status for r in records] == ["ok", "error", "ok"]
        assert records[1].retries == 3 and len(_events(run, "turn_failed")) == 1
        _answered_golden([records[0], records[2]])
        sent = [e.text for e in _events(run, "user_text_sent") if e.turn == "2"]
        assert sent == [load_benchmark("smoke").turns[2].text]  # sent once, answered
        assert not _events(run, "turn_timeout")  # no wait on a dead session
        return

    _answered_golden(records)
    if fault in ("duplicate", "out_of_order"):
        assert retries == []
        return
    if fault == "malformed_args":
        # Recorded as a call that did not parse and answered with an error, or (Gemini's
        # MALFORMED_FUNCTION_CALL finish) retried: either way turn 1 ends with its call made.
        broken = [c for c in records[1].tool_calls if c.parse_error]
        assert broken or [r.reason.split(":")[0] for r in retries] == ["malformed_tool_call"]
        assert all(c.result["error"] == "MALFORMED_ARGUMENTS" for c in broken)
        return
    (retry,) = retries
    assert retry.turn == "1" and records[1].retries == 1
    if fault == "hang":
        (timeout,) = _events(run, "turn_timeout")
        assert timeout.turn == "1" and timeout.seconds == HANG_TIMEOUT
        assert retry.reason.startswith("timeout") and retry.reconnect
    if fault == "drop":
        assert retry.reconnect and records[1].reconnected
    if fault == "rate_limit" and spec.http:
        assert retry.reason.startswith("rate_limit")
    if fault == "rate_limit" and spec.http and adapter != "bedrock":  # AWS sends no Retry-After
        assert retry.delay == pytest.approx(0.05)  # Retry-After honoured
