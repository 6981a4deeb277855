"""An audio-task run's directory: ``runs/tasks/<timestamp>_<id>/``, read as the typed results
of ``core.results`` (``TaskRunInfo``, ``TaskRecord``, ``TaskScores``).

- ``run.json``: the config's raw text (``${ENV}`` unsubstituted: no secret is written),
  models, tasks with their dataset fingerprints, versions, seed, status
- ``records.jsonl``: one line per finished record, appended and flushed as it finishes
- ``records.csv``, ``scores.json``, ``report.md``: derived at the end of ``run`` and ``--resume``
- ``report.html``: written by ``voxbench tasks show RUN --html``
- ``.lock``: the writer lock while a process writes
- ``shards/<i>-of-<n>.jsonl``: rows of a run sharded over Ray workers (``tasks.engine.shards``),
  merged into ``records.jsonl`` when the shards are done (or by the next ``--resume``)
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from json.encoder import encode_basestring
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from voxbench.core.errors import RunError
from voxbench.core.results import TASK_RUN_SCHEMA, TaskRecord, TaskRunInfo, TaskScores
from voxbench.core.rundir import (
    WriterLock,
    _cut_torn_tail,
    read_jsonl,
    write_json_atomic,
    write_text_atomic,
)

RUN_JSON = "run.json"
RECORDS = "records.jsonl"
RECORDS_CSV = "records.csv"
SCORES = "scores.json"
REPORT = "report.md"
REPORT_HTML = "report.html"
LOCK = ".lock"
SHARDS_DIR = "shards"
SCHEMA = TASK_RUN_SCHEMA
CSV_COLUMNS = (
    "task",
    "model",
    "id",
    "language",
    "reference",
    "prediction",
    "error",
    "latency_s",
    "cached",
)


class TaskRunDirectory:
    """The files of one task run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._records: IO[str] | None = None

    @classmethod
    def create(cls, output_dir: Path) -> TaskRunDirectory:
        """A new, empty run directory under ``output_dir``."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        path = output_dir / f"{stamp}_{secrets.token_hex(3)}"
        path.mkdir(parents=True)
        return cls(path)

    @classmethod
    def open(cls, path: Path) -> TaskRunDirectory:
        """An existing run directory; ``RunError`` when it is not one."""
        if not (path / RUN_JSON).is_file():
            raise RunError(f"{path}: not a task run (no {RUN_JSON})")
        try:
            data = json.loads((path / RUN_JSON).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None  # ``info()`` says what is wrong with it
        if isinstance(data, dict) and "run_id" in data and "benchmark_hash" in data:
            raise RunError(
                f"{path}: this is a conversation run, not an audio-task run; use "
                f"voxbench show {path} (or voxbench run --resume {path})"
            )
        return cls(path)

    def lock(self) -> WriterLock:
        """The writer lock of this run."""
        return WriterLock(self.path / LOCK, "voxbench tasks run")

    def info(self) -> dict[str, Any]:
        """``run.json``."""
        try:
            return json.loads((self.path / RUN_JSON).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RunError(f"{self.path / RUN_JSON}: unreadable ({exc})") from exc

    def run_info(self) -> TaskRunInfo:
        """``run.json``, typed (the one reader every other room uses)."""
        return _typed(TaskRunInfo, self.info(), self.path / RUN_JSON)

    def write_info(self, info: dict[str, Any]) -> None:
        """Rewrite ``run.json``, checked against ``TaskRunInfo`` first (written as given, so a
        file rewritten with the same content keeps its bytes)."""
        document = {"schema": SCHEMA, **info}
        _typed(TaskRunInfo, document, self.path / RUN_JSON)
        write_json_atomic(self.path / RUN_JSON, document)

    def rows(self) -> list[dict[str, Any]]:
        """Every complete line of ``records.jsonl``."""
        return read_jsonl(self.path / RECORDS)

    def records(self) -> list[TaskRecord]:
        """``records.jsonl``, typed; a line that is not a record is an error naming it."""
        out = []
        for i, row in enumerate(self.rows(), 1):
            out.append(_typed(TaskRecord, row, self.path / RECORDS, line=i))
        return out

    def open_records(self, shard: tuple[int, int] | None = None) -> None:
        """Start appending to ``records.jsonl``, or to shard ``(index, count)``'s own file (a
        line torn by a kill is cut first)."""
        path = self.path / RECORDS if shard is None else self.shard_file(*shard)
        path.parent.mkdir(exist_ok=True)
        _cut_torn_tail(path)
        self._records = path.open("a", encoding="utf-8")

    def shard_file(self, index: int, count: int) -> Path:
        """Where shard ``index`` of ``count`` appends its rows."""
        return self.path / SHARDS_DIR / f"{index}-of-{count}.jsonl"

    def shard_rows(self, index: int, count: int) -> list[dict[str, Any]]:
        """Every complete line shard ``index`` of ``count`` has written."""
        path = self.shard_file(index, count)
        return read_jsonl(path) if path.is_file() else []

    def shard_tail(self) -> ShardTail:
        """A reader of the rows the shard files gain (the driver's view of running shards)."""
        return ShardTail(self.path / SHARDS_DIR)

    def merge_shards(self) -> None:
        """Move the shard files' rows into ``records.jsonl`` (a row already there is not
        added twice, so a merge cut short by a kill is simply done again), then delete them."""
        folder = self.path / SHARDS_DIR
        files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
        if not files:
            return
        _cut_torn_tail(self.path / RECORDS)
        have = {json.dumps(r, sort_keys=True) for r in self.rows()}
        new: list[str] = []
        encode = _json_text_encoder()
        for path in files:
            for row in read_jsonl(path):
                text = json.dumps(row, sort_keys=True)
                if text not in have:
                    have.add(text)
                    new.append(encode(row) + "\n")
        with (self.path / RECORDS).open("a", encoding="utf-8") as out:
            out.write("".join(new))
            out.flush()
        for path in files:
            path.unlink()
        with contextlib.suppress(OSError):  # a shard still writing keeps its folder
            folder.rmdir()

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append finished records, one line each, and flush them to the OS in one write
        (a killed process loses nothing written)."""
        assert self._records is not None, "open_records first"
        encode = _json_text_encoder()
        self._records.write("".join(encode(row) + "\n" for row in rows))
        self._records.flush()

    def close_records(self) -> None:
        """Stop appending."""
        if self._records is not None:
            self._records.close()
            self._records = None

    def write_outputs(
        self, rows: list[dict[str, Any]], scores: dict[str, Any], report: str
    ) -> None:
        """``records.csv``, ``scores.json`` and ``report.md``."""
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        encode = _json_text_encoder()
        metric_names = sorted({m for r in rows for m in r.get("scores", {})})
        writer.writerow([*CSV_COLUMNS, *metric_names])
        for row in rows:
            error = row.get("error")
            scored = row.get("scores", {})
            writer.writerow(
                [
                    row["task"],
                    row["model"],
                    row["id"],
                    row["language"],
                    row["reference"],
                    row["prediction"] if row["prediction"] is not None else "",
                    error["message"] if error else "",
                    row["latency_s"],
                    row["cached"],
                    *(encode(scored[m]) if m in scored else "" for m in metric_names),
                ]
            )
        write_text_atomic(self.path / RECORDS_CSV, buffer.getvalue())
        _typed(TaskScores, scores, self.path / SCORES)  # the contract every reader reads
        write_json_atomic(self.path / SCORES, scores)
        write_text_atomic(self.path / REPORT, report)

    def scores(self) -> dict[str, Any]:
        """``scores.json``."""
        try:
            return json.loads((self.path / SCORES).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RunError(f"{self.path / SCORES}: unreadable ({exc})") from exc

    def score_table(self) -> TaskScores:
        """``scores.json``, typed."""
        return _typed(TaskScores, self.scores(), self.path / SCORES)


def _typed(model: Any, data: Any, file: Path, line: int | None = None) -> Any:
    """``model`` from ``data``, or a ``RunError`` naming the file (and line) and the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "(top level)"
        at = f"{file}:{line}" if line is not None else str(file)
        raise RunError(f"{at}: {where}: {problem['msg']}") from None


def _json_text_encoder() -> Callable[[Any], str]:
    """An encoder giving what ``json.dumps(value, ensure_ascii=False)`` gives, for one batch
    of values: ``json.dumps`` makes a ``JSONEncoder`` and its C encoder anew for every value,
    ~25% of the time of a records.jsonl row and ~65% of a records.csv score cell. One made
    per batch: a failed encoding can leave its circular-reference markers behind."""
    settings = json.JSONEncoder(ensure_ascii=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        return settings.encode
    encode = make(
        {}, settings.default, encode_basestring, None,
        settings.key_separator, settings.item_separator, False, False, True,
    )  # fmt: skip
    return lambda value: "".join(encode(value, 0))


def latest_rows(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The last row of each (task, model, record id): a resumed record's retry wins."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        out[(row["task"], row["model"], row["id"])] = row
    return out


class ShardTail:
    """Follows shard files as their workers append: each call returns the complete lines
    written since the last one (a line still being written waits for the next call)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.offsets: dict[Path, int] = {}

    def new_rows(self) -> list[dict[str, Any]]:
        """The rows appended to any shard file since the last call."""
        rows: list[dict[str, Any]] = []
        if not self.folder.is_dir():
            return rows
        for path in sorted(self.folder.glob("*.jsonl")):
            start = self.offsets.get(path, 0)
            try:
                if path.stat().st_size < start:  # rewritten by a retried worker: read anew
                    start = 0
                with path.open("rb") as file:
                    file.seek(start)
                    data = file.read()
            except FileNotFoundError:  # merged and deleted meanwhile
                continue
            end = data.rfind(b"\n") + 1
            self.offsets[path] = start + end
            for line in data[:end].splitlines():
                with contextlib.suppress(ValueError):
                    if line.strip():
                        rows.append(json.loads(line))
        return rows
