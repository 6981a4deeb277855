"""The run directory: append-only artifacts that survive a kill.

- ``run.json``: what was run (rewritten atomically at start, on resume and at the end)
- ``events.jsonl``: the timeline, one ``RecordedEvent`` per line, flushed per event
- ``checkpoints.jsonl``: the backend's full state after each completed turn
- ``transcript.jsonl``: one ``TurnRecord`` per completed turn

A turn is complete when its transcript line is written; its checkpoint is written just
before, so on resume the last transcript line always has a checkpoint. A line cut short by
a kill is ignored (and the file repaired) on the next open.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from voxbench.core.errors import RunError
from voxbench.core.events import RecordedEvent
from voxbench.core.records import RunInfo, TurnRecord
from voxbench.core.secrets import redact

RUN_FILE = "run.json"
EVENTS_FILE = "events.jsonl"
TRANSCRIPT_FILE = "transcript.jsonl"
CHECKPOINTS_FILE = "checkpoints.jsonl"


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON (secrets redacted) through a temporary file and a rename."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(redact(data), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Complete JSON lines of ``path``; a torn last line (from a kill) is skipped."""
    if not path.is_file():
        return []
    rows = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.endswith("\n"):
                break
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise RunError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
    return rows


def _repair_tail(path: Path) -> None:
    # Drop a partial last line so appends start on a fresh line.
    if not path.is_file():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        with path.open("r+b") as f:
            f.truncate(cut)


class RunDirectory:
    """Reads and appends the artifacts of one run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._events: IO[str] | None = None
        self._seq = 0

    # -- reading ----------------------------------------------------------------------

    @classmethod
    def open_existing(cls, path: str | Path) -> RunDirectory:
        """Open a run directory that must already hold ``run.json``."""
        p = Path(path)
        if not (p / RUN_FILE).is_file():
            raise RunError(f"{p}: not a run directory (no {RUN_FILE})")
        return cls(p)

    def info(self) -> RunInfo:
        """``run.json``."""
        file = self.path / RUN_FILE
        try:
            return RunInfo.model_validate_json(file.read_text(encoding="utf-8"))
        except (OSError, ValidationError) as exc:
            raise RunError(f"{file}: cannot read run info: {exc}") from exc

    def turns(self) -> list[TurnRecord]:
        """Completed turns, in order."""
        file = self.path / TRANSCRIPT_FILE
        out = []
        for i, row in enumerate(read_jsonl(file), 1):
            try:
                out.append(TurnRecord.model_validate(row))
            except ValidationError as exc:
                raise RunError(f"{file}:{i}: not a turn record: {exc}") from exc
        return out

    def events(self) -> list[RecordedEvent]:
        """The timeline."""
        return [RecordedEvent.model_validate(r) for r in read_jsonl(self.path / EVENTS_FILE)]

    def checkpoint(self, turn: str) -> dict[str, Any] | None:
        """Backend state saved after ``turn``."""
        for row in reversed(read_jsonl(self.path / CHECKPOINTS_FILE)):
            if row.get("turn") == turn:
                return row["backend_state"]
        return None

    # -- writing ----------------------------------------------------------------------

    def write_info(self, info: RunInfo) -> None:
        """(Re)write ``run.json``."""
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.path / RUN_FILE, info.model_dump(mode="json"))

    def open_for_append(self) -> None:
        """Prepare to append (repairs torn lines left by a kill)."""
        self.path.mkdir(parents=True, exist_ok=True)
        for name in (EVENTS_FILE, TRANSCRIPT_FILE, CHECKPOINTS_FILE):
            _repair_tail(self.path / name)
        existing = read_jsonl(self.path / EVENTS_FILE)
        self._seq = existing[-1]["seq"] + 1 if existing else 0
        self._events = (self.path / EVENTS_FILE).open("a", encoding="utf-8")

    def append_event(
        self, t: float, turn: str | None, source: str, type_: str, data: dict[str, Any]
    ) -> RecordedEvent:
        """Append one event to the timeline and flush it."""
        event = RecordedEvent(
            seq=self._seq, t=round(t, 6), turn=turn, source=source, type=type_, data=redact(data)
        )
        self._seq += 1
        if self._events is None:
            raise RunError("run directory is not open for appending")
        self._events.write(event.model_dump_json() + "\n")
        self._events.flush()
        return event

    def append_turn(self, record: TurnRecord, backend_state: dict[str, Any]) -> None:
        """Append a completed turn: checkpoint first, then the transcript line."""
        _append_line(
            self.path / CHECKPOINTS_FILE, {"turn": record.turn, "backend_state": backend_state}
        )
        _append_line(self.path / TRANSCRIPT_FILE, redact(record.model_dump(mode="json")))

    def close(self) -> None:
        """Close the timeline file."""
        if self._events is not None:
            self._events.close()
            self._events = None


def _append_line(path: Path, row: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
