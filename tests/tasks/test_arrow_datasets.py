"""Local parquet and ``save_to_disk`` folders read by pyarrow alone give what ``datasets`` gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.tasks.datasets.arrow import arrow_rows, local_fingerprint, open_local
from voxbench.tasks.datasets.hf import dataset_rows, open_dataset

datasets = pytest.importorskip("datasets")

from tests.tasks.test_hf import _dataset  # noqa: E402


def _both(folder: Path, kind: str, split: str | None) -> tuple[list, list]:
    fast = open_local(folder, kind, split)
    assert fast is not None and fast.plain("audio")
    ours = [(row, audio.encoded()) for row, audio in arrow_rows(fast, "audio", str(folder))]
    theirs = [
        (row, audio.encoded())
        for row, audio in dataset_rows(open_dataset(folder, kind, split), "audio", str(folder))
    ]
    return ours, theirs


def test_parquet_rows_and_audio_are_those_datasets_reads(tmp_path: Path) -> None:
    (tmp_path / "pq" / "data").mkdir(parents=True)
    _dataset().to_parquet(str(tmp_path / "pq" / "data" / "test-00000-of-00001.parquet"))
    _dataset().select([2]).to_parquet(str(tmp_path / "pq" / "data" / "train-0.parquet"))
    ours, theirs = _both(tmp_path / "pq", "parquet", None)
    assert len(ours) == 4 and ours == theirs
    assert ours[0][1][0][:4] == b"RIFF"
    first = local_fingerprint(tmp_path / "pq", "parquet", "test")
    assert first.startswith("parquet:") and first != local_fingerprint(
        tmp_path / "pq", "parquet", None
    )


def test_saved_dataset_rows_are_those_datasets_reads(tmp_path: Path) -> None:
    datasets.DatasetDict({"test": _dataset(), "train": _dataset().select([0])}).save_to_disk(
        str(tmp_path / "dd")
    )
    ours, theirs = _both(tmp_path / "dd", "hf_disk", "test")
    assert len(ours) == 3 and ours == theirs
    assert local_fingerprint(tmp_path / "dd", "hf_disk", "test").startswith("hf_disk:")


def test_a_column_pyarrow_reads_otherwise_goes_through_datasets(tmp_path: Path) -> None:
    (tmp_path / "pq").mkdir()
    nested = _dataset().add_column("meta", [{"a": 1}, {"a": 2}, {"a": 3}])
    nested.to_parquet(str(tmp_path / "pq" / "test.parquet"))
    fast = open_local(tmp_path / "pq", "parquet", None)
    assert fast is not None and not fast.plain("audio")


def test_row_groups_read_ahead_and_out_of_order_give_every_clip(tmp_path: Path) -> None:
    """The row group after the one asked for is read ahead in a thread while the engine asks
    for others: every read of the file goes through that one thread (two at once fail)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    clips = [bytes([i]) * (20_000 + i) for i in range(60)]
    table = pa.table({"id": [f"r{i}" for i in range(60)],
                      "audio": [{"bytes": c, "path": None} for c in clips]})  # fmt: skip
    (tmp_path / "pq").mkdir()
    pq.write_table(table, tmp_path / "pq" / "test.parquet", row_group_size=2)
    fast = open_local(tmp_path / "pq", "parquet", None)
    assert fast is not None
    order = [i for step in (0, 1) for i in range(step, 60, 2)][::-1] + list(range(60))
    assert [fast.audio(i, "audio")[0] for i in order] == [clips[i] for i in order]


def test_a_row_group_being_read_can_be_awaited_before_its_audio(tmp_path: Path) -> None:
    """``loading`` hands the engine the read a row's audio needs (None once it is at hand),
    so its loop awaits it rather than blocking on it; the audio is then what it was."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    clips = [bytes([i]) * 1000 for i in range(6)]
    table = pa.table({"audio": [{"bytes": c, "path": None} for c in clips]})
    (tmp_path / "pq").mkdir()
    pq.write_table(table, tmp_path / "pq" / "test.parquet", row_group_size=2)
    fast = open_local(tmp_path / "pq", "parquet", None)
    assert fast is not None
    read = fast.loading(3, "audio")
    assert read is not None and fast.loading(2, "audio") is read  # one read per row group
    read.result()
    assert fast.audio(3, "audio")[0] == clips[3]
    assert fast.loading(2, "audio") is None  # read and kept
    assert [fast.audio(i, "audio")[0] for i in range(6)] == clips


def test_listing_reads_row_groups_together_in_order_across_files_and_cuts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other columns of consecutive row groups are read in one call (at most
    ``LISTED_ROWS`` rows): every row once, in the files' and groups' order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from voxbench.tasks.datasets import arrow

    (tmp_path / "pq" / "data").mkdir(parents=True)
    ids = [f"r{i}" for i in range(23)]
    for name, part in (("test-00000-of-00002", ids[:17]), ("test-00001-of-00002", ids[17:])):
        table = pa.table({"id": part, "audio": [{"bytes": b"x", "path": None} for _ in part]})
        pq.write_table(table, tmp_path / "pq" / "data" / f"{name}.parquet", row_group_size=3)
    fast = open_local(tmp_path / "pq", "parquet", None)
    assert fast is not None and len(fast.parts) == 6 + 2
    for cut in (arrow.LISTED_ROWS, 7, 3, 1):
        monkeypatch.setattr(arrow, "LISTED_ROWS", cut)
        assert [row["id"] for row in fast.rows(without="audio")] == ids


def test_a_null_in_a_later_row_group_is_refused_naming_the_record(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from voxbench.core.errors import ConfigError
    from voxbench.tasks.datasets.readers import read_records
    from voxbench.tasks.spec import TaskSpec

    references: list[str | None] = ["a b"] * 10
    references[7] = None
    table = pa.table({
        "id": [f"r{i}" for i in range(10)],
        "audio": [{"bytes": b"x", "path": None}] * 10,
        "text": references,
    })  # fmt: skip
    (tmp_path / "pq").mkdir()
    pq.write_table(table, tmp_path / "pq" / "test.parquet", row_group_size=4)
    spec = TaskSpec(
        dataset={"path": str(tmp_path / "pq"), "format": "parquet"},
        columns={"reference": "text"},
        metrics=["wer"],
    )
    with pytest.raises(ConfigError, match=r"record 8 of .*: text \(columns.reference\) is empty"):
        list(read_records(spec))
