"""The run directory: one reader of JSONL, the typed timeline and its migration, the writer lock."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import voxbench
from voxbench.core.errors import RunError
from voxbench.core.rundir import RunDirectory, read_jsonl
from voxbench.core.timeline import (
    TIMELINE_SCHEMA,
    AudioRecorded,
    RunStarted,
    TurnRetry,
    TurnStarted,
)


def test_a_torn_last_line_is_skipped_and_a_bad_line_names_file_and_line(tmp_path: Path) -> None:
    file = tmp_path / "x.jsonl"
    file.write_text('{"a": 1}\n\n{"a": 2}\n{"a": 3')
    assert read_jsonl(file) == [{"a": 1}, {"a": 2}]
    file.write_text('{"a": 1}\nnot json\n{"a": 3}\n')
    with pytest.raises(RunError, match=r"x\.jsonl:2: not valid JSON"):
        read_jsonl(file)


def test_timeline_round_trip_is_typed(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.open_for_append()
    run.append_event(RunStarted(target="local/oracle"), t=0.0, turn=None)
    run.append_event(TurnStarted(index=0), t=0.5, turn="0")
    run.append_event(AudioRecorded(samples=480, sample_rate=24_000, plays_at=1.25), t=1.0, turn="0")
    run.close()
    first = json.loads(run.events_file.read_text().splitlines()[0])
    assert first == {
        "seq": 0,
        "t": 0.0,
        "turn": None,
        "source": "runner",
        "type": "timeline_opened",
        "schema_version": TIMELINE_SCHEMA,
    }
    events = run.events()
    assert [type(e) for e in events[1:]] == [RunStarted, TurnStarted, AudioRecorded]
    assert events[3].plays_at == 1.25 and events[3].source == "target"
    assert [e.seq for e in events] == [0, 1, 2, 3]


SCHEMA_1 = [
    {"seq": 0, "t": 0.0, "turn": None, "source": "runner", "type": "run_started", "data": {"target": "local/oracle"}},
    {"seq": 1, "t": 0.1, "turn": "0", "source": "runner", "type": "turn_started", "data": {"index": 0}},
    {"seq": 2, "t": 0.2, "turn": "0", "source": "runner", "type": "turn_retry", "data": {"attempt": 1, "reason": "rate_limit: 429", "delay": 0.5, "reconnect": False}},
]  # fmt: skip


def test_a_schema_1_timeline_is_read_and_migrated_before_appending(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "old")
    run.path.mkdir()
    run.events_file.write_text("".join(json.dumps(r) + "\n" for r in SCHEMA_1))
    events = run.events()
    assert isinstance(events[2], TurnRetry) and events[2].reason == "rate_limit: 429"
    run.open_for_append()
    run.append_event(TurnStarted(index=1), t=0.3, turn="1")
    run.close()
    rows = read_jsonl(run.events_file)
    assert rows[0]["type"] == "timeline_opened" and all("data" not in r for r in rows)
    assert [r["seq"] for r in rows] == [0, 1, 2, 3, 4]
    assert [e.type for e in run.events()][1:] == [
        "run_started",
        "turn_started",
        "turn_retry",
        "turn_started",
    ]


def test_a_schema_2_timeline_reads_as_it_is_and_gets_wall_stamps_appended(
    tmp_path: Path,
) -> None:
    """Schema 3 only added the optional ``wall`` stamp: a schema-2 file (no ``wall``) reads
    unchanged, and a resumed virtual-clock run appends stamped lines to it."""
    run = RunDirectory(tmp_path / "v2")
    run.path.mkdir()
    header = {"seq": 0, "t": 0, "turn": None, "source": "runner", "type": "timeline_opened"}
    started = {"seq": 1, "t": 0.0, "turn": None, "source": "runner", "type": "run_started"}
    lines = [header | {"schema_version": 2}, started | {"target": "local/oracle"}]
    run.events_file.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert run.events()[1].wall is None
    run.open_for_append()
    run.append_event(TurnStarted(index=0), t=0.5, turn="0", wall=0.1234567)
    run.close()
    assert read_jsonl(run.events_file)[2]["wall"] == 0.123457
    assert [e.wall for e in run.events()] == [None, None, 0.123457]


def test_a_newer_timeline_schema_says_which_version_it_needs(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "new")
    run.path.mkdir()
    header = {"seq": 0, "t": 0, "turn": None, "source": "runner", "type": "timeline_opened"}
    run.events_file.write_text(json.dumps(header | {"schema_version": 99}) + "\n")
    with pytest.raises(RunError, match="events schema 99.*upgrade voxbench"):
        run.events()


def test_an_unknown_event_names_its_line(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "bad")
    run.open_for_append()
    run.close()
    with run.events_file.open("a") as f:
        f.write(
            json.dumps({"seq": 1, "t": 0, "turn": None, "source": "runner", "type": "nope"}) + "\n"
        )
    with pytest.raises(RunError, match=r"events\.jsonl:2: not a timeline event"):
        run.events()


def test_a_second_writer_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    with run.lock("voxbench run --resume"):
        with pytest.raises(RunError) as refused:
            run.lock("voxbench judge").acquire()
        message = str(refused.value)
        assert f"pid {os.getpid()}" in message and "voxbench run --resume" in message
    with run.lock("voxbench judge"):  # released: the next writer gets it
        pass


HOLDS_LOCK = textwrap.dedent(
    """
    import sys, time
    from voxbench.core.rundir import RunDirectory
    lock = RunDirectory(sys.argv[1]).lock("voxbench run")
    lock.acquire()
    print("locked", flush=True)
    time.sleep(3600)
    """
)


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDS_LOCK, str(run.path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        with pytest.raises(RunError, match=f"pid {proc.pid}"):
            run.lock("voxbench judge").acquire()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while True:  # the kernel releases the dead holder's lock
            try:
                with run.lock("voxbench judge"):
                    break
            except RunError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


RUN_FILE_NAMES = {
    "run.json",
    "events.jsonl",
    "transcript.jsonl",
    "checkpoints.jsonl",
    "conversation.wav",
    "tags.wav",
    "analysis.json",
    "judged.jsonl",
    "scorecard.json",
    "report.md",
    "report.html",
}


# Every run kind's files are named in core: the conversation run directory and the task run's.
RUN_FILE_MODULES = {"core/rundir.py", "core/taskrun.py"}


def test_no_module_outside_the_run_directory_spells_a_run_file_name() -> None:
    root = Path(voxbench.__file__).parent
    offenders = []
    for file in root.rglob("*.py"):
        if file.relative_to(root).as_posix() in RUN_FILE_MODULES:
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in RUN_FILE_NAMES:
                offenders.append(f"{file.relative_to(root)}:{node.lineno}: {node.value}")
    assert offenders == []
