"""The run directory: the one place that knows a run's files, how to read them and who writes.

A run is a directory of append-only files plus derived ones:

- ``run.json``: what was run (rewritten atomically at start, on resume and at the end)
- ``events.jsonl``: the timeline, one typed ``TimelineEvent`` per line, flushed per event
- ``checkpoints.jsonl``: the backend's full state after each completed turn
- ``transcript.jsonl``: one ``TurnRecord`` per completed turn
- ``conversation.wav`` / ``tags.wav``: audio runs' recording and marker-tone track
- ``analysis.json``: latency and turn-taking, measured once from the timeline and the wav
- ``judged.jsonl``, ``scorecard.json``, ``report.md``, ``report.html``, compat summaries
- ``run.log``: progress, warnings and errors with timestamps, secrets redacted (``core.runlog``)

A turn is complete when its transcript line is written; its checkpoint is written just
before, so on resume the last transcript line always has a checkpoint. A line cut short by a
kill (no final newline) is ignored by every reader, and cut off before the next append. A
checkpoint whose transcript line never came (a kill between the two) is dropped when the
run is opened to continue, so the turn that runs again leaves exactly one checkpoint.

Every writer (``run``, ``run --resume``, ``judge``, ``analyze --write``) holds the directory's
writer lock (``RunDirectory.lock``) for as long as it writes: a second writer is refused with
a message naming the process that holds it. The lock is an OS file lock, so a process killed
while holding it releases it with its death and the next writer takes over safely.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from voxbench.core.errors import RunError, RunLockedError
from voxbench.core.records import Judgment, RunInfo, Scorecard, TurnRecord
from voxbench.core.secrets import redact, redact_text
from voxbench.core.timeline import (
    TIMELINE_EVENT,
    TIMELINE_SCHEMA,
    Stamp,
    TimelineEvent,
    TimelineOpened,
    migrate_v1,
)

# -- JSON files ------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The complete JSON lines of ``path`` (none when it does not exist).

    A last line without its newline was torn by a kill and is skipped; blank lines are
    skipped; any other line that is not a JSON object is an error naming the file and line.
    """
    if not path.is_file():
        return []
    rows: list[dict[str, Any]] = []
    # Bytes, decoded line by line: a line that is not UTF-8 is named by its number.
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                break
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise RunError(f"{path}:{number}: not UTF-8 text") from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RunError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            except (ValueError, RecursionError) as exc:
                # json raises these for numbers too long to convert and for deep nesting.
                raise RunError(f"{path}:{number}: not usable JSON ({exc})") from None
            if not isinstance(row, dict):
                raise RunError(f"{path}:{number}: expected a JSON object per line")
            rows.append(row)
    return rows


def append_jsonl(path: Path, row: dict[str, Any], *, sync: bool = True) -> None:
    """Append one JSON line (secrets redacted) and flush it to disk."""
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(redact(row), ensure_ascii=False) + "\n")
        f.flush()
        if sync:
            os.fsync(f.fileno())


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON (secrets redacted) through a temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(redact(data), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_jsonl_atomic(path: Path, rows: list[dict[str, Any]]) -> None:
    """Replace ``path`` with these JSON lines (secrets redacted) in one rename."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(redact(row), ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _cut_torn_tail(path: Path) -> None:
    # Drop a partial last line so appends start on a fresh line.
    if not path.is_file():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


# -- the writer lock -------------------------------------------------------------------


class WriterLock:
    """An exclusive, non-blocking OS lock on a run directory's lock file."""

    def __init__(self, path: Path, purpose: str) -> None:
        self.path = path
        self.purpose = purpose
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock or raise ``RunError`` naming the process that holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        f = self.path.open("a+", encoding="utf-8")
        if not _try_lock(f):
            f.seek(0)
            holder = f.read().strip()
            f.close()
            raise RunLockedError(
                f"{self.path.parent}: another voxbench process is writing this run "
                f"({_describe_holder(holder)}); wait for it to finish or stop it first"
            )
        f.seek(0)
        f.truncate()
        f.write(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "purpose": self.purpose,
                    "since": datetime.now(UTC).isoformat(timespec="seconds"),
                }
            )
        )
        f.flush()
        self._file = f

    def release(self) -> None:
        """Let the next writer in (the file stays: removing it would race a new writer)."""
        if self._file is None:
            return
        with contextlib.suppress(OSError):
            self._file.seek(0)
            self._file.truncate()
            self._file.flush()
        _unlock(self._file)
        self._file.close()
        self._file = None

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _describe_holder(text: str) -> str:
    try:
        info = json.loads(text)
    except ValueError:
        return "a process that has not said who it is"
    return (
        f"pid {info.get('pid')} on {info.get('host')}, {info.get('purpose')}, "
        f"since {info.get('since')}"
    )


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(f: IO[str]) -> bool:
        try:
            f.seek(0)
            msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(f: IO[str]) -> None:
        with contextlib.suppress(OSError):
            f.seek(0)
            msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(f: IO[str]) -> bool:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(f: IO[str]) -> None:
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)


# -- the run directory -----------------------------------------------------------------


REPEAT_GROUP_FILE = "repeats.json"
"""Marks a repeat group: a directory of K run directories of one config (``voxbench.scale``)."""


class RunDirectory:
    """Every file of one run: its names, readers and appenders, and the writer lock."""

    RUN = "run.json"
    EVENTS = "events.jsonl"
    TRANSCRIPT = "transcript.jsonl"
    CHECKPOINTS = "checkpoints.jsonl"
    RECORDING = "conversation.wav"
    TAGS = "tags.wav"
    ANALYSIS = "analysis.json"
    JUDGED = "judged.jsonl"
    SCORECARD = "scorecard.json"
    REPORT = "report.md"
    REPORT_HTML = "report.html"
    LOG = "run.log"
    LOCK = ".writer.lock"
    CB_SUMMARY = "claude_summary.json"
    CB_JUDGED = "claude_judged.jsonl"
    CB_ANALYSIS = "claude_analysis.md"
    """ConversationBench's own run-file names (``--compat conversation-bench`` writes them
    too, in its layout, so upstream's scripts read voxbench runs)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._events: IO[str] | None = None
        self._seq = 0

    def __repr__(self) -> str:
        return f"RunDirectory({str(self.path)!r})"

    @classmethod
    def open_existing(cls, path: str | Path) -> RunDirectory:
        """Open a run directory that must already hold ``run.json``."""
        run = cls(path)
        if not run.run_file.is_file():
            raise RunError(f"{run.path}: not a run directory (no {cls.RUN})")
        other = run._other_kind()
        if other is not None:
            raise RunError(other)
        return run

    def _other_kind(self) -> str | None:
        """What to say when ``run.json`` is another run kind's (an audio-task run), else None."""
        try:
            data = json.loads(self.run_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # ``info()`` says what is wrong with it
        if isinstance(data, dict) and str(data.get("schema", "")).startswith("voxbench.tasks/"):
            return (
                f"{self.path}: this is an audio-task run, not a conversation run; use "
                f"voxbench tasks show {self.path} (or voxbench tasks run --resume)"
            )
        return None

    # -- file paths -----------------------------------------------------------------------

    @property
    def run_file(self) -> Path:
        return self.path / self.RUN

    @property
    def events_file(self) -> Path:
        return self.path / self.EVENTS

    @property
    def transcript_file(self) -> Path:
        return self.path / self.TRANSCRIPT

    @property
    def checkpoints_file(self) -> Path:
        return self.path / self.CHECKPOINTS

    @property
    def recording_file(self) -> Path:
        return self.path / self.RECORDING

    @property
    def tags_file(self) -> Path:
        return self.path / self.TAGS

    @property
    def analysis_file(self) -> Path:
        return self.path / self.ANALYSIS

    @property
    def judged_file(self) -> Path:
        return self.path / self.JUDGED

    @property
    def scorecard_file(self) -> Path:
        return self.path / self.SCORECARD

    @property
    def report_file(self) -> Path:
        return self.path / self.REPORT

    @property
    def report_html_file(self) -> Path:
        return self.path / self.REPORT_HTML

    @property
    def log_file(self) -> Path:
        """``run.log``: the run's progress, warnings and errors (``core.runlog``)."""
        return self.path / self.LOG

    def compat_file(self, name: str) -> Path:
        """Where a compatibility summary (``conversation-bench``, …) is written."""
        return self.path / f"compat_{name.replace('-', '_')}.json"

    @property
    def has_recording(self) -> bool:
        """Whether this is an audio run with a recording."""
        return self.recording_file.is_file()

    # -- the writer lock ------------------------------------------------------------------

    def lock(self, purpose: str) -> WriterLock:
        """The writer lock, as a context manager: ``with run_dir.lock("voxbench judge"): ...``."""
        return WriterLock(self.path / self.LOCK, purpose)

    # -- run.json -------------------------------------------------------------------------

    def info(self) -> RunInfo:
        """``run.json``."""
        try:
            return RunInfo.model_validate_json(self.run_file.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise RunError(f"{self.run_file}: cannot read run info: not UTF-8 text") from None
        except (OSError, ValidationError) as exc:
            other = self._other_kind()
            if other is not None:
                raise RunError(other) from None
            raise RunError(f"{self.run_file}: cannot read run info: {exc}") from exc

    def write_info(self, info: RunInfo) -> None:
        """(Re)write ``run.json``."""
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.run_file, info.model_dump(mode="json"))

    # -- turns and checkpoints -------------------------------------------------------------

    def turns(self) -> list[TurnRecord]:
        """Completed turns, in order."""
        out = []
        for i, row in enumerate(read_jsonl(self.transcript_file), 1):
            try:
                out.append(TurnRecord.model_validate(row))
            except ValidationError as exc:
                raise RunError(f"{self.transcript_file}:{i}: not a turn record: {exc}") from exc
        return out

    def checkpoint(self, turn: str) -> dict[str, Any] | None:
        """Backend state saved after ``turn``."""
        for row in reversed(read_jsonl(self.checkpoints_file)):
            if row.get("turn") == turn:
                return row["backend_state"]
        return None

    def append_turn(self, record: TurnRecord, backend_state: dict[str, Any]) -> None:
        """Append a completed turn: checkpoint first, then the transcript line."""
        append_jsonl(self.checkpoints_file, {"turn": record.turn, "backend_state": backend_state})
        append_jsonl(self.transcript_file, record.model_dump(mode="json"))

    def _drop_unfinished_checkpoints(self) -> None:
        # A kill between a turn's checkpoint and its transcript line leaves a checkpoint for a
        # turn that is not complete; the turn runs again, so its old checkpoint must go.
        rows = read_jsonl(self.checkpoints_file)
        done = {row.get("turn") for row in read_jsonl(self.transcript_file)}
        kept = [row for row in rows if row.get("turn") in done]
        if len(kept) != len(rows):
            write_jsonl_atomic(self.checkpoints_file, kept)

    # -- the timeline ---------------------------------------------------------------------

    def events(self) -> list[TimelineEvent]:
        """The timeline, typed (a schema-1 file is migrated as it is read)."""
        rows = read_jsonl(self.events_file)
        version = _timeline_version(rows, self.events_file)
        events = []
        for i, row in enumerate(rows, 1):
            try:
                events.append(
                    TIMELINE_EVENT.validate_python(migrate_v1(row) if version == 1 else row)
                )
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(p) for p in problem["loc"])
                raise RunError(
                    f"{self.events_file}:{i}: not a timeline event "
                    f"(events schema {version}): {where}: {problem['msg']}"
                ) from exc
        return events

    def open_for_append(self) -> None:
        """Prepare to append to the timeline and the transcript (cuts lines torn by a kill).

        A schema-1 timeline is rewritten in the current schema first, so one file never
        mixes two schemas."""
        self.path.mkdir(parents=True, exist_ok=True)
        for file in (self.events_file, self.transcript_file, self.checkpoints_file):
            _cut_torn_tail(file)
        self._drop_unfinished_checkpoints()
        rows = read_jsonl(self.events_file)
        if not rows:
            self.events_file.write_text("", encoding="utf-8")
            self._seq = 0
            self._events = self.events_file.open("a", encoding="utf-8")
            self._write_event(TimelineOpened())
            return
        if _timeline_version(rows, self.events_file) == 1:
            events = [TimelineOpened(t=rows[0].get("t", 0.0)).model_dump(mode="json")]
            events += [migrate_v1(r) | {"seq": r.get("seq", 0) + 1} for r in rows]
            write_jsonl_atomic(self.events_file, events)
            rows = events
        self._seq = int(rows[-1].get("seq", len(rows) - 1)) + 1
        self._events = self.events_file.open("a", encoding="utf-8")

    def append_event(
        self, event: Stamp, *, t: float, turn: str | None, wall: float | None = None
    ) -> Stamp:
        """Stamp ``event`` with its order, time (and wall time, on a virtual clock) and turn,
        append it and flush it."""
        wall = None if wall is None else round(wall, 6)
        return self._write_event(
            event.model_copy(update={"t": round(t, 6), "turn": turn, "wall": wall})
        )

    def _write_event(self, event: Stamp) -> Stamp:
        if self._events is None:
            raise RunError(f"{self.path}: run directory is not open for appending")
        event = event.model_copy(update={"seq": self._seq})
        self._seq += 1
        self._events.write(
            json.dumps(redact(event.model_dump(mode="json")), ensure_ascii=False) + "\n"
        )
        self._events.flush()
        return event

    def close(self) -> None:
        """Close the timeline file."""
        if self._events is not None:
            self._events.close()
            self._events = None

    # -- judgments, scorecard, analysis, reports -------------------------------------------

    def judgments(self) -> list[Judgment] | None:
        """``judged.jsonl``, or None when the run was never judged."""
        if not self.judged_file.is_file():
            return None
        out = []
        for i, row in enumerate(read_jsonl(self.judged_file), 1):
            try:
                out.append(Judgment.model_validate(row))
            except ValidationError as exc:
                raise RunError(
                    f"{self.judged_file}:{i}: not a judgment: {exc.errors()[0]['msg']}"
                ) from exc
        return out

    def write_judgments(self, judgments: list[Judgment]) -> Path:
        """Replace ``judged.jsonl``."""
        write_jsonl_atomic(self.judged_file, [j.model_dump(mode="json") for j in judgments])
        return self.judged_file

    def scorecard(self) -> Scorecard | None:
        """``scorecard.json``, or None when absent or written by an older, unreadable format."""
        if not self.scorecard_file.is_file():
            return None
        try:
            return Scorecard.model_validate_json(self.scorecard_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def write_scorecard(self, card: Scorecard) -> Path:
        """Replace ``scorecard.json``."""
        write_json_atomic(self.scorecard_file, card.model_dump(mode="json"))
        return self.scorecard_file

    def read_json(self, path: Path) -> dict[str, Any] | None:
        """A JSON object file of this run (``analysis.json``, a compat summary), or None."""
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RunError(f"{path}: not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise RunError(f"{path}: expected a JSON object")
        return data

    def write_jsonl(self, path: Path, rows: list[dict[str, Any]]) -> Path:
        """Replace a JSONL file of this run (secrets redacted)."""
        write_jsonl_atomic(path, rows)
        return path

    def write_json(self, path: Path, data: Any) -> Path:
        """Replace a JSON file of this run (secrets redacted)."""
        write_json_atomic(path, data)
        return path

    def write_text(self, path: Path, text: str) -> Path:
        """Replace a text file of this run (a report), secrets redacted."""
        write_text_atomic(path, redact_text(text))
        return path


def _timeline_version(rows: list[dict[str, Any]], file: Path) -> int:
    if not rows:
        return TIMELINE_SCHEMA
    first = rows[0]
    if first.get("type") != "timeline_opened":
        if "data" in first or all("data" in r for r in rows[:3]):
            return 1
        raise RunError(f"{file}:1: the timeline has no timeline_opened header")
    version = int(first.get("schema_version", 0))
    if version > TIMELINE_SCHEMA:
        raise RunError(
            f"{file}: written with events schema {version}; this voxbench reads schemas "
            f"1-{TIMELINE_SCHEMA}: upgrade voxbench to read this run"
        )
    return version
