"""Issue 32 item 9: inputs that used to end in a traceback (or break every command).

A non-UTF-8 ``.env`` is one error naming it; a recursive YAML anchor (``x: &a [*a]``) in an
eval config or a matrix plan is refused naming the file and where, not a RecursionError.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import voxbench
from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import parse_yaml


@pytest.mark.parametrize(
    ("text", "where"), [("x: &a [*a]\n", "x[0]"), ("m: &m {k: *m}\n", "m.k"), ("&r [*r]\n", "[0]")]
)
def test_a_recursive_alias_is_refused(text: str, where: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_yaml(text, source="eval.yaml")
    assert "eval.yaml" in str(err.value) and where in str(err.value)


def test_a_reused_anchor_is_fine() -> None:
    data = parse_yaml("a: &x {b: 1}\nc: *x\nd: [*x, *x]\n", source="f.yaml")
    assert data["c"] == data["d"][1] == {"b": 1}


def test_tasks_run_and_matrix_refuse_a_recursive_anchor(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    Path("eval.yaml").write_text("models: &a [*a]\ntasks: [builtin_en_asr]\n")
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml")
    assert code == 2 and "eval.yaml" in out and "Traceback" not in out, out
    Path("plan.yaml").write_text("targets: &t [*t]\nbenchmarks: [smoke]\n")
    code, out = voxbench(monkeypatch, capsys, "matrix", "plan.yaml")
    assert code == 2 and "plan.yaml" in out and "Traceback" not in out, out


def test_a_non_utf8_env_file_is_named(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    Path(".env").write_bytes(b"SOME_KEY=abc\n# caf\xe9\n")
    code, out = voxbench(monkeypatch, capsys, "list", "benchmarks")
    assert code == 2, out
    assert ".env" in out and "UTF-8" in out and "Traceback" not in out


@pytest.mark.parametrize(
    "command",
    [("show",), ("judge",), ("analyze",), ("run", "--resume")],
    ids=["show", "judge", "analyze", "run-resume"],
)
def test_a_conversation_command_on_a_task_run_says_which_command(
    monkeypatch, capsys, tmp_path, command
) -> None:
    run = tmp_path / "runs" / "tasks" / "20261127T000000Z_abcdef"
    run.mkdir(parents=True)
    (run / "run.json").write_text(
        '{"schema": "voxbench.tasks/1", "id": "20261127T000000Z_abcdef", '
        '"started": "2026-11-27T00:00:00+00:00", "status": "finished"}'
    )
    (run / "records.jsonl").write_text("")
    code, out = voxbench(monkeypatch, capsys, *command, str(run))
    assert code == 2, out
    assert "audio-task run" in out and "voxbench tasks show" in out
    assert "validation error" not in out and len(out.splitlines()) < 6


@pytest.mark.parametrize(
    "command", [("tasks", "show"), ("tasks", "run", "--resume")], ids=["show", "resume"]
)
def test_a_task_command_on_a_conversation_run_says_which_command(
    monkeypatch, capsys, tmp_path, command
) -> None:
    import shutil

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "schema1_smoke_oracle"
    run = Path(shutil.copytree(fixture, tmp_path / "runs" / "smoke" / fixture.name))
    code, out = voxbench(monkeypatch, capsys, *command, str(run))
    assert code == 2, out
    assert "conversation run" in out and "voxbench show" in out and "Traceback" not in out
