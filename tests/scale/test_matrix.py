"""``voxbench matrix``: the plan's schema, resume by content, limits, the leaderboard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from tests.scale.counting_agent import CountingAgent
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import RunDirectory
from voxbench.runner.launch import run_conversation
from voxbench.scale.executors import LocalExecutor
from voxbench.scale.matrix import load_plan, plan_groups, run_matrix


def _plan(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


PLAN = """\
targets:
  - local/oracle
  - {name: baseline, target: local/baseline}
benchmarks: [smoke]
repeats: 2
runs_dir: out
"""


def test_unknown_keys_are_errors_naming_file_and_key_path(tmp_path):
    bad = _plan(tmp_path, "targets: [{target: local/oracle, optoins: {}}]\nbenchmarks: [smoke]\n")
    with pytest.raises(ConfigError) as err:
        load_plan(bad)
    assert "plan.yaml" in str(err.value) and "targets[0].optoins: unknown key" in str(err.value)
    assert "options" in str(err.value)  # the keys allowed there
    bad = _plan(tmp_path, "targets: [oracle]\nbenchmarks: [smoke]\nrepeat: 3\n")
    with pytest.raises(ConfigError, match="repeat: unknown key"):
        load_plan(bad)
    bad = _plan(tmp_path, "targets: [oracle]\nbenchmarks: [smoke]\nrun: {seed: 4}\n")
    with pytest.raises(ConfigError, match="set by the matrix itself"):
        load_plan(bad)


def test_matrix_resumes_by_content(tmp_path):
    plan = load_plan(_plan(tmp_path, PLAN))
    first = run_matrix(plan, LocalExecutor())
    assert first.cells == {"ran": 4, "resumed": 0, "reused": 0, "error": 0}
    assert [(r.target, r.strict_mean) for r in first.rows] == [
        ("local/oracle", 1.0),
        ("baseline", 0.5),
    ]
    # The same plan again: every run is found by content and reused.
    again = run_matrix(load_plan(_plan(tmp_path, PLAN)), LocalExecutor())
    assert again.cells == {"ran": 0, "resumed": 0, "reused": 4, "error": 0}
    # One more repeat: only the new seed runs.
    more = run_matrix(
        load_plan(_plan(tmp_path, PLAN.replace("repeats: 2", "repeats: 3"))), LocalExecutor()
    )
    assert more.cells == {"ran": 2, "resumed": 0, "reused": 4, "error": 0}
    # A changed target option is another run: a new group, nothing reused.
    changed = PLAN.replace("target: local/baseline}", "target: local/baseline, base_url: x}")
    groups = plan_groups(load_plan(_plan(tmp_path, changed)))
    assert groups[1].path != plan_groups(plan)[1].path
    assert groups[0].path == plan_groups(plan)[0].path
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert board["rows"][0]["target"] == "local/oracle"
    assert (
        "| smoke | text | local/oracle | 100.0% |"
        in (tmp_path / "out" / "leaderboard.md").read_text()
    )


async def _interrupted(config, path: Path, after: int) -> None:
    def stop(done, total, record):
        if done == after:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await run_conversation(config, run_path=path, progress=stop)


def test_interrupted_cell_is_resumed_not_rerun(tmp_path):
    import asyncio

    plan = load_plan(_plan(tmp_path, PLAN.replace("repeats: 2", "repeats: 1")))
    group = plan_groups(plan)[0]
    run = group.path / group.group.runs[0]
    asyncio.run(_interrupted(group.group.config, run, after=4))
    assert RunDirectory(run).info().status == "cancelled"
    board = run_matrix(plan, LocalExecutor())
    assert board.cells == {"ran": 1, "resumed": 1, "reused": 0, "error": 0}
    turns = [r.turn for r in RunDirectory(run).turns()]
    assert len(turns) == len(set(turns)) == 10
    assert board.rows[0].strict_mean == 1.0


def test_per_provider_concurrency_is_held(tmp_path):
    CountingAgent.most = 0
    plan = load_plan(
        _plan(
            tmp_path,
            "targets: [tests.scale.counting_agent:CountingAgent]\nbenchmarks: [smoke]\n"
            "repeats: 6\nmax_concurrency: 6\nproviders: {tests.scale.counting_agent:CountingAgent: "
            "{max_concurrency: 2}}\nruns_dir: out\n",
        )
    )
    board = run_matrix(plan, LocalExecutor())
    assert board.cells["ran"] == 6
    assert CountingAgent.most == 2


def test_matrix_command_prints_the_leaderboard(tmp_path, monkeypatch, capsys):
    plan = _plan(tmp_path, PLAN.replace("repeats: 2", "repeats: 1"))
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan))
    assert code == 0, err
    assert "leaderboard" in out and "local/oracle" in out and "baseline" in out
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan), "--executor", "slurm")
    assert code == 2 and "unknown executor 'slurm'" in err


def test_a_failing_cell_does_not_stop_the_others(tmp_path, monkeypatch, capsys):
    plan = _plan(
        tmp_path,
        "targets: [local/oracle, {target: openai/gpt-4o-mini, base_url: 'http://127.0.0.1:9/v1'}]"
        "\nbenchmarks: [smoke]\nruns_dir: out\nrun: {max_retries: 0}\n",
    )
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan))
    assert code == 3 and "OPENAI_API_KEY" in err  # keys are checked before any run
    assert not (tmp_path / "out" / "leaderboard.json").exists()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unreachable")
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan))
    assert code == 4
    # An unreachable target stops its run after the first turn (the others are not tried).
    assert "could not be reached" in err and "run the same plan again" in err
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert board["cells"] == {"ran": 1, "resumed": 0, "reused": 0, "error": 1}
    oracle, broken = board["rows"]
    assert oracle["strict_mean"] == 1.0 and oracle["finished"] == 1
    assert broken["finished"] == 0 and broken["strict_mean"] is None


def test_fdb_corpora_in_the_matrix_are_driven_scored_and_resumed(tmp_path, monkeypatch, capsys):
    from tests.fullduplex.minicorpus import build_corpus

    build_corpus(tmp_path / "corpus")
    plan = _plan(
        tmp_path,
        "targets:\n  - {name: tone, target: tests.fullduplex.tone_session:ToneSession,"
        " options: {delay: 0.05}}\n"
        "fdb: [{corpus: corpus/v1_0, scoring: voxbench}]\nruns_dir: out\n",
    )
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan))
    assert code == 0, out + err
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert board["rows"] == [] and board["fdb"]
    assert {r["target"] for r in board["fdb"]} == {"tone"}
    assert {r["category"] for r in board["fdb"]} == {
        "pause_handling",
        "smooth_turn_taking",
        "user_interruption",
        "backchannel",
    }
    assert "FDB v1_0" in out
    [out_dir] = {Path(r["out_dir"]) for r in board["fdb"]}
    assert len(list(out_dir.rglob("output.wav"))) == 5
    first = {p: p.stat().st_mtime_ns for p in out_dir.rglob("output.wav")}
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan))
    assert code == 0, out + err
    assert {p: p.stat().st_mtime_ns for p in out_dir.rglob("output.wav")} == first  # resumed


def test_task_configs_in_the_matrix_run_once_and_are_reused(tmp_path, monkeypatch, capsys):
    (tmp_path / "eval.yaml").write_text(
        "models: [{name: oracle, model: local/oracle}]\n"
        "tasks: [{name: builtin_en_asr, filters: {num_samples: 2}}]\n",
        encoding="utf-8",
    )
    plan = _plan(tmp_path, "targets: [local/oracle]\ntasks: [eval.yaml]\nruns_dir: out\n")
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan))
    assert code == 0, out + err
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    [row] = board["tasks"]
    assert (row["task"], row["model"], row["action"]) == ("builtin_en_asr", "oracle", "ran")
    assert row["metrics"]["wer"] == 0.0 and row["answered"] == 2
    assert "tasks eval.yaml" in out
    # Each task × model is one line of the printed table, whatever the terminal's width.
    (line,) = [x for x in out.splitlines() if x.startswith("builtin_en_asr")]
    assert line.split()[:5] == ["builtin_en_asr", "oracle", "2", "0", "0.0"]
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan))
    assert code == 0, out + err
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert board["tasks"][0]["action"] == "reused"
    assert len(list((tmp_path / "out" / "tasks").glob("*/*/run.json"))) == 1


def test_perturbations_are_an_axis_of_audio_groups_fdb_and_task_configs(tmp_path):
    # Issue 31: each audio group runs once per spec ("clean": none), each its own condition;
    # text mode hears nothing and runs clean once; clean groups keep the paths they had.
    text = PLAN.replace("repeats: 2", "repeats: 1") + "modes: [text, audio]\n"
    plain = plan_groups(load_plan(_plan(tmp_path, text)))
    axis = text + "perturbations: [clean, 'noise:pink @ 10dB', noise:pink@10dB]\n"
    groups = plan_groups(load_plan(_plan(tmp_path, axis)))
    assert [(g.target, g.mode, g.benchmark, g.perturbations) for g in groups] == [
        ("local/oracle", "text", "smoke", None),
        ("local/oracle", "audio", "smoke", None),
        ("local/oracle", "audio", "smoke (noise:pink@10dB)", "noise:pink@10dB"),
        ("baseline", "text", "smoke", None),
        ("baseline", "audio", "smoke", None),
        ("baseline", "audio", "smoke (noise:pink@10dB)", "noise:pink@10dB"),
    ]
    assert {g.path for g in plain} == {g.path for g in groups if g.perturbations is None}
    noisy = [g for g in groups if g.perturbations]
    assert all(g.group.config.perturb == "noise:pink@10dB" for g in noisy)
    assert all("noise-pink-10dB" in g.path.name for g in noisy)
    from voxbench.scale.matrix import FdbEntry, TargetEntry, fdb_out_dir

    loaded, entry = load_plan(_plan(tmp_path, axis)), FdbEntry(corpus=tmp_path)
    tone = TargetEntry(target="local/oracle")
    assert fdb_out_dir(loaded, tone, entry, None) == fdb_out_dir(loaded, tone, entry)
    assert "noise-pink" in fdb_out_dir(loaded, tone, entry, "noise:pink@10dB").name
    bad = _plan(tmp_path, PLAN + "perturbations: [clean, 'noise:purple@3dB']\n")
    with pytest.raises(ConfigError, match=r"perturbations\[1\]: .*unknown noise 'purple'"):
        load_plan(bad)
    both = _plan(tmp_path, PLAN + "perturbations: [clean]\nrun: {perturb: gain@3dB}\n")
    with pytest.raises(ConfigError, match="not also under run"):
        load_plan(both)


def test_task_configs_run_under_each_perturbation(tmp_path, monkeypatch, capsys):
    (tmp_path / "eval.yaml").write_text(
        "models: [{name: oracle, model: local/oracle}]\n"
        "tasks: [{name: builtin_en_asr, filters: {num_samples: 2}}]\n",
        encoding="utf-8",
    )
    plan = _plan(
        tmp_path,
        "targets: [local/oracle]\ntasks: [eval.yaml]\nruns_dir: out\n"
        "perturbations: [clean, codec:mulaw]\n",
    )
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan))
    assert code == 0, out + err
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert [(r["task"], r["perturbations"]) for r in board["tasks"]] == [
        ("builtin_en_asr", None),
        ("builtin_en_asr (codec:mulaw)", "codec:mulaw"),
    ]
    runs = sorted((tmp_path / "out" / "tasks").glob("*/*/run.json"))
    heard = {json.loads(p.read_text()).get("perturbations") for p in runs}
    assert heard == {None, "codec:mulaw"}
