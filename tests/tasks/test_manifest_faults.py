"""Issue 32 items 3 and 10: a manifest that would give silent wrong numbers is refused.

A ``"text": null`` was scored against the literal word "null"; two records with one id were
both answered but scored as one; a manifest that is not UTF-8 got an error without its name;
a CSV with a byte-order mark was refused; an empty manifest ran and exited 0 with n=0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import voxbench
from voxbench.core.errors import ConfigError
from voxbench.tasks.datasets.readers import read_records
from voxbench.tasks.spec import TaskSpec

from .conftest import write_tiny_dataset


def _spec(folder: Path, manifest: str = "manifest.jsonl") -> TaskSpec:
    return TaskSpec(dataset={"path": str(folder), "manifest": manifest}, metrics=["wer"])


def _rewrite(folder: Path, change) -> Path:
    manifest = folder / "manifest.jsonl"
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    change(rows)
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return manifest


@pytest.mark.parametrize("column", ["reference", "id", "audio"])
def test_a_null_column_is_refused_not_scored_as_the_word_null(tmp_path: Path, column) -> None:
    folder = write_tiny_dataset(tmp_path / "d")
    manifest = _rewrite(folder, lambda rows: rows[1].update({column: None}))
    with pytest.raises(ConfigError) as err:
        list(read_records(_spec(folder)))
    text = str(err.value)
    assert str(manifest) in text and "record 2" in text and f"columns.{column}" in text
    assert "null" in text


@pytest.mark.parametrize("column", ["reference", "id", "audio"])
def test_a_row_without_a_column_is_refused_naming_it(tmp_path: Path, column) -> None:
    folder = write_tiny_dataset(tmp_path / "d")
    manifest = _rewrite(folder, lambda rows: rows[2].pop(column))
    with pytest.raises(ConfigError) as err:
        list(read_records(_spec(folder)))
    text = str(err.value)
    assert str(manifest) in text and "record 3" in text and f"{column} (columns.{column})" in text


def test_duplicate_ids_are_refused_naming_both_records(tmp_path: Path) -> None:
    folder = write_tiny_dataset(tmp_path / "d")
    manifest = _rewrite(folder, lambda rows: rows[3].update({"id": rows[0]["id"]}))
    with pytest.raises(ConfigError) as err:
        list(read_records(_spec(folder)))
    text = str(err.value)
    assert "records 1 and 4" in text and "'a'" in text and str(manifest) in text


def test_a_manifest_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    folder = write_tiny_dataset(tmp_path / "d")
    manifest = folder / "manifest.jsonl"
    manifest.write_bytes(manifest.read_bytes().replace(b"sept", b"s\xe9pt"))
    with pytest.raises(ConfigError) as err:
        list(read_records(_spec(folder)))
    assert str(manifest) in str(err.value) and "UTF-8" in str(err.value)


@pytest.mark.parametrize("manifest", ["manifest.csv", "manifest.jsonl"])
def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path: Path, manifest) -> None:
    folder = write_tiny_dataset(tmp_path / "d", manifest)
    path = folder / manifest
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert [r.id for r in read_records(_spec(folder, manifest))] == ["a", "b", "c", "d", "e", "f"]


@pytest.mark.parametrize(
    ("manifest", "content"), [("manifest.jsonl", ""), ("manifest.csv", "id,audio,reference\n")]
)
def test_an_empty_manifest_is_refused(tmp_path: Path, manifest: str, content: str) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / manifest).write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        list(read_records(_spec(folder, manifest)))
    assert str(folder / manifest) in str(err.value) and "no records" in str(err.value)


EVAL = """\
models:
  - {name: oracle, model: local/oracle}
tasks: [tiny]
tasks_dirs: [mytasks]
output_dir: runs
"""


def test_tasks_run_on_a_null_reference_exits_2_naming_the_manifest(
    monkeypatch, capsys, tmp_path: Path, tasks_dir: Path
) -> None:
    _rewrite(tasks_dir / "mine" / "data", lambda rows: rows[0].update({"reference": None}))
    (tmp_path / "eval.yaml").write_text(EVAL, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml")
    assert code == 2, out
    assert "manifest.jsonl" in out and "null" in out and "Traceback" not in out


def test_a_dataset_with_ids_repeated_across_splits_scores_every_record(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    from tests.tasks.test_hf import _dataset
    from tests.tasks.test_hf import _spec as hf_spec

    (tmp_path / "pq" / "data").mkdir(parents=True)
    _dataset().to_parquet(str(tmp_path / "pq" / "data" / "test-00000-of-00001.parquet"))
    _dataset().select([0]).to_parquet(
        str(tmp_path / "pq" / "data" / "train-00000-of-00001.parquet")
    )
    ids = [r.id for r in read_records(hf_spec(tmp_path / "pq", format="parquet"))]
    assert len(ids) == len(set(ids)) == 4  # each scored on its own (as n=4, not 3)
    assert sorted(ids) == ["x1", "x1#2", "x2", "x3"]
