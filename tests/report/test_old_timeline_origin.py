"""The HTML report reads a run's timeline through the typed reader, so old runs place their
players right: a schema-1 line keeps the recording origin inside ``data``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from voxbench.core.rundir import RunDirectory
from voxbench.report.html import _recording_origin

FIXTURE = Path(__file__).parent.parent / "fixtures" / "runs" / "schema1_smoke_oracle"


def test_a_schema_1_timeline_gives_its_recording_origin(tmp_path: Path) -> None:
    run = Path(shutil.copytree(FIXTURE, tmp_path / "run"))
    events = run / "events.jsonl"
    lines = events.read_text(encoding="utf-8").splitlines()
    marker = {
        "seq": 1,
        "t": 2.5,
        "turn": None,
        "source": "runner",
        "type": "recording_started",
        "data": {"origin": 2.5},
    }
    renumbered = [json.loads(line) for line in lines]
    for row in renumbered[1:]:
        row["seq"] += 1
    rows = [renumbered[0], marker, *renumbered[1:]]
    events.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert _recording_origin(RunDirectory(run)) == 2.5
