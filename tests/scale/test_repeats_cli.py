"""``voxbench run --repeats``, and repeat groups in ``show``, ``compare`` and ``run --resume``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_invoke import invoke
from voxbench.scale.repeats import read_group


def _group(tmp_path: Path, target: str) -> Path:
    [path] = [p for p in (tmp_path / "runs" / "smoke").iterdir() if target in p.name]
    return path


def test_run_repeats_writes_a_group_and_prints_one_summary(tmp_path, monkeypatch, capsys):
    code, out, err = invoke(
        monkeypatch, capsys, "run", "smoke", "-t", "local/baseline", "--repeats", "3",
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert code == 0, err
    group = _group(tmp_path, "local-baseline_x3")
    saved = read_group(group)
    group_id = group.name.rsplit("_", 1)[-1]
    assert saved.seeds == [0, 1, 2]
    assert saved.runs == [f"seed-{s}_{group_id}" for s in (0, 1, 2)]
    assert saved.status == "success" and saved.summary is not None
    for name, seed in zip(saved.runs, saved.seeds, strict=True):
        info = json.loads((group / name / "run.json").read_text())
        assert info["seed"] == seed and info["status"] == "success"
    assert "pass@3" in out and "pass^3" in out and "strict per-turn pass" in out
    assert "no turn changed outcome between runs" in out
    # show reads the group and prints the same summary.
    code, shown, err = invoke(monkeypatch, capsys, "show", str(group))
    assert code == 0, err
    assert "pass^3" in shown and "50.0%" in shown


def test_compare_two_groups_uses_runs_as_the_unit(tmp_path, monkeypatch, capsys):
    for target in ("local/baseline", "local/oracle"):
        code, _, err = invoke(
            monkeypatch, capsys, "run", "smoke", "-t", target, "--repeats", "2",
            "--runs-dir", str(tmp_path / "runs"),
        )  # fmt: skip
        assert code == 0, err
    a, b = _group(tmp_path, "baseline"), _group(tmp_path, "oracle")
    out_json = tmp_path / "cmp.json"
    code, out, err = invoke(monkeypatch, capsys, "compare", str(a), str(b), "--out", str(out_json))
    assert code == 0, err
    assert "permutation of run labels" in out
    data = json.loads(out_json.read_text())
    code, printed, err = invoke(monkeypatch, capsys, "compare", str(a), str(b), "--json")
    assert code == 0, err
    assert json.loads(printed) == data
    strict = data["dimensions"][0]
    assert strict["dimension"] == "strict_pass"
    assert strict["difference"] == 0.5 and strict["permutations"] == 6
    assert strict["p_value"] == round(2 / 6, 6)
    # A group and a single run are not comparable.
    code, _, err = invoke(monkeypatch, capsys, "compare", str(a), str(b / read_group(b).runs[0]))
    assert code == 2 and "repeat group" in err


def test_resume_a_group_finishes_only_what_is_missing(tmp_path, monkeypatch, capsys):
    code, _, err = invoke(
        monkeypatch, capsys, "run", "smoke", "-t", "local/oracle", "--repeats", "2",
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert code == 0, err
    group = _group(tmp_path, "oracle")
    import shutil

    shutil.rmtree(group / read_group(group).runs[1])
    code, out, err = invoke(monkeypatch, capsys, "run", "--resume", str(group))
    assert code == 0, err
    assert "seed 0: reused" in err and "seed 1: ran" in err  # progress: on stderr
    assert "pass^2" in out
    assert read_group(group).status == "success"


def test_fail_under_gates_the_mean_and_executor_needs_repeats(tmp_path, monkeypatch, capsys):
    code, out, _ = invoke(
        monkeypatch, capsys, "run", "smoke", "-t", "local/baseline", "--repeats", "2",
        "--runs-dir", str(tmp_path / "runs"), "--fail-under", "strict_pass=0.9",
    )  # fmt: skip
    assert code == 1 and "below --fail-under" in out and "mean 50.0%" in out
    code, _, err = invoke(monkeypatch, capsys, "run", "smoke", "-t", "oracle", "--executor", "ray")
    assert code == 2 and "--repeats" in err


def test_ray_executor_without_ray_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    code, _, err = invoke(
        monkeypatch, capsys, "run", "smoke", "-t", "local/oracle", "--repeats", "2",
        "--executor", "ray", "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert code == 2 and "pip install 'voxbench[ray]'" in err


def test_missing_key_is_said_before_any_run(tmp_path, monkeypatch, capsys):
    code, _, err = invoke(
        monkeypatch, capsys, "run", "smoke", "-t", "openai/gpt-4o-mini", "--repeats", "2",
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert code == 3 and "OPENAI_API_KEY" in err
    assert not list((tmp_path / "runs").rglob("run.json"))


def test_each_run_of_a_group_joins_the_runs_directorys_store(tmp_path, monkeypatch, capsys):
    from voxbench.store.store import open_store

    monkeypatch.delenv("VOXBENCH_STORE")  # the default: the store of the runs directory
    runs = tmp_path / "runs"
    code, _, err = invoke(
        monkeypatch, capsys, "run", "smoke", "-t", "local/oracle", "--repeats", "2",
        "--runs-dir", str(runs),
    )  # fmt: skip
    assert code == 0, err
    group = _group(tmp_path, "oracle")
    assert (runs / "voxbench.db").is_file() and not (runs / "smoke" / "voxbench.db").exists()
    with open_store(None, runs) as store:
        ids = sorted(r.run_id for r in store.runs())
    assert ids == sorted(read_group(group).runs)
