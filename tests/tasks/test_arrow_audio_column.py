"""``AudioColumn`` reads each row's audio from the Arrow buffers: what ``as_py`` gives."""

from __future__ import annotations

from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from voxbench.tasks.datasets.arrow import AudioColumn, open_parquet  # noqa: E402


def _as_py(values: pa.ChunkedArray, i: int) -> tuple[bytes | None, str | None]:
    """The row as the plain reading gives it (``ArrowDataset.audio``'s contract)."""
    value = values[i].as_py()
    if value is None:
        return None, None
    if isinstance(value, str):
        return None, value
    return value.get("bytes"), value.get("path")


ROWS = [
    {"bytes": b"RIFF-one", "path": "a.wav"},
    None,  # a null struct
    {"bytes": None, "path": "only/a/path.flac"},
    {"bytes": b"", "path": None},  # empty bytes are not null
    {"bytes": bytes(range(256)) * 40, "path": "long.wav"},
    {"bytes": b"\x00tail", "path": ""},
]


@pytest.mark.parametrize(
    "kind",
    [
        pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
        pa.struct([("bytes", pa.large_binary()), ("path", pa.large_string())]),
        pa.struct([("path", pa.string()), ("bytes", pa.binary())]),  # fields in another order
    ],
)
def test_struct_rows_are_what_as_py_gives(kind: pa.DataType) -> None:
    chunks = [pa.array(ROWS[:2], type=kind), pa.array(ROWS[2:], type=kind)]
    values = pa.chunked_array(chunks)
    expected = [_as_py(values, i) for i in range(len(ROWS))]
    for eager in (False, True):
        column = AudioColumn(values, eager=eager)
        assert [column.row(i) for i in range(len(ROWS))] == expected


def test_sliced_arrays_keep_their_offsets() -> None:
    whole = pa.array(ROWS * 3, type=pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    values = pa.chunked_array([whole.slice(4, 9), whole.slice(1, 3)])
    column = AudioColumn(values)
    assert [column.row(i) for i in range(12)] == [_as_py(values, i) for i in range(12)]


def test_a_struct_of_bytes_alone_or_paths_alone() -> None:
    clips = pa.chunked_array([pa.array([{"bytes": b"x"}, {"bytes": None}, None])])
    assert [AudioColumn(clips).row(i) for i in range(3)] == [(b"x", None), (None, None)] + [
        (None, None)
    ]
    paths = pa.chunked_array([pa.array(["a.wav", None, "c.wav"])])
    assert [AudioColumn(paths).row(i) for i in range(3)] == [_as_py(paths, i) for i in range(3)]


def test_parquet_row_groups_read_through_it(tmp_path: Path) -> None:
    kind = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table({"audio": pa.array(ROWS * 5, type=kind), "id": list(range(30))})
    pq.write_table(table, tmp_path / "clips.parquet", row_group_size=7)
    dataset = open_parquet([tmp_path / "clips.parquet"])
    expected = [_as_py(table.column("audio"), i) for i in range(30)]
    assert [dataset.audio(i, "audio") for i in range(30)] == expected
    assert [dataset.audio(i, "audio") for i in reversed(range(30))] == expected[::-1]
