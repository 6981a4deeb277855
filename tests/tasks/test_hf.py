"""Hugging Face datasets on disk (``save_to_disk``, parquet), read offline and lazily."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voxbench.core.errors import ConfigError
from voxbench.tasks.config import Filters
from voxbench.tasks.datasets import dataset_fingerprint, read_records, select_records
from voxbench.tasks.spec import TaskSpec

datasets = pytest.importorskip("datasets")


def _wav(seconds: float, rate: int = 16000) -> bytes:
    buffer = io.BytesIO()
    t = np.arange(int(rate * seconds)) / rate
    sf.write(buffer, (0.1 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), rate, format="WAV")
    return buffer.getvalue()


def _dataset() -> object:
    """A dataset with an ``Audio`` column, as the Hub's speech datasets have.

    Built as the Arrow struct ``Audio`` stores (bytes, path) and cast: ``datasets`` 4 wants
    torchcodec to *encode* audio, which neither we nor the reader need.
    """
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "audio": {"bytes": datasets.Value("binary"), "path": datasets.Value("string")},
            "sentence": datasets.Value("string"),
            "locale": datasets.Value("string"),
        }
    )
    return datasets.Dataset.from_dict(
        {
            "id": ["x1", "x2", "x3"],
            "audio": [{"bytes": _wav(s), "path": None} for s in (0.5, 1.0, 2.0)],
            "sentence": ["un", "deux", "trois"],
            "locale": ["fr", "fr", "en"],
        },
        features=features,
    ).cast_column("audio", datasets.Audio(decode=False))


def _spec(path: Path, **dataset: object) -> TaskSpec:
    return TaskSpec(
        dataset={"path": str(path), **dataset},
        columns={"reference": "sentence", "language": "locale"},
        metrics=["wer"],
    )


def test_save_to_disk_dataset_and_split(tmp_path: Path) -> None:
    datasets.DatasetDict({"test": _dataset(), "train": _dataset().select([0])}).save_to_disk(
        str(tmp_path / "dd")
    )
    records = list(read_records(_spec(tmp_path / "dd", format="hf_disk", split="test")))
    assert [(r.id, r.reference, r.language) for r in records] == [
        ("x1", "un", "fr"),
        ("x2", "deux", "fr"),
        ("x3", "trois", "en"),
    ]
    assert records[2].load_audio().duration == pytest.approx(2.0)
    assert records[0].audio.name.endswith("dd#0")
    kept = select_records(
        _spec(tmp_path / "dd", format="hf_disk", split="test"), Filters(min_duration_s=0.8), seed=0
    )
    assert [r.id for r in kept] == ["x2", "x3"]
    assert dataset_fingerprint(_spec(tmp_path / "dd", format="hf_disk", split="test")).startswith(
        "datasets:"
    )
    with pytest.raises(ConfigError, match="holds the splits test, train"):
        list(read_records(_spec(tmp_path / "dd", format="hf_disk", split="dev")))


def test_parquet_files(tmp_path: Path) -> None:
    (tmp_path / "pq" / "data").mkdir(parents=True)
    _dataset().to_parquet(str(tmp_path / "pq" / "data" / "test-00000-of-00001.parquet"))
    _dataset().select([0]).to_parquet(
        str(tmp_path / "pq" / "data" / "train-00000-of-00001.parquet")
    )
    records = list(read_records(_spec(tmp_path / "pq", format="parquet", split="test")))
    assert [r.id for r in records] == ["x1", "x2", "x3"]
    assert records[1].load_audio().duration == pytest.approx(1.0)
    assert len(list(read_records(_spec(tmp_path / "pq", format="parquet")))) == 4
    with pytest.raises(ConfigError, match="no column 'clip'"):
        list(
            read_records(
                _spec(tmp_path / "pq", format="parquet", split="test").model_copy(
                    update={"columns": _spec(tmp_path).columns.model_copy(update={"audio": "clip"})}
                )
            )
        )
