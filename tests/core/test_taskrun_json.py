"""records.jsonl rows and records.csv score cells are ``json.dumps(value, ensure_ascii=False)``
byte for byte, written by one C encoder a batch (issue 33 item 1)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from voxbench.core import taskrun
from voxbench.core.taskrun import CSV_COLUMNS, RECORDS, RECORDS_CSV, TaskRunDirectory

AWKWARD: list[Any] = [
    "plain",
    'quotes " and \\ backslash, tab\t, newline\n, nul \x00, del \x7f',
    "ünïcödé, 中文, emoji 🎙️, line sep \u2028",
    "lone surrogate \ud800",  # encoded as json.dumps does, though no UTF-8 file takes it
    0.1,
    -0.0,
    1e-7,
    1e300,
    math.inf,
    -math.inf,
    math.nan,
    2**70,
    True,
    None,
    [],
    {},
    {"errors": 2, "units": 9, "normalizer": "whisper-english"},
    {1: "int key", 2.5: "float key", False: "bool key", None: "none key"},
    {"nested": [{"a": [1, 2.0, "x"]}, (3, 4)], "empty": {"": ""}},
]


def _row(i: int, scores: Any) -> dict[str, Any]:
    return {
        "task": "t",
        "model": "m",
        "id": f"r{i}",
        "language": "en",
        "reference": AWKWARD[i % 3],
        "prediction": None if i % 4 == 0 else AWKWARD[(i + 1) % 3],
        "scores": {"wer": scores, "bleu": {"score": 1.5}} if i % 5 else {},
        "error": {"message": "boom", "category": "http"} if i % 7 == 0 else None,
        "latency_s": 0.25 * i,
        "cached": i % 2 == 0,
    }


ROWS = [_row(i, value) for i, value in enumerate(AWKWARD) if value != AWKWARD[3]]


def test_encoder_gives_json_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [json.dumps(v, ensure_ascii=False) for v in AWKWARD]
    assert [taskrun._json_text_encoder()(v) for v in AWKWARD] == expected
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)  # no C accelerator
    assert [taskrun._json_text_encoder()(v) for v in AWKWARD] == expected


def test_what_json_dumps_refuses_is_refused_and_the_next_batch_is_written() -> None:
    encode = taskrun._json_text_encoder()
    for bad in ({"x": object()}, {"set": {1}}):
        with pytest.raises(TypeError):
            encode(bad)
    looped: dict[str, Any] = {}
    looped["self"] = looped
    with pytest.raises(ValueError, match="Circular"):
        taskrun._json_text_encoder()(looped)
    assert taskrun._json_text_encoder()(ROWS[5]) == json.dumps(ROWS[5], ensure_ascii=False)


def _run(tmp_path: Path) -> TaskRunDirectory:
    (tmp_path / "run.json").write_text("{}")
    return TaskRunDirectory.open(tmp_path)


def test_appended_rows_are_json_dumps_lines(tmp_path: Path) -> None:
    run = _run(tmp_path)
    run.open_records()
    run.append(ROWS[:7])
    run.append(ROWS[7:])
    run.close_records()
    expected = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS)
    assert (tmp_path / RECORDS).read_bytes() == expected.encode()


def test_csv_score_cells_are_json_dumps(tmp_path: Path) -> None:
    _run(tmp_path).write_outputs(ROWS, {"tasks": {}, "aggregates": {}}, "report\n")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    names = sorted({m for r in ROWS for m in r["scores"]})
    writer.writerow([*CSV_COLUMNS, *names])
    for r in ROWS:
        writer.writerow(
            [
                *(r[c] if r[c] is not None else "" for c in CSV_COLUMNS[:6]),
                r["error"]["message"] if r["error"] else "",
                r["latency_s"],
                r["cached"],
                *(json.dumps(r["scores"][m], ensure_ascii=False) if m in r["scores"] else ""
                  for m in names),
            ]
        )  # fmt: skip
    assert (tmp_path / RECORDS_CSV).read_bytes() == buffer.getvalue().encode()
