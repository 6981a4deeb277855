"""A run's records and the bodies it sends are the same whichever way its clips are read:
a local parquet dataset read by pyarrow with clips passed through (what runs now), or read
by ``datasets`` with every clip decoded, resampled and re-encoded (what ran before)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import soundfile as sf

from tests.tasks.parquet_run import run_parquet_task, sine_clip
from voxbench.tasks.datasets import arrow
from voxbench.tasks.engine import prepare
from voxbench.tasks.engine import work_queue as engine_module

pytest.importorskip("datasets")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _clip(i: int, fmt: str, rate: int) -> bytes:
    return sine_clip(0.4 + 0.1 * i, 180 + 40 * i, fmt, rate)


def _dataset(folder: Path) -> None:
    kinds = [("WAV", 16000), ("FLAC", 16000), ("WAV", 22050), ("FLAC", 44100)] * 2
    table = pa.table(
        {
            "id": [f"r{i}" for i in range(len(kinds))],
            "audio": [{"bytes": _clip(i, f, r), "path": None} for i, (f, r) in enumerate(kinds)],
            "reference": [f"word {i}" for i in range(len(kinds))],
        }
    )
    (folder / "data").mkdir(parents=True)
    pq.write_table(table, folder / "data" / "test-00000-of-00001.parquet", row_group_size=3)


def _answer(body: bytes) -> str:
    """What the model "heard": the rate and a digest of the samples it was sent."""
    audio = json.loads(body)["messages"][-1]["content"][1]["input_audio"]["data"]
    samples, rate = sf.read(io.BytesIO(base64.b64decode(audio)), dtype="int16")
    return f"{rate} {hashlib.sha256(samples.tobytes()).hexdigest()[:12]}"


def _run(tmp_path: Path, name: str) -> tuple[list[str], list[bytes]]:
    return run_parquet_task(tmp_path, name, _answer, concurrency=3)


def test_passed_through_and_pyarrow_read_records_are_those_decoding_gave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _dataset(tmp_path / "data")
    passed: list[bool] = []
    real = engine_module.pass_through

    def counting(*args: Any) -> Any:
        found = real(*args)
        passed.append(found is not None)
        return found

    monkeypatch.setattr(engine_module, "pass_through", counting)
    now_rows, now_sent = _run(tmp_path, "now")
    assert passed.count(True) == 4 and passed.count(False) == 4  # 16 kHz clips passed through
    monkeypatch.setattr(arrow, "open_local", lambda *args: None)  # read through datasets
    monkeypatch.setattr(prepare, "pass_through", lambda *args: None)  # decode every clip
    monkeypatch.setattr(engine_module, "pass_through", lambda *args: None)
    before_rows, before_sent = _run(tmp_path, "before")
    assert len(now_rows) == 8 and now_rows == before_rows
    assert now_sent == before_sent  # byte for byte: same WAVs, same bodies
    heard = {json.loads(r)["prediction"].split()[0] for r in now_rows}
    assert heard == {"16000"}  # every clip reached the model at the task's rate
