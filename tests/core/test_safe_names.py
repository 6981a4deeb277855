"""Issue 32 item 1: a user-given name that becomes a path is a name, never a path.

A benchmark's ``id``, a task's name, an eval config's model names and a matrix target's
``name`` are validated in one place (``core.names``); ``bench validate`` names the file and
the field, and ``run`` never writes outside the runs directory.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.test_cli import voxbench
from voxbench.benchmarks.loader import BUILTIN_DIR, load_benchmark, validate_benchmark
from voxbench.core.errors import ConfigError
from voxbench.core.names import child_path, name_problem, safe_name
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import new_run_path

HOSTILE = ["/tmp/x/ABS", "../../x", "..\\x", "..", ".", "", "a/b", "C:\\x", "c:x", "a b", "con"]
FINE = ["smoke", "conference", "gpt-4o-t0", "whisper-tiny.en", "a_b+c", "0"]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_path_is_not_a_name(text: str) -> None:
    assert name_problem(text) is not None
    with pytest.raises(ConfigError) as err:
        safe_name(text, field="id", file="benchmark.yaml")
    assert "benchmark.yaml: id:" in str(err.value) and "not a path" in str(err.value)


@pytest.mark.parametrize("text", FINE)
def test_names_pass(text: str) -> None:
    assert safe_name(text) == text


def test_child_path_refuses_what_lands_outside(tmp_path: Path) -> None:
    assert child_path(tmp_path, "smoke", "run") == tmp_path / "smoke" / "run"
    with pytest.raises(ConfigError):
        child_path(tmp_path, "../../x")


def _bench(tmp_path: Path, bench_id: str) -> Path:
    pkg = Path(shutil.copytree(BUILTIN_DIR / "smoke", tmp_path / "bench"))
    header = pkg / "benchmark.yaml"
    text = header.read_text(encoding="utf-8")
    assert text.startswith("id: smoke\n")
    quoted = bench_id.replace("\\", "\\\\")
    header.write_text(f'id: "{quoted}"\n' + text.split("\n", 1)[1], encoding="utf-8")
    return pkg


@pytest.mark.parametrize("bench_id", ["/tmp/x/ABS", "../../x", "..\\x"])
def test_bench_validate_names_file_and_field(tmp_path: Path, bench_id: str) -> None:
    pkg = _bench(tmp_path, bench_id)
    (problem,) = [str(p) for p in validate_benchmark(pkg)]
    assert "benchmark.yaml" in problem and "id" in problem and "not a path" in problem


@pytest.mark.parametrize("bench_id", ["/tmp/x/ABS", "../../x", "..\\x"])
def test_bench_validate_cli_fails(monkeypatch, capsys, tmp_path: Path, bench_id: str) -> None:
    pkg = _bench(tmp_path, bench_id)
    code, out = voxbench(monkeypatch, capsys, "bench", "validate", str(pkg))
    assert code == 2, out
    assert "benchmark.yaml" in out and "not a path" in out


@pytest.mark.parametrize("bench_id", ["ABS_OUT", "../../escaped", "..\\escaped"])
def test_run_never_writes_outside_the_runs_dir(
    monkeypatch, capsys, tmp_path: Path, bench_id: str
) -> None:
    if bench_id == "ABS_OUT":
        bench_id = str(tmp_path / "abs" / "ABS")
    pkg = _bench(tmp_path / "pkg", bench_id)
    runs = tmp_path / "deep" / "er" / "runs"
    monkeypatch.chdir(tmp_path)
    code, out = voxbench(
        monkeypatch, capsys, "run", str(pkg), "-t", "local/oracle", "--runs-dir", str(runs)
    )
    assert code == 2, out
    assert "not a path" in out
    written = {p for p in tmp_path.rglob("*") if p.is_file() and "pkg" not in p.parts}
    assert written == set(), written


def test_the_run_path_is_checked_again_before_writing(tmp_path: Path) -> None:
    benchmark = load_benchmark("smoke")
    forged = benchmark.model_construct(**{**dict(benchmark), "id": "../../x"})
    config = RunConfig(benchmark="smoke", target="local/oracle", runs_dir=tmp_path / "runs")
    with pytest.raises(ConfigError):
        new_run_path(config, forged)


@pytest.mark.parametrize("name", ["/tmp/x/ABS", "../../x", "..\\x"])
def test_a_task_model_name_is_a_name(name: str) -> None:
    from voxbench.tasks.config import parse_config

    quoted = name.replace("\\", "\\\\")
    text = f'models:\n  - {{name: "{quoted}", model: local/oracle}}\ntasks: [builtin_en_asr]\n'
    with pytest.raises(ConfigError) as err:
        parse_config(text, file="eval.yaml")
    assert "eval.yaml" in str(err.value) and "models[0].name" in str(err.value)


@pytest.mark.parametrize("name", ["/tmp/x/ABS", "../../x", "..\\x"])
def test_a_matrix_target_name_is_a_name(tmp_path: Path, name: str) -> None:
    from voxbench.scale.matrix import load_plan

    quoted = name.replace("\\", "\\\\")
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f'targets:\n  - {{name: "{quoted}", target: local/oracle}}\nbenchmarks: [smoke]\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as err:
        load_plan(plan)
    assert "plan.yaml" in str(err.value) and "targets[0]" in str(err.value)


def test_a_task_file_whose_stem_is_not_a_name_is_refused(tmp_path: Path) -> None:
    from voxbench.tasks.spec import TaskRegistry

    folder = tmp_path / "mytasks"
    folder.mkdir()
    (folder / "has space.yaml").write_text("extends: builtin_en_asr\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        TaskRegistry([folder])
    assert "has space.yaml" in str(err.value) and "task name" in str(err.value)


def test_a_benchmark_folder_the_user_linked_elsewhere_is_still_inside(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "smoke").symlink_to(tmp_path / "elsewhere")
    assert child_path(tmp_path / "runs", "smoke", "r1") == tmp_path / "runs" / "smoke" / "r1"
