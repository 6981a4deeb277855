"""Issue 32 item 7: an HTTP target nobody listens on stops the run after its first turn.

An HTTP target's session opens without contacting it, so "the session opened" did not show
the target could be reached: each of the benchmark's turns waited through its own retries
(68 s on ``smoke``). Now a turn given up because nothing could be connected to, before any
turn got an answer, stops the run there, as the websocket targets' runs stop.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from voxbench.core.errors import RunIncompleteError
from voxbench.core.rundir import RunDirectory
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_http_target_stops_after_the_first_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000000000")
    config = RunConfig(
        benchmark="smoke",
        target="openai/gpt-4o-mini",
        base_url=f"http://127.0.0.1:{_closed_port()}/v1",
        runs_dir=tmp_path,
        max_retries=1,
    )
    with pytest.raises(RunIncompleteError, match="could not be reached") as err:
        asyncio.run(run_conversation(config))
    assert "9 later turn(s) not tried" in str(err.value)
    (path,) = [p.parent for p in tmp_path.glob("*/*/run.json")]
    run = RunDirectory.open_existing(path)
    assert [r.status for r in run.turns()] == ["error"]
    assert run.info().status == "error"
