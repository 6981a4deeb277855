"""Issue 11: every user mistake on the command line is one message and the right exit code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.test_cli import run_dirs, voxbench
from voxbench.benchmarks.loader import BUILTIN_DIR

USER_ERROR = 2


def assert_user_error(code: int, out: str, *words: str) -> None:
    assert code == USER_ERROR, out
    assert "Traceback" not in out, out
    for word in words:
        assert word in out, out


# -- defect 5: tracebacks on user mistakes --------------------------------------------------


@pytest.mark.parametrize("what", ["foo", "pipeline"])
def test_list_of_an_unknown_kind_is_a_usage_error(monkeypatch, capsys, what: str) -> None:
    code, out = voxbench(monkeypatch, capsys, "list", what)
    assert_user_error(code, out, f"No such command '{what}'")


def test_a_config_file_that_is_not_utf8_is_named(monkeypatch, capsys, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_bytes(b"benchmark: smoke\ntarget: \xff\xfe oracle\n")
    code, out = voxbench(monkeypatch, capsys, "run", "--config", str(config))
    assert_user_error(code, out, "run.yaml", "not UTF-8")


def test_a_benchmark_yaml_that_is_not_utf8_is_named(monkeypatch, capsys, tmp_path: Path) -> None:
    bench = Path(shutil.copytree(BUILTIN_DIR / "smoke", tmp_path / "bench"))
    (bench / "benchmark.yaml").write_bytes(b"id: smoke\ndescription: caf\xe9\n")
    code, out = voxbench(monkeypatch, capsys, "bench", "validate", str(bench))
    assert code != 0 and "Traceback" not in out and "benchmark.yaml" in out and "UTF-8" in out
    code, out = voxbench(
        monkeypatch, capsys, "run", str(bench), "-t", "oracle", "--runs-dir", str(tmp_path / "r")
    )
    assert_user_error(code, out, "benchmark.yaml", "UTF-8")


@pytest.mark.parametrize("runs_dir", ["/proc/nope", "a_file"])
def test_a_runs_dir_that_cannot_be_a_directory_is_refused(
    monkeypatch, capsys, tmp_path: Path, runs_dir: str
) -> None:
    (tmp_path / "a_file").write_text("not a directory")
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--runs-dir", runs_dir
    )
    assert_user_error(code, out, runs_dir, "runs_dir")


# -- defect 15a: version and unknown options -------------------------------------------------


def test_dash_capital_v_prints_the_version(monkeypatch, capsys) -> None:
    from voxbench import __version__

    code, out = voxbench(monkeypatch, capsys, "-V")
    assert code == 0 and f"voxbench {__version__}" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--bogus"], "No such option: --bogus"), (["version"], "No such command 'version'")],
)
def test_unknown_options_and_commands_are_usage_errors(
    monkeypatch, capsys, args: list[str], message: str
) -> None:
    code, out = voxbench(monkeypatch, capsys, *args)
    assert_user_error(code, out, message)


@pytest.mark.parametrize(
    "args", [[], ["list"], ["bench"], ["fdb"]], ids=["root", "list", "bench", "fdb"]
)
def test_a_command_group_without_a_command_prints_its_help(monkeypatch, capsys, args) -> None:
    code, out = voxbench(monkeypatch, capsys, *args)
    assert_user_error(code, out, "Usage:", "Commands")


# -- defect 15b: run without a target ---------------------------------------------------------


def test_run_without_a_target_names_the_target_option(monkeypatch, capsys, tmp_path) -> None:
    code, out = voxbench(monkeypatch, capsys, "run", "smoke", "--runs-dir", str(tmp_path))
    assert_user_error(code, out, "--target")
    assert run_dirs(tmp_path) == []  # the oracle was not run in its place


def test_a_config_file_may_give_the_target(monkeypatch, capsys, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(f"benchmark: smoke\ntarget: local/oracle\nruns_dir: {tmp_path / 'runs'}\n")
    code, out = voxbench(monkeypatch, capsys, "run", "--config", str(config))
    assert code == 0, out
    config.write_text(f"benchmark: smoke\nruns_dir: {tmp_path / 'runs'}\n")
    code, out = voxbench(monkeypatch, capsys, "run", "--config", str(config))
    assert_user_error(code, out, "run.yaml", "--target")


# -- defect 6: silent acceptance ---------------------------------------------------------------


def test_a_key_given_twice_in_a_config_is_refused_with_its_line(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("benchmark: smoke\nmode: text\ntarget: oracle\nmode: audio\n")
    code, out = voxbench(monkeypatch, capsys, "run", "--config", str(config))
    assert_user_error(code, out, "run.yaml", "mode", "line 4", "line 2")


def test_an_unknown_target_option_is_refused(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "-o", "temprature=0.2",
        "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert_user_error(code, out, "target_options.temprature", "temperature")
    config = tmp_path / "run.yaml"
    config.write_text("benchmark: smoke\ntarget: oracle\ntarget_options:\n  voic: alloy\n")
    code, out = voxbench(monkeypatch, capsys, "run", "--config", str(config))
    assert_user_error(code, out, "run.yaml", "target_options.voic")


def test_a_known_target_option_is_accepted(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "-o", "temperature=0",
        "--only-turns", "0", "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 0, out


@pytest.mark.parametrize(
    ("turns", "words"), [("", ["selects no turn"]), ("999", ["no turn 999", "0-9"])]
)
def test_only_turns_selecting_nothing_or_a_missing_turn_is_one_line_and_no_run(
    monkeypatch, capsys, tmp_path: Path, turns: str, words: list[str]
) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--only-turns", turns,
        "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert_user_error(code, out, "only_turns", *words)
    assert len(out.strip().splitlines()) == 1, out
    assert not any(tmp_path.iterdir())  # no run directory left behind, marked error


# -- defect 9: user text is printed literally ---------------------------------------------------


def test_a_path_with_emoji_codes_and_markup_prints_literally(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    run = tmp_path / "run:100:[red]x"
    run.mkdir()
    code, out = voxbench(monkeypatch, capsys, "show", str(run))
    assert code == USER_ERROR and "Traceback" not in out
    assert "run:100:[red]x" in out.replace("\n", "")
    assert "💯" not in out


def test_a_corrupt_line_100_prints_as_a_line_number_not_an_emoji(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--runs-dir", str(tmp_path)
    )
    (run,) = run_dirs(tmp_path)
    lines = (run / "transcript.jsonl").read_text().splitlines(keepends=True)
    # Blank lines are skipped but counted: the broken line is line 100.
    padded = lines + ["\n"] * (99 - len(lines)) + ["{not json\n"]
    (run / "transcript.jsonl").write_text("".join(padded))
    (run / "scorecard.json").unlink()
    code, out = voxbench(monkeypatch, capsys, "judge", str(run))
    assert_user_error(code, out, "transcript.jsonl:100:")
    assert "💯" not in out


# -- exit 4: the run could not be completed ----------------------------------------------------


def test_a_run_where_every_turn_failed_exits_4(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "tests.cli.broken_agent:BrokenAgent",
        "--only-turns", "0-1", "--runs-dir", str(tmp_path), "--fail-under", "strict_pass=0",
    )  # fmt: skip
    assert code == 4, out
    assert "every turn failed" in out and "Traceback" not in out
    (run,) = run_dirs(tmp_path)
    code, out = voxbench(monkeypatch, capsys, "judge", str(run))
    assert code == 4 and "every turn failed" in out


# -- --fail-under -------------------------------------------------------------------------------


def test_fail_under_exits_1_naming_the_dimension_below_its_rate(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "local/baseline", "--runs-dir", str(tmp_path),
        "--fail-under", "strict_pass=90%",
    )  # fmt: skip
    assert code == 1, out
    assert "strict_pass" in out and "below 90%" in out
    (run,) = run_dirs(tmp_path)
    card = json.loads((run / "scorecard.json").read_text())
    assert card["strict_pass"]["rate"] < 0.9
    code, out = voxbench(monkeypatch, capsys, "judge", str(run), "--fail-under", "strict_pass=0.1")
    assert code == 0, out


def test_fail_under_passes_when_every_rate_is_met(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--runs-dir", str(tmp_path),
        "--fail-under", "strict_pass=1", "--fail-under", "tool_use=100%",
    )  # fmt: skip
    assert code == 0, out
    assert "gates passed" in out


@pytest.mark.parametrize(
    ("gate", "words"),
    [
        ("strict_pass", ["DIM=RATE"]),
        ("strict_pass=1.5", ["bad rate"]),
        ("strict_pass=abc", ["bad rate"]),
        ("nosuch=0.5", ["no dimension 'nosuch'", "strict_pass"]),
    ],
)
def test_a_malformed_fail_under_is_a_user_error(
    monkeypatch, capsys, tmp_path: Path, gate: str, words: list[str]
) -> None:
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--only-turns", "0",
        "--runs-dir", str(tmp_path), "--fail-under", gate,
    )  # fmt: skip
    assert_user_error(code, out, "--fail-under", *words)


def test_a_missing_judge_key_stops_the_run_before_it_starts(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, out = voxbench(
        monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--runs-dir", str(tmp_path),
        "--judge", "anthropic/claude-sonnet-4-5",
    )  # fmt: skip
    assert code == 3, out
    assert "ANTHROPIC_API_KEY" in out
    assert not list(tmp_path.rglob("run.json"))  # nothing ran


def test_ctrl_c_says_the_run_is_kept_and_how_to_resume(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from voxbench.core.rundir import RunDirectory

    tests_root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tests_root), os.environ.get("PYTHONPATH", "")]),
        "COLUMNS": "200",
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "voxbench.cli.main", "run", "smoke", "-t", "tests.cli.slow_agent:SlowAgent", "--runs-dir", str(tmp_path)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        for _ in range(1200):  # polls, not a time limit
            done = list(tmp_path.glob("*/*/transcript.jsonl"))
            if done and done[0].read_text().count("\n") >= 1 or child.poll() is not None:
                break
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, out
    (path,) = run_dirs(tmp_path)
    assert "interrupted" in out and f"voxbench run --resume {path}" in out.replace("\n", " ")
    assert "Traceback" not in out
    assert RunDirectory(path).info().status == "cancelled"
