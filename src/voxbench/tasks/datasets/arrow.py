"""Local Hugging Face datasets read with pyarrow alone: parquet files and ``save_to_disk``
folders (``format: parquet`` / ``hf_disk``).

``datasets`` costs ~1.1 s to import, converts parquet files into its own cache before the
first row, and reads a row at a time through its formatting layer (~0.15 ms a row). Here the
columns other than the audio are read once into Python values, and a row's encoded audio is
read from its parquet row group (the last few kept) or from the memory-mapped Arrow file when
the engine asks for it: nothing is decoded, and a 100-hour dataset is never held in memory.

It reads what ``datasets`` would give for plain columns (strings, numbers, booleans, lists of
them) and an audio column of ``{bytes, path}`` structs or paths; for any other column type
``arrow_rows`` returns None and the caller goes through ``datasets``.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from voxbench.core.errors import ConfigError

ROW_GROUPS_KEPT = 4
"""Parquet row groups of audio kept decoded (records are asked for in dataset order)."""
LISTED_ROWS = 65_536
"""Rows of a parquet file's other columns read in one call when listing (its row groups
together: one call per 256-row group cost twice as much)."""
FOOTER_BYTES = 1 << 20
"""The most of a parquet file's footer hashed into its fingerprint."""


def _plain(kind: pa.DataType) -> bool:
    """A column type pyarrow and ``datasets`` turn into the same Python values."""
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _plain(kind.value_type)
    return (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_null(kind)
    )


@functools.cache
def _reader() -> ThreadPoolExecutor:
    """The one thread reading parquet row groups (ahead of need; pyarrow reads without the
    GIL)."""
    return ThreadPoolExecutor(1, thread_name_prefix="voxbench-parquet")


def _audio_type(kind: pa.DataType) -> bool:
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return True
    return pa.types.is_struct(kind) and {f.name for f in kind} <= {"bytes", "path"}


class AudioColumn:
    """One part's audio column (``{bytes, path}`` structs, or paths), each row read straight
    from its Arrow buffers: ``ChunkedArray[i].as_py()`` builds a scalar and a dict for every
    row (~8 µs at 256 rows of 1.5 s clips); a slice of the data buffer copies the clip and
    nothing else (~2 µs). A chunk is taken apart the first time one of its rows is asked for,
    or at once (``eager``: a parquet row group, read ahead in the reader thread).
    """

    def __init__(self, values: pa.ChunkedArray, *, eager: bool = False) -> None:
        self._chunks = values.chunks
        self._starts = list(itertools.accumulate((len(c) for c in self._chunks), initial=0))
        self._rows: dict[int, Callable[[int], tuple[bytes | None, str | None]]] = {}
        if eager:
            self._rows = {i: _row_reader(chunk) for i, chunk in enumerate(self._chunks)}

    def row(self, index: int) -> tuple[bytes | None, str | None]:
        """Row ``index``'s encoded audio and path (either may be None)."""
        chunk = bisect.bisect_right(self._starts, index) - 1
        read = self._rows.get(chunk)
        if read is None:
            read = self._rows[chunk] = _row_reader(self._chunks[chunk])
        return read(index - self._starts[chunk])


def _row_reader(chunk: pa.Array) -> Callable[[int], tuple[bytes | None, str | None]]:
    """How to read one row of ``chunk``: what ``as_py`` gives, made from the buffers."""
    if pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type):
        paths = chunk.to_pylist()
        return lambda i: (None, paths[i])
    present = _validity(chunk)
    clips = (
        _binary_reader(chunk.field("bytes")) if chunk.type.get_field_index("bytes") >= 0 else None
    )
    names = chunk.field("path").to_pylist() if chunk.type.get_field_index("path") >= 0 else None

    def read(i: int) -> tuple[bytes | None, str | None]:
        if present is not None and not present[i]:
            return None, None
        return (clips(i) if clips else None), (names[i] if names else None)

    return read


def _binary_reader(values: pa.Array) -> Callable[[int], bytes | None]:
    """Row ``i`` of a binary array as bytes (None where null): a copy of its slice of the
    data buffer. Another type (a binary view, say) goes through ``as_py``."""
    kind = values.type
    if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
        return lambda i: values[i].as_py()
    present = _validity(values)
    _, offsets_buffer, data_buffer = values.buffers()
    width = 8 if pa.types.is_large_binary(kind) else 4
    offsets = np.frombuffer(
        offsets_buffer,
        dtype=np.int64 if width == 8 else np.int32,
        count=len(values) + 1,
        offset=values.offset * width,
    )
    data = memoryview(data_buffer) if data_buffer is not None else memoryview(b"")

    def read(i: int) -> bytes | None:
        if present is not None and not present[i]:
            return None
        return bytes(data[offsets[i] : offsets[i + 1]])

    return read


def _validity(values: pa.Array) -> np.ndarray | None:
    """Which rows of ``values`` are not null; None when none is."""
    if values.null_count == 0:
        return None
    return values.is_valid().to_numpy(zero_copy_only=False)


@dataclass
class ArrowDataset:
    """A local dataset's rows: the plain columns, and each row's encoded audio on demand."""

    schema: pa.Schema
    sizes: list[int]
    """Rows in each part (a parquet row group or an Arrow table)."""
    parts: list[Any]
    """Each part: ``(parquet file, row group)`` or an Arrow table."""
    _starts: list[int] = field(default_factory=list)
    _groups: OrderedDict[int, AudioColumn] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ahead: dict[int, Future[AudioColumn]] = field(default_factory=dict)
    """Parquet row groups being read ahead."""
    _tables: dict[tuple[int, str], AudioColumn] = field(default_factory=dict)
    """The audio column of each Arrow table part (memory-mapped: nothing is copied)."""

    def __post_init__(self) -> None:
        total = 0
        for size in self.sizes:
            self._starts.append(total)
            total += size

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)

    def __len__(self) -> int:
        return sum(self.sizes)

    def rows(self, without: str) -> Iterator[dict[str, Any]]:
        """Each row's columns but ``without``, as Python values."""
        names = [n for n in self.schema.names if n != without]
        pending: list[int] = []  # consecutive row groups of one parquet file
        parquet: Any = None
        rows = 0
        for part, size in zip(self.parts, self.sizes, strict=True):
            same = not isinstance(part, pa.Table) and part[0] is parquet
            if pending and (not same or rows + size > LISTED_ROWS):
                yield from parquet.read_row_groups(pending, columns=names).to_pylist()
                pending, rows = [], 0
            if isinstance(part, pa.Table):
                parquet = None
                yield from part.select(names).to_pylist()
            else:
                parquet = part[0]
                pending.append(part[1])
                rows += size
        if pending:
            yield from parquet.read_row_groups(pending, columns=names).to_pylist()

    def audio(self, index: int, column: str) -> tuple[bytes | None, str | None]:
        """Row ``index``'s encoded audio and path (either may be None)."""
        part = bisect.bisect_right(self._starts, index) - 1
        return self._column(part, column).row(index - self._starts[part])

    def loading(self, index: int, column: str) -> Future[AudioColumn] | None:
        """The read of the parquet row group holding row ``index`` (started now if it was
        not), for an event loop to await before ``audio`` (which would block on it); None
        when the row's audio is at hand."""
        part = bisect.bisect_right(self._starts, index) - 1
        if isinstance(self.parts[part], pa.Table):
            return None
        with self._lock:
            if part in self._groups:
                return None
            ahead = self._ahead.get(part)
            if ahead is None:
                ahead = self._ahead[part] = _reader().submit(self._read, part, column)
            return ahead

    def _column(self, part: int, column: str) -> AudioColumn:
        """The audio column of one part: a parquet row group is read once (the next one is
        read ahead in a thread meanwhile: the engine's loop waits for no disk read)."""
        found = self.parts[part]
        if isinstance(found, pa.Table):
            values = self._tables.get((part, column))
            if values is None:
                values = self._tables[part, column] = AudioColumn(found.column(column))
            return values
        with self._lock:
            values = self._groups.get(part)
            if values is not None:
                self._groups.move_to_end(part)
            ahead = self._ahead.pop(part, None)
            following = part + 1
            if following < len(self.parts) and following not in {*self._groups, *self._ahead}:
                self._ahead[following] = _reader().submit(self._read, following, column)
        if values is not None:
            return values
        # Every read goes through the one reader thread: a parquet file read from two threads
        # at once fails ("ReadRangeCache did not find matching cache entry").
        values = (ahead or _reader().submit(self._read, part, column)).result()
        with self._lock:
            self._groups[part] = values
            while len(self._groups) > ROW_GROUPS_KEPT:
                self._groups.popitem(last=False)
        return values

    def _read(self, part: int, column: str) -> AudioColumn:
        parquet, group = self.parts[part]
        return AudioColumn(parquet.read_row_group(group, columns=[column]).column(0), eager=True)

    def plain(self, audio_column: str) -> bool:
        """Whether pyarrow reads it as ``datasets`` would (else: read through ``datasets``)."""
        if audio_column not in self.schema.names:
            return True  # the caller names the missing column
        return _audio_type(self.schema.field(audio_column).type) and all(
            _plain(f.type) for f in self.schema if f.name != audio_column
        )


def open_parquet(files: list[Path]) -> ArrowDataset:
    """The rows of ``files``, in order (one schema: the first file's)."""
    import pyarrow.parquet as pq

    sizes, parts = [], []
    schema = None
    for path in files:
        parquet = pq.ParquetFile(path, memory_map=True)
        schema = schema or parquet.schema_arrow
        for group in range(parquet.num_row_groups):
            sizes.append(parquet.metadata.row_group(group).num_rows)
            parts.append((parquet, group))
    assert schema is not None
    return ArrowDataset(schema, sizes, parts)


def parquet_fingerprint(files: list[Path], folder: Path) -> str:
    """What identifies parquet files' content without reading it: each file's name under
    ``folder``, size and footer (the schema, row groups and their column statistics)."""
    digest = hashlib.sha256()
    for path in files:
        size = path.stat().st_size
        with path.open("rb") as f:
            f.seek(max(0, size - 8))
            tail = f.read(8)
            footer = int.from_bytes(tail[:4], "little") if len(tail) == 8 else 0
            start = max(0, size - 8 - min(footer, FOOTER_BYTES))
            f.seek(start)
            digest.update(f"{path.relative_to(folder).as_posix()}|{size}|".encode())
            digest.update(f.read())
    return digest.hexdigest()[:16]


def saved_split(folder: Path, split: str | None) -> Path:
    """The folder of the split asked for in a ``save_to_disk`` folder (a dataset dict's
    split, or the one it holds; a single dataset: the folder itself)."""
    listed = folder / "dataset_dict.json"
    if not listed.is_file():
        return folder
    splits = list(json.loads(listed.read_text())["splits"])
    if split is None and len(splits) == 1:
        return folder / splits[0]
    if split not in splits:
        raise ConfigError(
            f"{folder} holds the splits {', '.join(splits)}",
            field="dataset.split",
            expected="one of them",
        )
    assert split is not None  # None is not a split name: it was refused just above
    return folder / split


def _state(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "state.json").read_text()))


def open_saved(folder: Path) -> ArrowDataset | None:
    """The rows of one ``save_to_disk`` dataset folder (memory-mapped); None when it keeps
    an indices mapping (read through ``datasets``)."""
    state = _state(folder)
    if state.get("_indices_data_files"):
        return None
    tables = []
    for entry in state["_data_files"]:
        with pa.memory_map(str(folder / entry["filename"])) as source:
            tables.append(pa.ipc.open_stream(source).read_all())
    if not tables:
        return None
    return ArrowDataset(tables[0].schema, [t.num_rows for t in tables], tables)


def saved_fingerprint(folder: Path) -> str:
    """The fingerprint ``save_to_disk`` stored for the dataset in ``folder``."""
    return str(_state(folder)["_fingerprint"])


@dataclass(frozen=True, eq=False)
class ArrowAudio:
    """One row's clip in an ``ArrowDataset`` (encoded bytes, or a path the row names)."""

    dataset: ArrowDataset
    index: int
    column: str
    name: str

    def encoded(self) -> tuple[bytes | None, str | None, str]:
        return (*self.dataset.audio(self.index, self.column), self.name)

    def loading(self) -> Future[Any] | None:
        """The read ``encoded`` would wait for (``ArrowDataset.loading``), or None."""
        return self.dataset.loading(self.index, self.column)

    def load(self) -> Any:
        from voxbench.tasks.engine.prepare import decode_encoded

        return decode_encoded(*self.encoded())

    def duration(self) -> float:
        import io

        import soundfile as sf

        data, path = self.dataset.audio(self.index, self.column)
        if data is None:
            return float(sf.info(str(path)).duration)
        return float(sf.info(io.BytesIO(data)).duration)


def open_local(folder: Path, kind: str, split: str | None) -> ArrowDataset | None:
    """The dataset in ``folder`` (``hf_disk`` or ``parquet``) read by pyarrow; None when it
    needs ``datasets`` (an indices mapping)."""
    if kind == "hf_disk":
        return open_saved(saved_split(folder, split))
    files = local_parquet_files(folder, split)
    return open_parquet(files)


def local_parquet_files(folder: Path, split: str | None) -> list[Path]:
    """The parquet files of ``split`` in ``folder`` (a ``ConfigError`` when there are none)."""
    from voxbench.tasks.datasets.hf import parquet_files

    files = parquet_files(folder, split)
    if not files:
        raise ConfigError(
            f"no {split + '*' if split else ''}.parquet files under {folder}", field="dataset.path"
        )
    return files


def local_fingerprint(folder: Path, kind: str, split: str | None) -> str:
    """What identifies a local dataset's content, without reading its rows."""
    if kind == "hf_disk":
        return "hf_disk:" + saved_fingerprint(saved_split(folder, split))
    return "parquet:" + parquet_fingerprint(local_parquet_files(folder, split), folder)


def arrow_rows(
    dataset: ArrowDataset, audio_column: str, label: str, task_file: Path | None = None
) -> Iterator[tuple[dict[str, Any], ArrowAudio]]:
    """Each row's other columns (no audio read) and its clip (``hf.dataset_rows``' twin)."""
    if audio_column not in dataset.column_names:
        raise ConfigError(
            f"{label} has no column {audio_column!r} (it has {', '.join(dataset.column_names)})",
            file=task_file,
            field="columns.audio",
        )
    for index, row in enumerate(dataset.rows(without=audio_column)):
        yield row, ArrowAudio(dataset, index, audio_column, f"{label}#{index}")
