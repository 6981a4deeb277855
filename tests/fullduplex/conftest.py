"""Fixtures: the generated mini-corpus (inputs, and inputs with scripted outputs), and the
shared FDB example samples."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fullduplex.minicorpus import build_corpus, write_outputs


@pytest.fixture(scope="session")
def _corpus_master(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("fdb_corpus")
    times = build_corpus(root)
    return root, times


@pytest.fixture(scope="session")
def _outputs_master(
    tmp_path_factory: pytest.TempPathFactory, _corpus_master: tuple[Path, dict]
) -> Path:
    root = tmp_path_factory.mktemp("fdb_outputs") / "corpus"
    shutil.copytree(_corpus_master[0], root)
    write_outputs(root, _corpus_master[1])
    return root


@pytest.fixture
def mini_corpus(tmp_path: Path, _corpus_master: tuple[Path, dict]) -> Path:
    """A fresh copy of the mini-corpus (inputs and annotations only)."""
    root = tmp_path / "corpus"
    shutil.copytree(_corpus_master[0], root)
    return root


@pytest.fixture
def corpus_times(_corpus_master: tuple[Path, dict]) -> dict:
    """Key times (seconds) of each mini-corpus sample, by relative path."""
    return _corpus_master[1]


@pytest.fixture
def mini_outputs(tmp_path: Path, _outputs_master: Path) -> Path:
    """A fresh copy of the mini-corpus with a scripted model's output.wav / output.json."""
    root = tmp_path / "outputs"
    shutil.copytree(_outputs_master, root)
    return root


@pytest.fixture
def fdb_examples(shared_dir: Path, tmp_path: Path) -> Path:
    """A writable copy of the public FDB example samples (skips when absent)."""
    src = shared_dir / "data" / "fdb"
    if not src.is_dir():
        pytest.skip("shared FDB example samples are absent")
    dst = tmp_path / "fdb_examples"
    shutil.copytree(src, dst)
    return dst
