"""Local copies of Hub datasets: ``dataset_dirs`` / ``--dataset-dir`` read instead of the Hub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxbench.core.errors import ConfigError
from voxbench.tasks.datasets.hf import local_copy_format
from voxbench.tasks.run import run_tasks

from .conftest import run_yaml
from .hub_fixture import write_hub_fixture

datasets = pytest.importorskip("datasets")

HUB_TASK = """\
dataset: {hub: vox-test/speech, config: fr, split: test}
columns: {id: key, reference: sentence, language: null}
language: fr
metrics: [wer]
"""
ROWS = {"key": ["k1", "k2", "k3"], "sentence": ["un deux", "trois quatre", "cinq"]}
ORACLE = "models: [{name: oracle, model: local/oracle}]\ntasks: [speech]\ntasks_dirs: [mytasks]\n"


@pytest.fixture
def hub_task(tmp_path: Path) -> Path:
    """A user registry with the Hub task ``speech`` (family ``hubby``)."""
    (tmp_path / "mytasks" / "hubby").mkdir(parents=True)
    (tmp_path / "mytasks" / "hubby" / "speech.yaml").write_text(HUB_TASK)
    return tmp_path / "mytasks" / "hubby" / "speech.yaml"


def _rows_of(result) -> list[tuple[str, str, str]]:
    return sorted((r["id"], r["reference"], r["prediction"]) for r in result.run.rows())


def test_save_to_disk_copy_runs_with_the_oracle_and_run_json_records_it(
    tmp_path: Path, hub_task: Path
) -> None:
    write_hub_fixture(tmp_path / "copies" / "speech", ROWS)
    result = run_yaml(ORACLE + "dataset_dirs: {speech: copies/speech}\n", tmp_path)
    assert _rows_of(result) == [
        ("k1", "un deux", "un deux"),
        ("k2", "trois quatre", "trois quatre"),
        ("k3", "cinq", "cinq"),
    ]
    assert result.scores["tasks"]["speech"]["oracle"]["metrics"]["wer"]["value"] == 0.0
    info = result.run.info()
    task = info["tasks"]["speech"]
    copy = (tmp_path / "copies" / "speech").resolve()
    assert task["local_copy"] == {"path": str(copy), "format": "hf_disk"}
    assert task["fingerprint"].startswith("datasets:") and task["records"] == 3
    assert task["dataset"] == {"hub": "vox-test/speech", "config": "fr", "split": "test",
                               "manifest": "manifest.jsonl", "format": "manifest"}  # fmt: skip
    assert info["dataset_dirs"] == {"speech": str(copy)}
    assert result.run.rows()[0]["audio"].startswith(str(copy))


def test_the_task_config_and_split_pick_from_a_copy_of_several(
    tmp_path: Path, hub_task: Path
) -> None:
    copy = tmp_path / "copies" / "all"
    write_hub_fixture(copy, {"key": ["e1"], "sentence": ["one"]}, config="en")
    write_hub_fixture(copy, ROWS, config="fr")
    result = run_yaml(ORACLE + "dataset_dirs: {speech: copies/all}\n", tmp_path)
    assert [r[0] for r in _rows_of(result)] == ["k1", "k2", "k3"]
    # A copy holding other configs only: the error names those it has.
    write_hub_fixture(tmp_path / "others", ROWS, config="de")
    with pytest.raises(ConfigError, match="holds save_to_disk copies of de, not of config fr"):
        run_yaml(ORACLE + "dataset_dirs: {speech: others}\n", tmp_path)
    # A copy holding another split only: the error names the splits it has.
    write_hub_fixture(tmp_path / "dev_only", ROWS, split="validation")
    with pytest.raises(ConfigError, match="holds the splits validation"):
        run_yaml(ORACLE + "dataset_dirs: {speech: dev_only}\n", tmp_path)


def test_hub_parquet_layout_with_configs_and_splits(tmp_path: Path, hub_task: Path) -> None:
    copy = tmp_path / "parquet_copy"
    write_hub_fixture(tmp_path / "staging", ROWS)
    table = datasets.load_from_disk(str(tmp_path / "staging"))["test"]
    (copy / "fr").mkdir(parents=True)
    (copy / "en").mkdir()
    table.to_parquet(str(copy / "fr" / "test-00000-of-00001.parquet"))
    table.select([0]).to_parquet(str(copy / "fr" / "train-00000-of-00001.parquet"))
    table.select([1]).to_parquet(str(copy / "en" / "test-00000-of-00001.parquet"))
    assert local_copy_format(copy, "fr") == "parquet"
    result = run_yaml(ORACLE + "dataset_dirs: {speech: parquet_copy}\n", tmp_path)
    assert [r[0] for r in _rows_of(result)] == ["k1", "k2", "k3"]
    assert result.run.info()["tasks"]["speech"]["local_copy"]["format"] == "parquet"
    # The converted layout: <config>/<split>/0000.parquet.
    converted = tmp_path / "converted"
    (converted / "fr" / "test").mkdir(parents=True)
    table.select([2]).to_parquet(str(converted / "fr" / "test" / "0000.parquet"))
    result = run_yaml(ORACLE + "dataset_dirs: {speech: converted}\noutput_dir: other\n", tmp_path)
    assert [r[0] for r in _rows_of(result)] == ["k3"]


def test_bad_dataset_dirs_are_clear_errors(tmp_path: Path, hub_task: Path) -> None:
    write_hub_fixture(tmp_path / "copy", ROWS)
    with pytest.raises(ConfigError) as caught:
        run_yaml(ORACLE + "dataset_dirs: {speach: copy}\n", tmp_path)
    assert "unknown task 'speach'" in str(caught.value)
    assert caught.value.field == "dataset_dirs.speach"
    with pytest.raises(ConfigError) as caught:
        run_yaml(ORACLE + "dataset_dirs: {speech: nowhere}\n", tmp_path)
    assert str((tmp_path / "nowhere").resolve()) in str(caught.value)
    assert "does not exist" in str(caught.value)
    with pytest.raises(ConfigError, match="does not read a Hub dataset"):
        run_yaml(ORACLE + "dataset_dirs: {builtin_en_asr: copy}\n", tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="neither a save_to_disk folder"):
        run_yaml(ORACLE + "dataset_dirs: {speech: empty}\n", tmp_path)


def test_a_wrong_column_names_the_column_and_the_task_file(tmp_path: Path, hub_task: Path) -> None:
    write_hub_fixture(tmp_path / "copy", ROWS)
    hub_task.write_text(HUB_TASK.replace("reference: sentence", "reference: transcript"))
    with pytest.raises(ConfigError) as caught:
        run_yaml(ORACLE + "dataset_dirs: {speech: copy}\n", tmp_path)
    message = str(caught.value)
    assert "transcript (columns.reference)" in message and str(hub_task) in message
    assert "key, sentence" in message  # the columns it does have
    hub_task.write_text(HUB_TASK.replace("columns: {", "columns: {audio: clip, "))
    with pytest.raises(ConfigError) as caught:
        run_yaml(ORACLE + "dataset_dirs: {speech: copy}\n", tmp_path)
    assert "no column 'clip'" in str(caught.value) and str(hub_task) in str(caught.value)


def test_resume_reads_the_same_copy(tmp_path: Path, hub_task: Path, monkeypatch) -> None:
    write_hub_fixture(tmp_path / "copy", ROWS)
    first = run_yaml(ORACLE, tmp_path, dataset_dirs={"speech": tmp_path / "copy"})
    monkeypatch.chdir(tmp_path)  # the run's own record of the copy is absolute
    again = run_tasks(None, "", resume=first.run.path)
    assert again.requests == 0
    assert again.plan.local_copies == {"speech": (tmp_path / "copy").resolve()}


def test_cli_dataset_dir(monkeypatch, capsys, tmp_path: Path, hub_task: Path) -> None:
    from tests.cli.test_cli import voxbench

    write_hub_fixture(tmp_path / "copy", ROWS)
    (tmp_path / "eval.yaml").write_text(ORACLE)
    monkeypatch.chdir(tmp_path)
    code, out = voxbench(
        monkeypatch, capsys, "tasks", "run", "eval.yaml", "--dataset-dir", "speech=copy"
    )
    assert code == 0, out
    (run,) = (tmp_path / "runs" / "tasks").glob("*/run.json")
    info = json.loads(run.read_text())
    assert info["tasks"]["speech"]["local_copy"]["path"] == str((tmp_path / "copy").resolve())
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml", "--dataset-dir", "copy")
    assert code == 2 and "not TASK=DIR" in out
    code, out = voxbench(
        monkeypatch, capsys, "tasks", "run", "eval.yaml", "--dataset-dir", "nope=copy"
    )
    assert code == 2 and "unknown task 'nope'" in out


def test_a_dataset_without_ids_numbers_its_rows(tmp_path: Path, hub_task: Path) -> None:
    """Hub mirrors such as AudioBench's (``context``, ``instruction``, ``answer``) have no id
    column: ``columns.id: null`` makes the row's position its id."""
    hub_task.write_text(
        "dataset: {hub: vox-test/mirror, split: test}\n"
        "columns: {id: null, audio: context, reference: answer, language: null}\n"
        "metrics: [wer]\n"
    )
    rows = {"instruction": ["Transcribe."] * 2, "answer": ["one two", "three"]}
    write_hub_fixture(tmp_path / "mirror", rows, audio_column="context")
    result = run_yaml(ORACLE + "dataset_dirs: {speech: mirror}\n", tmp_path)
    assert _rows_of(result) == [("0", "one two", "one two"), ("1", "three", "three")]
