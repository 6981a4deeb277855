"""The voxbench command, used the way the README tells a new user to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_invoke import invoke


def voxbench(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    code, out, err = invoke(monkeypatch, capsys, *args)
    return code, out + err


def run_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/*/run.json"))


def test_run_oracle_prints_a_perfect_scorecard(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "--target", "oracle", "--runs-dir", str(tmp_path)
    )
    assert code == 0, out
    assert "strict per-turn pass" in out and "10/10 100%" in out
    (run,) = run_dirs(tmp_path)
    card = json.loads((run / "scorecard.json").read_text())
    assert card["strict_pass"]["rate"] == 1.0
    assert (run / "judged.jsonl").is_file()

    code, out = voxbench(monkeypatch, capsys, "show", str(run))
    assert code == 0 and "Lighthouse Lobby" in out and "register_for_session" in out


def test_baseline_scores_less_and_failures_are_listed(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "local/baseline", "--runs-dir", str(tmp_path)
    )
    assert code == 0, out
    (run,) = run_dirs(tmp_path)
    card = json.loads((run / "scorecard.json").read_text())
    assert card["strict_pass"]["rate"] < 1.0
    code, out = voxbench(monkeypatch, capsys, "show", str(run), "--failures")
    assert code == 0 and "did not mention" in out


def test_demo_compares_oracle_and_baseline(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(
        monkeypatch,
        capsys,
        "demo",
        "--benchmark",
        "smoke",
        "--mode",
        "text",
        "--runs-dir",
        str(tmp_path),
    )
    assert code == 0, out
    assert "local/oracle" in out and "local/baseline" in out
    assert len(run_dirs(tmp_path)) == 2


@pytest.mark.slow
def test_audio_demo_records_and_times_both_agents(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "demo", "--benchmark", "smoke", "--runs-dir", str(tmp_path)
    )
    assert code == 0, out
    assert "cascade/local/baseline" in out and "voice_to_voice" in out
    runs = run_dirs(tmp_path)
    assert len(runs) == 2 and all((r / "conversation.wav").is_file() for r in runs)
    oracle = json.loads(
        (next(r for r in runs if "oracle" in r.name) / "scorecard.json").read_text()
    )
    assert oracle["strict_pass"]["rate"] == 1.0


def test_lists(monkeypatch, capsys) -> None:
    code, out = voxbench(monkeypatch, capsys, "list", "benchmarks")
    assert code == 0 and "smoke" in out
    code, out = voxbench(monkeypatch, capsys, "list", "targets")
    assert code == 0 and "local" in out and "oracle" in out
    code, out = voxbench(monkeypatch, capsys, "list", "aliases")
    assert code == 0 and "local/baseline" in out


def test_bench_commands(monkeypatch, capsys) -> None:
    code, out = voxbench(monkeypatch, capsys, "bench", "validate", "smoke")
    assert code == 0 and "valid" in out
    code, out = voxbench(monkeypatch, capsys, "bench", "stats", "smoke")
    assert code == 0 and "10 turns" in out and "tool_use" in out
    code, out = voxbench(monkeypatch, capsys, "bench", "check", "smoke")
    assert code == 0 and "consistent" in out


def test_user_mistakes_are_messages_not_tracebacks(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(monkeypatch, capsys, "run", "nope")
    assert code == 2 and "no benchmark named 'nope'" in out and "Traceback" not in out
    code, out = voxbench(monkeypatch, capsys, "run", "smoke", "--target", "nosuch/model")
    assert code == 2 and "unknown target" in out
    bad = tmp_path / "cfg.yaml"
    bad.write_text("benchmark: smoke\ntarget_name: x\n")
    code, out = voxbench(monkeypatch, capsys, "run", "--config", str(bad))
    assert code == 2 and "cfg.yaml: target_name: unknown key" in out
    code, out = voxbench(monkeypatch, capsys, "show", str(tmp_path))
    assert code == 2 and "not a run directory" in out
    code, out = voxbench(monkeypatch, capsys, "run", "smoke", "--only-turns", "4-2")
    assert code == 2 and "bad turn selection" in out


def test_resume_flag_continues_a_run(monkeypatch, capsys, tmp_path: Path) -> None:
    code, _ = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--runs-dir", str(tmp_path)
    )
    (run,) = run_dirs(tmp_path)
    # Drop the last three turns as if the run had been killed after turn 6.
    lines = (run / "transcript.jsonl").read_text().splitlines(keepends=True)
    (run / "transcript.jsonl").write_text("".join(lines[:7]) + lines[7][:20])
    code, out = voxbench(monkeypatch, capsys, "run", "--resume", str(run))
    assert code == 0, out
    turns = [
        json.loads(line)["turn"] for line in (run / "transcript.jsonl").read_text().splitlines()
    ]
    assert turns == [str(i) for i in range(10)]
    assert "10/10 100%" in out


def test_show_looks_at_a_run_another_process_is_writing(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    from voxbench.core.rundir import RunDirectory

    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--runs-dir", str(tmp_path)
    )
    assert code == 0, out
    (path,) = run_dirs(tmp_path)
    run = RunDirectory(path)
    run.scorecard_file.unlink()  # as if the run were still going: nothing judged yet
    with run.lock("voxbench run"):
        code, out = voxbench(monkeypatch, capsys, "show", str(path))
        assert code == 0, out
        assert "10/10 100%" in out
        assert not run.scorecard_file.exists()  # looked at, never written under another writer
