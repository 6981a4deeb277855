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
from voxbench.tasks.engine.prepare import decode_encoded
from voxbench.tasks.spec import DatasetRef


def _datasets() -> Any:
    try:
        import datasets
    except ImportError as exc:
        raise PrerequisiteError(
            "reading Hugging Face datasets needs the datasets package: pip install 'voxbench[hf]'"
        ) from exc
    return datasets


SAVED_MARKERS = ("dataset_dict.json", "state.json", "dataset_info.json")
"""Files ``save_to_disk`` writes: a ``DatasetDict`` (the first) or one ``Dataset`` (the others)."""


def open_dataset(folder: Path, kind: str, split: str | None) -> Any:
    """The ``datasets.Dataset`` in ``folder``: ``hf_disk`` (save_to_disk) or ``parquet`` files."""
    datasets = _datasets()
    if kind == "hf_disk":
        return _one_split(datasets.load_from_disk(str(folder)), split, str(folder), "dataset.split")
    files = parquet_files(folder, split)
    if not files:
        raise ConfigError(
            f"no {split + '*' if split else ''}.parquet files under {folder}", field="dataset.path"
        )
    return _from_parquet(files)


def parquet_files(folder: Path, split: str | None, config: str | None = None) -> list[Path]:
    """The parquet files of ``split`` (and ``config``) in a Hub-layout folder.

    The Hub stores a split as ``[<config>/]<split>-00000-of-00001.parquet`` (often under
    ``data/``) or, converted, as ``<config>/<split>/0000.parquet``: a file is of the split when
    its name starts with it or a folder on its path is named after it, and of the config when
    a folder on its path is named after it (every file, when no folder is).
    """
    files = sorted(folder.rglob("*.parquet"))
    if config is not None:
        mine = [f for f in files if config in f.relative_to(folder).parts[:-1]]
        files = mine or files
    if split is None:
        return files
    return [
        f for f in files if f.name.startswith(split) or split in f.relative_to(folder).parts[:-1]
    ]


def is_saved_dataset(folder: Path) -> bool:
    """Whether ``folder`` holds a ``save_to_disk`` dataset (or dataset dict)."""
    return any((folder / marker).is_file() for marker in SAVED_MARKERS)


def local_copy_format(folder: Path, config: str | None = None) -> str:
    """How a local copy of a Hub dataset is stored: ``hf_disk`` (``save_to_disk``, the
    folder itself or its ``<config>`` subfolder) or ``parquet`` (the Hub's file layout)."""
    if is_saved_dataset(folder) or (config is not None and is_saved_dataset(folder / config)):
        return "hf_disk"
    if next(folder.rglob("*.parquet"), None) is not None:
        return "parquet"
    configs = sorted(p.name for p in folder.iterdir() if p.is_dir() and is_saved_dataset(p))
    if configs:
        raise ConfigError(
            f"local copy {folder} holds save_to_disk copies of {', '.join(configs)}, "
            f"not of config {config}",
            field="dataset_dirs",
            expected=f"a {config}/ folder saved with save_to_disk",
        )
    raise ConfigError(
        f"local copy {folder} is neither a save_to_disk folder ({', '.join(SAVED_MARKERS)}) "
        "nor a folder of parquet files",
        field="dataset_dirs",
    )


def open_local_copy(folder: Path, ref: DatasetRef, *, config: str | None = None) -> Any:
    """The ``datasets.Dataset`` a Hub reference names, read from a local copy of it.

    ``config`` (default: the reference's own) picks ``<folder>/<config>`` when the folder holds
    one ``save_to_disk`` copy per config, or the parquet files under a folder of that name; a
    folder that is itself one ``save_to_disk`` copy is taken as the config asked for. The
    reference's split picks the split.
    """
    config = config if config is not None else ref.config
    if local_copy_format(folder, config) == "hf_disk":
        saved = folder / config if config and is_saved_dataset(folder / config) else folder
        if saved == folder and config is not None and config != ref.config:
            raise ConfigError(
                f"local copy {folder} has no {config} subfolder saved with save_to_disk",
                field="dataset_dirs",
            )
        found = _datasets().load_from_disk(str(saved))
        return _one_split(found, ref.split, f"local copy {saved}", "dataset.split")
    files = parquet_files(folder, ref.split, config)
    if config != ref.config and not any(config in f.relative_to(folder).parts for f in files):
        raise ConfigError(
            f"local copy {folder} has no parquet files for config {config}",
            field="dataset_dirs",
        )
    if not files:
        raise ConfigError(
            f"local copy {folder} has no parquet files of split {ref.split}",
            field="dataset_dirs",
            expected=f"files named {ref.split}-*.parquet or under a {ref.split}/ folder",
        )
    return _from_parquet(files)


def _from_parquet(files: list[Path]) -> Any:
    """A ``Dataset`` of local parquet files, without the progress bar ``datasets`` draws while
    it builds them, which names every split "train" (a test split read said "Generating train
    split"); the split is not passed instead, since it would change the fingerprint."""
    datasets = _datasets()
    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        return datasets.Dataset.from_parquet([str(f) for f in files])
    finally:
        if shown:
            datasets.enable_progress_bars()


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
    dataset: Any, audio_column: str, label: str, task_file: Path | None = None
) -> Iterator[tuple[dict[str, Any], DatasetAudio]]:
    """Each row's other columns (the audio column left out: no audio is read) and its clip."""
    if audio_column not in dataset.column_names:
        raise ConfigError(
            f"{label} has no column {audio_column!r} (it has {', '.join(dataset.column_names)})",
            file=task_file,
            field="columns.audio",
        )
    encoded = dataset.cast_column(audio_column, _datasets().Audio(decode=False))
    metadata = dataset.remove_columns([audio_column])
    for index, row in enumerate(metadata):
        yield row, DatasetAudio(encoded, index, audio_column, f"{label}#{index}")


def fingerprint(dataset: Any) -> str:
    """The dataset's content fingerprint as ``datasets`` computes it."""
    return str(dataset._fingerprint)
