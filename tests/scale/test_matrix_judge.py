"""``judge:`` in a matrix plan: the conversation runs judged by an LLM (the fake judge server),
reused runs judged without being run again, and the key checked strictly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.judging.scripted import JudgeScript
from tests.judging.test_cli_judge import judge_server
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import RunDirectory
from voxbench.scale.executors import LocalExecutor
from voxbench.scale.matrix import load_plan, plan_groups, run_matrix

PLAN = """\
targets: [local/oracle]
benchmarks: [smoke]
runs_dir: out
"""


def _plan(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _judges(plan_path: Path) -> set[str]:
    plan = load_plan(plan_path)
    (group,) = plan_groups(plan)
    (run,) = group.group.runs
    return {j.judge for j in RunDirectory(group.path / run).judgments() or []}


def test_a_plans_llm_judge_judges_its_runs_and_reuses_them(tmp_path: Path) -> None:
    plain = _plan(tmp_path, PLAN)
    first = run_matrix(load_plan(plain), LocalExecutor())
    assert first.cells["ran"] == 1 and first.judge is None
    assert _judges(plain) == {"deterministic"}
    with judge_server(JudgeScript()) as server:
        judged = _plan(
            tmp_path, PLAN + f"judge: {{model: 'openai-compatible:m', base_url: '{server.url}'}}\n"
        )
        # The run is done: it is judged by the LLM, not run again.
        board = run_matrix(load_plan(judged), LocalExecutor())
        assert board.cells == {"ran": 0, "resumed": 0, "reused": 1, "error": 0}
        assert board.judge == "openai-compatible/m"
        asked = len(server.requests)
        assert asked > 0
        assert _judges(judged) == {"deterministic", "openai-compatible/m"}
        # Judged by this judge already: nothing is asked again.
        again = run_matrix(load_plan(judged), LocalExecutor())
        assert again.cells["reused"] == 1 and len(server.requests) == asked
    assert board.rows[0].strict_mean == again.rows[0].strict_mean


def test_the_judge_key_is_strict(tmp_path: Path) -> None:
    bad = _plan(tmp_path, PLAN + "judge: {model: 'openai-compatible:m', url: 'http://x'}\n")
    with pytest.raises(ConfigError, match="judge.url: unknown key"):
        load_plan(bad)
    bad = _plan(tmp_path, PLAN + "judge: {model: 'nosuch:m'}\n")
    with pytest.raises(ConfigError) as err:
        load_plan(bad)
    assert "plan.yaml" in str(err.value) and "judge.model" in str(err.value)
    assert "nosuch" in str(err.value)
    missing_url = load_plan(_plan(tmp_path, PLAN + "judge: {model: 'openai-compatible:m'}\n"))
    with pytest.raises(ConfigError, match="--judge-base-url"):
        run_matrix(missing_url, LocalExecutor())
