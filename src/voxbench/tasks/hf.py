"""Hugging Face datasets: a ``save_to_disk`` folder or parquet files (read offline), or a
Hub dataset (``datasets.load_dataset``: downloaded once into the Hugging Face cache, read
from it after, offline too with ``HF_HUB_OFFLINE=1``).

Needs the optional ``datasets`` package (``pip install 'voxbench[hf]'``). The audio column is
cast to ``Audio(decode=False)``: rows yield the encoded bytes (no torch/torchcodec needed),
and only when a worker asks for that record's clip — the Arrow files are memory-mapped, so a
100-hour dataset is never decoded or held in memory up front.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import soundfile as sf

from voxbench.audio.wav import Audio
from voxbench.core.errors import ConfigError, PrerequisiteError
from voxbench.tasks.prepare import decode_encoded
from voxbench.tasks.spec import DatasetRef


def _datasets() -> Any:
    try:
        import datasets
    except ImportError as exc:
        raise PrerequisiteError(
            "reading Hugging Face datasets needs the datasets package: pip install 'voxbench[hf]'"
        ) from exc
    return datasets


def open_dataset(folder: Path, kind: str, split: str | None) -> Any:
    """The ``datasets.Dataset`` in ``folder``: ``hf_disk`` (save_to_disk) or ``parquet`` files."""
    datasets = _datasets()
    if kind == "hf_disk":
        return _one_split(datasets.load_from_disk(str(folder)), split, str(folder), "dataset.split")
    files = sorted(folder.rglob(f"{split}*.parquet" if split else "*.parquet"))
    if not files:
        raise ConfigError(
            f"no {split + '*' if split else ''}.parquet files under {folder}", field="dataset.path"
        )
    return datasets.Dataset.from_parquet([str(f) for f in files])


def _one_split(found: Any, split: str | None, what: str, field: str) -> Any:
    """The split asked for of a ``DatasetDict`` (or its only split); a ``Dataset`` as it is."""
    datasets = _datasets()
    if not isinstance(found, datasets.DatasetDict):
        return found
    if split is None and len(found) == 1:
        return next(iter(found.values()))
    if split not in found:
        raise ConfigError(
            f"{what} holds the splits {', '.join(found)}", field=field, expected="one of them"
        )
    return found[split]


@functools.lru_cache(maxsize=16)
def load_hub_dataset(ref: DatasetRef) -> Any:
    """The ``datasets.Dataset`` a ``hub:`` reference names (once per process).

    ``datasets`` downloads it into its cache when the Hub is reachable and reads the cache
    when it is not (or with ``HF_HUB_OFFLINE=1``); a dataset neither reachable nor cached is
    a ``ConfigError`` naming it.
    """
    datasets = _datasets()
    assert ref.hub is not None
    what = ref.hub + "".join(
        f" ({k} {v})" for k, v in (("config", ref.config), ("revision", ref.revision)) if v
    )
    try:
        found = datasets.load_dataset(ref.hub, ref.config, split=ref.split, revision=ref.revision)
    except ValueError as exc:  # a config or split it does not have, several cached configs
        raise ConfigError(
            f"Hugging Face dataset {what} cannot be loaded: {exc}", field="dataset.hub"
        ) from exc
    except (ConnectionError, FileNotFoundError) as exc:
        hint = (
            "it is not in the Hugging Face cache and the Hub is off (HF_HUB_OFFLINE): "
            "load it once online"
            if datasets.config.HF_HUB_OFFLINE
            else "check its name, your network, and HF_TOKEN for a gated dataset"
        )
        raise ConfigError(
            f"Hugging Face dataset {what} cannot be loaded: {hint} ({exc})", field="dataset.hub"
        ) from exc
    return _one_split(found, ref.split, f"Hugging Face dataset {what}", "dataset.split")


@dataclass(frozen=True, eq=False)
class DatasetAudio:
    """One row's clip in an Arrow dataset (encoded bytes, or a path the row names)."""

    dataset: Any
    """The dataset with its audio column cast to ``Audio(decode=False)``."""
    index: int
    column: str
    name: str

    def _encoded(self) -> tuple[bytes | None, str | None]:
        value = self.dataset[self.index][self.column] or {}
        return value.get("bytes"), value.get("path")

    def encoded(self) -> tuple[bytes | None, str | None, str]:
        return (*self._encoded(), self.name)

    def load(self) -> Audio:
        return decode_encoded(*self.encoded())

    def duration(self) -> float:
        data, path = self._encoded()
        if data is None:
            return float(sf.info(str(path)).duration)
        return float(sf.info(io.BytesIO(data)).duration)


def dataset_rows(
    dataset: Any, audio_column: str, label: str
) -> Iterator[tuple[dict[str, Any], DatasetAudio]]:
    """Each row's other columns (the audio column left out: no audio is read) and its clip."""
    if audio_column not in dataset.column_names:
        raise ConfigError(
            f"{label} has no column {audio_column!r} (it has {', '.join(dataset.column_names)})",
            field="columns.audio",
        )
    encoded = dataset.cast_column(audio_column, _datasets().Audio(decode=False))
    metadata = dataset.remove_columns([audio_column])
    for index, row in enumerate(metadata):
        yield row, DatasetAudio(encoded, index, audio_column, f"{label}#{index}")


def fingerprint(dataset: Any) -> str:
    """The dataset's content fingerprint as ``datasets`` computes it."""
    return str(dataset._fingerprint)
