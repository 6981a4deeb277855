"""``voxbench judge``, ``voxbench compare`` and ``voxbench run --judge`` as a user runs them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.cli_invoke import invoke
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import EvaluationOptions, evaluate_run, load_or_evaluate
from voxbench.testing import FakeOpenAIServer

from .scripted import FOREVER, Act, JudgeScript, scripted_run


def voxbench(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    code, out, err = invoke(monkeypatch, capsys, *args)
    return code, out + err


@contextmanager
def judge_server(script: JudgeScript, **server_options: Any) -> Iterator[FakeOpenAIServer]:
    """A fake judge on its own loop, for commands that run their own event loop (or another
    process); ``server_options`` as ``FakeOpenAIServer`` takes them (``ttfb_ms``)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = FakeOpenAIServer(script, **server_options)
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
    with judge_server(JudgeScript()) as server:
        code, out = voxbench(
            monkeypatch,
            capsys,
            "judge",
            str(run),
            "--compat",
            "conversation-bench",
            "--judge",
            "openai-compatible:m",
            "--judge-base-url",
            server.url,
        )
    assert code == 0, out
    assert "conversation-bench compat: turn_taking" not in out  # a text run: not analysed
    assert "tool_use_correct 9/10" in out and "instruction_following 10/10" in out
    for name in ("judged.jsonl", "scorecard.json", "report.md", "compat_conversation_bench.json"):
        assert (run / name).is_file(), name
    card = json.loads((run / "scorecard.json").read_text())
    assert card["checks"]["end_state"]["explained_by"] == ["turn 6 tool_use"]
    assert card["scoring_rules"] == "conversation-bench" and card["strict_pass_note"] is None
    assert "### Turn 6" in (run / "report.md").read_text()


def test_compat_without_an_llm_judge_is_refused_and_writes_nothing(monkeypatch, capsys, tmp_path):
    _, _, run = asyncio.run(scripted_run(tmp_path))
    for extra in ([], ["--judge", "openai-compatible:m", "--deterministic-only"]):
        code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--compat", "aiewf", *extra)
        assert code == 2, out
        assert "--compat" in out and "needs an LLM judge" in out and "not comparable" in out
        assert not (run / "compat_aiewf.json").exists()
        assert not (run / "scorecard.json").exists()
    # Without --compat the code-only scorecard says what its strict pass rests on.
    code, out = voxbench(monkeypatch, capsys, "judge", str(run))
    assert code == 0 and "not comparable" in out and "not judged" in out


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
    # No rate for it: it is listed as not judged instead.
    assert not re.search(r"instruction_following\s+│\s+\d", out)
    assert re.search(r"not judged\s+│\s+instruction_following", out)


def test_bad_judge_options_are_messages(monkeypatch, capsys, tmp_path):
    _, _, run = asyncio.run(scripted_run(tmp_path))
    code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--compat", "mystery-bench")
    assert code == 2 and "--compat" in out and "aiewf, conversation-bench" in out
    code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--judge", "anthropic:claude-x")
    assert code == 3 and "ANTHROPIC_API_KEY" in out
    code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--judge", "mystery:model")
    assert code == 2 and "openai-compatible" in out


def test_compare_two_runs(monkeypatch, capsys, tmp_path):
    _, _, a = asyncio.run(scripted_run(tmp_path / "a"))
    no_calls = {str(i): Act(calls=[]) for i in range(10)}
    _, _, b = asyncio.run(scripted_run(tmp_path / "b", no_calls))
    out_file = tmp_path / "cmp.json"
    code, out = voxbench(monkeypatch, capsys, "compare", str(a), str(b), "--out", str(out_file))
    assert code == 0, out
    assert "strict per-turn pass" in out and "exact McNemar" in out
    data = json.loads(out_file.read_text())
    tool = next(d for d in data["dimensions"] if d["dimension"] == "tool_use")
    assert (tool["only_a_passed"], tool["only_b_passed"], tool["p_value"]) == (5, 0, 0.0625)
    # --json means what it means everywhere: the document on stdout, alone.
    code, stdout, _ = invoke(monkeypatch, capsys, "compare", str(a), str(b), "--json")
    assert code == 0 and json.loads(stdout) == data


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
    assert card["schema_version"] == 3
    assert card["checks"]["end_state"]["explained_by"] == ["turn 6 tool_use"]
    # A format 2 scorecard (before judged dimensions and absorbed counts) is still read,
    # its absorbed failures taken out of the passes.
    for key in ("judged", "scoring_rules", "strict_pass_covers", "strict_pass_note"):
        card.pop(key)
    for score in [card["strict_pass"], *card["dimensions"]]:
        if score["absorbed_turns"]:
            score["passed"] += len(score["absorbed_turns"])
        score.pop("absorbed")
    card["schema_version"] = 2
    (run / "scorecard.json").write_text(json.dumps(card))
    read = RunDirectory(run).scorecard()
    assert read is not None and read.judged is None
    state = read.dimension("state")
    assert state is not None and state.absorbed == len(state.absorbed_turns) > 0


def test_a_judge_that_never_answers_leaves_turns_undecided_not_failed(
    monkeypatch, capsys, tmp_path
):
    _, _, run = asyncio.run(scripted_run(tmp_path))  # a perfect agent
    script = JudgeScript(raw={str(i): [FOREVER] for i in range(10)})
    with judge_server(script) as server:
        args = ["judge", str(run), "--judge", "openai-compatible:m", "--judge-base-url", server.url]
        _, out = voxbench(monkeypatch, capsys, *args)
        result = evaluate_run(
            run, EvaluationOptions(judge="openai-compatible/m", judge_base_url=server.url)
        )
    text = " ".join(out.split())
    assert "10 undecided" in text and "10 of 10 turns undecided" in text
    # No rate counts the judge's failures against the agent.
    assert re.search(r"(?<!\d)0/10", text) is None and "10/10" in text
    card = json.loads((run / "scorecard.json").read_text())
    following = next(d for d in card["dimensions"] if d["dimension"] == "instruction_following")
    assert (following["scored"], following["undecided"], following["rate"]) == (0, 10, None)
    tool_use = next(d for d in card["dimensions"] if d["dimension"] == "tool_use")
    assert (tool_use["passed"], tool_use["scored"]) == (10, 10)
    assert card["strict_pass"]["failed_turns"] == [] and card["strict_pass"]["undecided"] == 10
    assert card["too_many_undecided"] is True and result.too_many_undecided
    report = (run / "report.md").read_text()
    assert "**Too many undecided turns**: 10 of 10 turns undecided" in report
    assert "10 undecided: 0, 1, 2" in report


def test_a_few_undecided_turns_are_counted_but_not_too_many(tmp_path):
    _, _, run = asyncio.run(scripted_run(tmp_path))
    with judge_server(JudgeScript(raw={"3": [FOREVER]})) as server:
        options = EvaluationOptions(judge="openai-compatible/m", judge_base_url=server.url)
        result = evaluate_run(run, options)
    card = result.card
    assert card.undecided_turns == ["3"] and not result.too_many_undecided
    assert result.undecided_summary == (
        "1 of 10 turns undecided (10%): a judge could not decide them; "
        "they are left out of the rates"
    )
    kb = card.dimension("kb_grounding")
    assert kb is not None and (kb.passed, kb.scored, kb.undecided) == (9, 9, 1)
    assert (card.strict_pass.passed, card.strict_pass.scored) == (9, 9)
    with pytest.raises(ConfigError, match="max_undecided_share"):
        evaluate_run(run, EvaluationOptions(max_undecided_share=20))


def test_judging_some_turns_again_keeps_the_other_turns_judgments(monkeypatch, capsys, tmp_path):
    _, _, run = asyncio.run(scripted_run(tmp_path, {"6": Act(calls=[], say="Sure.")}))
    script = JudgeScript()
    with judge_server(script) as server:
        args = ["judge", str(run), "--judge", "openai-compatible:m", "--judge-base-url", server.url]
        code, out = voxbench(monkeypatch, capsys, *args)
        assert code == 0, out
        before = RunDirectory(run).judgments()
        script.verdicts["2"] = {"instruction_following": (False, "other")}
        code, out = voxbench(monkeypatch, capsys, *args, "--only-turns", "2,6", "--no-cache")
        assert code == 0, out
    after = RunDirectory(run).judgments()
    assert before is not None and after is not None
    untouched = [j for j in before if j.turn not in ("2", "6")]
    assert [j for j in after if j.turn not in ("2", "6")] == untouched
    assert {j.turn for j in after} == {str(i) for i in range(10)}
    assert [j.turn for j in after] == sorted((j.turn for j in after), key=int)
    following = next(j for j in after if (j.turn, j.dimension) == ("2", "instruction_following"))
    assert following.passed is False  # the re-judged turn's new verdict replaced the old one
    card = json.loads((run / "scorecard.json").read_text())
    assert card["turns"] == 10
    dims = {d["dimension"]: d for d in card["dimensions"]}
    assert dims["instruction_following"]["scored"] == 10
    assert dims["instruction_following"]["failed_turns"] == ["2"]
    assert dims["tool_use"]["failed_turns"] == ["6"]
    assert any(label.startswith("openai-compatible/m@") for label in card["judges"])
    assert "### Turn 2" in (run / "report.md").read_text()


def test_judging_turns_the_run_does_not_have_is_an_error_that_changes_nothing(
    monkeypatch, capsys, tmp_path
):
    _, _, run = asyncio.run(scripted_run(tmp_path))
    code, out = voxbench(monkeypatch, capsys, "judge", str(run))
    assert code == 0, out
    names = ("judged.jsonl", "scorecard.json", "report.md", "analysis.json")
    before = {n: (run / n).read_bytes() for n in names if (run / n).exists()}
    for selection in ("999", "8-12"):
        code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--only-turns", selection)
        message = " ".join(out.split())
        assert code == 2, out
        assert "--only-turns" in message and "0-9" in message
        assert "Traceback" not in out
    _, out = voxbench(monkeypatch, capsys, "judge", str(run), "--only-turns", "999")
    assert "turn(s) 999 are not in this run, which has turns 0-9" in " ".join(out.split())
    after = {n: (run / n).read_bytes() for n in names if (run / n).exists()}
    assert after == before
    assert len(RunDirectory(run).judgments() or []) > 10
