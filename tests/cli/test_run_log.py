"""Issue 12 item 11: ``run.log`` in every run directory, ``run --verbose``, progress on stderr."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.leaky_agent import ENV_VAR
from tests.cli.test_cli import run_dirs
from tests.cli_invoke import invoke
from voxbench.core.rundir import RunDirectory

ENV_SECRET = "hunter2-correct-horse-battery"  # not key-shaped: only remembering it redacts it
OPTION_SECRET = "opt-secret-value-0042"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO|WARNING|ERROR) voxbench\.")


def _run(monkeypatch, capsys, tmp_path: Path, *extra: str) -> tuple[int, str, str, Path]:
    monkeypatch.setenv(ENV_VAR, ENV_SECRET)
    code, out, err = invoke(
        monkeypatch, capsys, "run", "smoke", "-t", "tests.cli.leaky_agent:LeakyAgent",
        "-o", f"api_key={OPTION_SECRET}", "--only-turns", "0-2",
        "--runs-dir", str(tmp_path), *extra,
    )  # fmt: skip
    (run,) = run_dirs(tmp_path)
    return code, out, err, run


def test_every_run_writes_a_timestamped_run_log_without_secrets(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    code, out, err, run = _run(monkeypatch, capsys, tmp_path)
    assert code == 0, out + err
    log = (run / RunDirectory.LOG).read_text()
    lines = log.splitlines()
    assert all(STAMP.match(line) for line in lines), log
    assert "started" in lines[0] and "benchmark smoke" in lines[0] and "tests.cli" in lines[0]
    assert "api_key': '***'" in lines[0]  # the options, redacted
    assert any("turn 0 (1/3) ok" in line for line in lines)
    assert any("turn 1 (2/3) error" in line for line in lines)  # the failed turn, a warning
    assert any("WARNING" in line and "connecting with key ***" in line for line in lines)
    assert "finished: 3 turn(s) recorded" in lines[-1]
    assert ENV_SECRET not in log and OPTION_SECRET not in log
    # Without --verbose the terminal shows the warnings, not the progress lines.
    assert "connecting with key ***" in err and "turn 0 (1/3) ok" not in err
    assert ENV_SECRET not in out + err and OPTION_SECRET not in out + err


def test_resume_appends_to_the_same_run_log(monkeypatch, capsys, tmp_path: Path) -> None:
    _, _, _, run = _run(monkeypatch, capsys, tmp_path)
    before = (run / RunDirectory.LOG).read_text()
    code, out, err = invoke(monkeypatch, capsys, "run", "--resume", str(run))
    assert code == 0, out + err
    after = (run / RunDirectory.LOG).read_text()
    assert after.startswith(before) and "resumed" in after[len(before) :]


def test_verbose_prints_the_log_and_each_turn_on_stderr(monkeypatch, capsys, tmp_path) -> None:
    code, out, err, run = _run(monkeypatch, capsys, tmp_path, "--verbose")
    assert code == 0, out + err
    assert "INFO turn 0 (1/3) ok" in err and "DEBUG turn 0 user: Hi!" in err
    assert "DEBUG turn 0 agent: my keys are *** and ***" in err
    assert "WARNING turn 1: " in err and "rejected key ***" in err
    assert ENV_SECRET not in out + err and OPTION_SECRET not in out + err
    # stdout carries the scorecard and the run directory, no progress and no log line
    assert "turn 0 (1/3)" not in out and "run directory:" in out
    assert "DEBUG" not in (run / RunDirectory.LOG).read_text()  # run.log keeps INFO and up


def test_runs_side_by_side_each_log_their_own_turns(monkeypatch, capsys, tmp_path) -> None:
    code, out, err = invoke(
        monkeypatch, capsys, "demo", "--benchmark", "smoke", "--mode", "text",
        "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 0, out + err
    runs = run_dirs(tmp_path)
    assert len(runs) == 2
    for run in runs:
        log = (run / RunDirectory.LOG).read_text()
        assert log.count("started") == 1 and str(run) in log
        assert log.count("turn 0 (1/10)") == 1, log


def test_progress_goes_to_stderr(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out, err = invoke(monkeypatch, capsys, "run", "smoke", "-t", "oracle",
                            "--runs-dir", str(tmp_path))  # fmt: skip
    assert code == 0
    assert "oracle" in err and "10/10" in err  # the progress bar
    assert "0:00:0" in err and "0:00:0" not in out and "strict per-turn pass" in out
    (run,) = run_dirs(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "judge", str(run))
    assert code == 0 and "strict per-turn pass" in out and err == ""


def test_tasks_run_keeps_its_progress_off_stdout(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval.yaml").write_text(
        "models: [{name: oracle, model: local/oracle}]\ntasks: [builtin_en_asr]\n"
    )
    code, out, err = invoke(monkeypatch, capsys, "tasks", "run", "eval.yaml")
    assert code == 0, out + err
    assert "builtin_en_asr" in out and "errors ·" not in out and "/s" not in out


async def test_a_retried_turn_is_logged_with_its_reason_and_no_key(
    monkeypatch, tmp_path: Path
) -> None:
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.runner.config import RunConfig
    from voxbench.runner.launch import run_conversation
    from voxbench.testing import FakeOpenAIServer, GoldenScript

    key = "env-key-not-shaped-like-one-42"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    async with FakeOpenAIServer(
        GoldenScript(load_benchmark("smoke")), faults=["server_error@1"]
    ) as server:
        url = server.url.replace("http://", "http://alice:hunter2-pass@")
        path = await run_conversation(
            RunConfig(benchmark="smoke", target="openai/gpt-4o-mini", base_url=url,
                      runs_dir=tmp_path, only_turns="0")
        )  # fmt: skip
    log = (path / RunDirectory.LOG).read_text()
    assert re.search(r"WARNING voxbench\.runner\.conversation: turn 0: attempt 1 failed \(.*\); "
                     r"retry 1 of \d+ in 0\.0 s", log), log  # fmt: skip
    assert "turn 0 (1/1) ok, 1 retries" in log
    assert key not in log and "hunter2-pass" not in log
