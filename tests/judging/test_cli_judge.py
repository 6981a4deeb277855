"""``voxbench judge``, ``voxbench compare`` and ``voxbench run --judge`` as a user runs them."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from voxbench.cli.main import main
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import load_or_evaluate
from voxbench.judging import llm_judge
from voxbench.testing import FakeOpenAIServer

from .scripted import Act, JudgeScript, scripted_run


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_judge, "BACKOFF_BASE", 0.0)


def voxbench(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["voxbench", *args])
    monkeypatch.setenv("COLUMNS", "200")
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@contextmanager
def judge_server(script: JudgeScript) -> Iterator[FakeOpenAIServer]:
    """A fake judge on its own loop, for commands that run their own event loop."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = FakeOpenAIServer(script)
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_judge_writes_judgments_scorecard_report_and_compat(monkeypatch, capsys, tmp_path):
    _, _, run = asyncio.run(scripted_run(tmp_path, {"6": Act(calls=[], say="Sure.")}))
    code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--compat", "conversation-bench")
    assert code == 0, out
    assert "conversation-bench compat: tool_use_correct 9/10" in out
    for name in ("judged.jsonl", "scorecard.json", "report.md", "compat_conversation_bench.json"):
        assert (run / name).is_file(), name
    card = json.loads((run / "scorecard.json").read_text())
    assert card["checks"]["end_state"]["explained_by"] == ["turn 6 tool_use"]
    assert "### Turn 6" in (run / "report.md").read_text()


def test_judge_with_an_llm_then_show_keeps_its_verdicts(monkeypatch, capsys, tmp_path):
    _, _, run = asyncio.run(scripted_run(tmp_path))
    script = JudgeScript()
    with judge_server(script) as server:
        args = ["judge", str(run), "--judge", "openai-compatible:m", "--judge-base-url", server.url]
        code, out = voxbench(monkeypatch, capsys, *args, "--only-turns", "0-2")
        assert code == 0, out
        assert "LLM judge: 3 turns, 0 from cache, 3 calls, 0 failed" in out
        code, out = voxbench(monkeypatch, capsys, *args, "--only-turns", "0-2")
        assert "3 from cache, 0 calls" in out
        assert len(server.requests) == 3
    shown = load_or_evaluate(run)
    card, judgments = shown.card, shown.judgments
    assert {j.judge for j in judgments} == {"deterministic", "openai-compatible/m"}
    assert card.turns == 3 and card.dimension("instruction_following").scored == 3
    code, out = voxbench(monkeypatch, capsys, "show", str(run))
    assert code == 0 and "instruction_following" in out


def test_judge_deterministic_only_ignores_the_judge(monkeypatch, capsys, tmp_path):
    _, _, run = asyncio.run(scripted_run(tmp_path))
    code, out = voxbench(
        monkeypatch,
        capsys,
        "judge",
        str(run),
        "--judge",
        "openai-compatible:m",
        "--deterministic-only",
    )
    assert code == 0, out
    assert "instruction_following" not in out


def test_bad_judge_options_are_messages(monkeypatch, capsys, tmp_path):
    _, _, run = asyncio.run(scripted_run(tmp_path))
    code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--compat", "aiewf")
    assert code == 2 and "--compat" in out and "conversation-bench" in out
    code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--judge", "anthropic:claude-x")
    assert code == 3 and "ANTHROPIC_API_KEY" in out
    code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--judge", "mystery:model")
    assert code == 2 and "openai-compatible" in out


def test_compare_two_runs(monkeypatch, capsys, tmp_path):
    _, _, a = asyncio.run(scripted_run(tmp_path / "a"))
    no_calls = {str(i): Act(calls=[]) for i in range(10)}
    _, _, b = asyncio.run(scripted_run(tmp_path / "b", no_calls))
    out_file = tmp_path / "cmp.json"
    code, out = voxbench(monkeypatch, capsys, "compare", str(a), str(b), "--json", str(out_file))
    assert code == 0, out
    assert "strict per-turn pass" in out and "exact McNemar" in out
    data = json.loads(out_file.read_text())
    tool = next(d for d in data["dimensions"] if d["dimension"] == "tool_use")
    assert (tool["only_a_passed"], tool["only_b_passed"], tool["p_value"]) == (5, 0, 0.0625)


def test_run_with_judge(monkeypatch, capsys, tmp_path):
    with judge_server(JudgeScript()) as server:
        code, out = voxbench(
            monkeypatch,
            capsys,
            "run",
            "smoke",
            "-t",
            "oracle",
            "--runs-dir",
            str(tmp_path),
            "--judge",
            "openai-compatible/m",
            "--judge-base-url",
            server.url,
        )
    assert code == 0, out
    assert "instruction_following" in out and "kb_grounding" in out


def test_judge_refuses_a_run_another_process_is_writing(monkeypatch, capsys, tmp_path):
    _, _, run = asyncio.run(scripted_run(tmp_path))
    with RunDirectory(run).lock("voxbench run --resume"):
        before = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
        code, out = voxbench(monkeypatch, capsys, "judge", str(run))
        after = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
    message = " ".join(out.split())  # the console wraps long lines
    assert code != 0
    assert "another voxbench process is writing this run" in message
    assert f"pid {os.getpid()}" in message and "voxbench run --resume" in message
    assert after == before  # nothing judged, nothing written
    assert not (run / "scorecard.json").exists()


def test_a_run_judged_in_the_old_scorecard_format_is_judged_again_and_shown(
    monkeypatch, capsys, tmp_path
):
    _, _, run = asyncio.run(scripted_run(tmp_path, {"6": Act(calls=[], say="Sure.")}))
    code, _ = voxbench(monkeypatch, capsys, "judge", str(run))
    assert code == 0
    # What voxbench wrote before the scorecard was typed: schema 1, checks keyed by string.
    old = json.loads((run / "scorecard.json").read_text())
    old.update(
        schema_version=1,
        checks={"turns": 10, "tool_turn_ids": ["6"], "turn_taking": "not analysed"},
        counts={"turns": 10, "ok": 10},
        latency={"ttfb": {"p50": 0.1, "count": 10}},
    )
    old.pop("llm_judge", None)
    old.pop("judge_status", None)
    (run / "scorecard.json").write_text(json.dumps(old))
    code, out = voxbench(monkeypatch, capsys, "show", str(run))
    assert code == 0, out
    assert "strict per-turn pass" in out and "end state" in out
    card = json.loads((run / "scorecard.json").read_text())
    assert card["schema_version"] == 2
    assert card["checks"]["end_state"]["explained_by"] == ["turn 6 tool_use"]
