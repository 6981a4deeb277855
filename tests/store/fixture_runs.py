"""Run directories made by the real runner and judged, shared by the store and viewer tests.

Built once per session (oracle and the no-LLM baseline on ``smoke`` in text mode, and the
oracle on three turns in audio mode), then copied for each test that changes them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from voxbench.evaluation import evaluate_run
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation

FIXTURE_RUNS = {
    "oracle": {"target": "local/oracle"},
    "baseline": {"target": "local/baseline"},
    "oracle_audio": {
        "target": "local/oracle",
        "mode": "audio",
        "heard_asr": "none",
        "only_turns": "0-2",
    },
}


@dataclass
class Runs:
    """A runs directory of judged fixture runs, by name (``FIXTURE_RUNS``)."""

    root: Path
    paths: dict[str, Path]

    def run_id(self, name: str) -> str:
        return self.paths[name].name


def _build(root: Path) -> dict[str, str]:
    out = {}
    previous = os.environ.get("VOXBENCH_STORE")
    os.environ["VOXBENCH_STORE"] = "off"  # the copies are indexed by each test
    try:
        for name, options in FIXTURE_RUNS.items():
            config = RunConfig(benchmark="smoke", runs_dir=root, **options)
            path = asyncio.run(run_conversation(config))
            evaluate_run(path)
            out[name] = str(path.relative_to(root))
    finally:
        if previous is None:
            os.environ.pop("VOXBENCH_STORE", None)
        else:
            os.environ["VOXBENCH_STORE"] = previous
    return out


@pytest.fixture(scope="session")
def built_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("fixture-runs") / "runs"
    return root, _build(root)


@pytest.fixture
def runs(built_runs: tuple[Path, dict[str, str]], tmp_path: Path) -> Runs:
    """A fresh copy of the fixture runs under ``tmp_path/runs``."""
    source, names = built_runs
    root = tmp_path / "runs"
    shutil.copytree(source, root)
    return Runs(root=root, paths={name: root / rel for name, rel in names.items()})
