"""Dataset readers: a manifest (JSONL or CSV) beside audio files, or a Hugging Face dataset on
disk (``tasks.hf``), read lazily.

A ``Record`` carries its columns and where its clip is; the audio is decoded
only when ``load_audio`` is called (by an engine worker, just before the request), so a
100-hour dataset never sits in memory. Durations come from file headers (no decoding) and
only when a duration filter asks for them.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import soundfile as sf

from voxbench.audio.wav import Audio, concatenate, read_wav
from voxbench.core.errors import ConfigError
from voxbench.tasks.config import Filters
from voxbench.tasks.spec import TaskSpec, Turns
from voxbench.tasks.suite import ensure_builtin_dataset


class AudioSource(Protocol):
    """Where a record's clip is, read only on demand."""

    name: str
    """What tables and ``records.jsonl`` show (a path, or ``dataset#row``)."""

    def load(self) -> Audio:
        """Decode the clip."""
        ...

    def duration(self) -> float:
        """Seconds of audio, as cheaply as the source allows."""
        ...

    def encoded(self) -> tuple[bytes | None, str | None, str]:
        """The encoded clip (bytes, or a file path without them) and its name, undecoded:
        what a worker process decodes with ``tasks.prepare.decode_encoded``."""
        ...


@dataclass(frozen=True)
class FileAudio:
    """A clip in a file beside the manifest."""

    path: Path

    @property
    def name(self) -> str:
        return str(self.path)

    def load(self) -> Audio:
        return read_wav(self.path)

    def encoded(self) -> tuple[bytes | None, str | None, str]:
        """What a worker process needs to decode it: (no bytes, the path, the name)."""
        return None, str(self.path), self.name

    def duration(self) -> float:
        return float(sf.info(str(self.path)).duration)


@dataclass(frozen=True)
class TurnAudio:
    """The clips of a multi-turn record's user turns (each sent in its own turn)."""

    clips: tuple[AudioSource, ...]

    @property
    def name(self) -> str:
        return " + ".join(c.name for c in self.clips)

    def load(self) -> Audio:
        """Every turn's clip, one after the other (at the first one's rate)."""
        parts = [c.load().mono() for c in self.clips]
        return concatenate([p.resampled(parts[0].sample_rate) for p in parts])

    def duration(self) -> float:
        return sum(c.duration() for c in self.clips)

    def encoded(self) -> tuple[bytes | None, str | None, str]:
        raise TypeError("a multi-turn record's clips are prepared one by one (Record.turns)")


@dataclass(frozen=True)
class Turn:
    """One user turn of a multi-turn record, and the reference reply to it."""

    audio: AudioSource | None
    text: str | None
    reply: str | None


@dataclass(frozen=True)
class Record:
    """One evaluation item: ids, reference, where its audio is, and every manifest column."""

    id: str
    audio: AudioSource
    reference: str
    language: str
    columns: dict[str, Any] = field(default_factory=dict)
    turns: tuple[Turn, ...] = ()
    """A multi-turn record's user turns (``audio`` is then their ``TurnAudio``)."""

    def load_audio(self) -> Audio:
        """Decode the clip (called by the worker that sends it)."""
        return self.audio.load()

    def duration(self) -> float:
        """Seconds of audio (from the file header, not by decoding)."""
        return self.audio.duration()


def dataset_folder(spec: TaskSpec) -> Path:
    """The folder of a task's dataset (synthesizing a built-in one on first use)."""
    if spec.dataset.builtin is not None:
        return ensure_builtin_dataset(spec.dataset.builtin)
    assert spec.dataset.path is not None
    folder = Path(spec.dataset.path)
    if not folder.is_dir():
        raise ConfigError(f"dataset folder {folder} does not exist", field="dataset.path")
    return folder


def _rows(manifest: Path) -> Iterator[dict[str, Any]]:
    if not manifest.is_file():
        raise ConfigError(f"manifest {manifest} does not exist", field="dataset.manifest")
    if manifest.suffix == ".csv":
        with manifest.open(encoding="utf-8", newline="") as f:
            yield from csv.DictReader(f)
        return
    if manifest.suffix != ".jsonl":
        raise ConfigError(
            f"manifest {manifest.name} is neither .jsonl nor .csv", field="dataset.manifest"
        )
    with manifest.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"line {number}: not valid JSON ({exc.msg})", file=manifest
                ) from exc
            if not isinstance(row, dict):
                raise ConfigError(f"line {number}: expected a JSON object", file=manifest)
            yield row


def _source_rows(
    spec: TaskSpec, folder: Path | None
) -> Iterator[tuple[dict[str, Any], AudioSource | None]]:
    """Each row of the dataset with its audio source (None: the audio column names a file)."""
    from voxbench.tasks.hf import dataset_rows, load_hub_dataset, open_dataset

    if folder is None:
        assert spec.dataset.hub is not None
        yield from dataset_rows(
            load_hub_dataset(spec.dataset), spec.columns.audio, spec.dataset.hub
        )
        return
    if spec.dataset.format == "manifest":
        for row in _rows(folder / spec.dataset.manifest):
            yield row, None
        return
    dataset = open_dataset(folder, spec.dataset.format, spec.dataset.split)
    yield from dataset_rows(dataset, spec.columns.audio, str(folder))


def read_records(spec: TaskSpec, *, file: Path | None = None) -> Iterator[Record]:
    """Every record of a task's dataset, in dataset order (audio not decoded)."""
    folder = dataset_folder(spec) if spec.dataset.hub is None else None
    if folder is None:
        where: Path | str = f"hub dataset {spec.dataset.hub}"
    elif spec.dataset.format == "manifest":
        where = folder / spec.dataset.manifest
    else:
        where = folder
    cols = spec.columns
    if spec.turns is not None and (folder is None or spec.dataset.format != "manifest"):
        raise ConfigError(
            "a multi-turn task reads a manifest beside its audio files",
            file=file,
            field="dataset",
            expected="dataset: {path: ...} or {builtin: ...} with a manifest",
        )
    for number, (row, source) in enumerate(_source_rows(spec, folder), 1):
        if spec.turns is not None:
            assert folder is not None
            needed: tuple[str, ...] = (cols.id, cols.reference)
        elif source is not None:
            needed = (cols.id, cols.reference)
        else:
            needed = (cols.id, cols.audio, cols.reference)
        missing = [c for c in needed if c not in row]
        if missing:
            raise ConfigError(
                f"record {number} has no column {', '.join(missing)}",
                file=where,
                expected=f"the columns named in {file or 'the task'} (columns: ...)",
            )
        language = row.get(cols.language) if cols.language else None
        reference = row[cols.reference]
        if not isinstance(reference, str):
            reference = json.dumps(reference, ensure_ascii=False)
        turns: tuple[Turn, ...] = ()
        if spec.turns is not None:
            turns = _turns(spec.turns, row, folder, where, number)  # type: ignore[arg-type]
            audio: AudioSource = TurnAudio(tuple(t.audio for t in turns if t.audio is not None))
        else:
            audio = source or FileAudio(folder / str(row[cols.audio]))  # type: ignore[operator]
        yield Record(
            id=str(row[cols.id]),
            audio=audio,
            reference=reference,
            language=str(language or spec.language),
            columns=row,
            turns=turns,
        )


def _turns(
    spec: Turns, row: dict[str, Any], folder: Path, where: Path | str, number: int
) -> tuple[Turn, ...]:
    """A multi-turn record's turns from its list columns (``Turns``)."""
    lists: dict[str, list[Any]] = {}
    for key, column in (("audio", spec.audio), ("text", spec.text), ("replies", spec.replies)):
        if column is None:
            continue
        value = row.get(column)
        if not isinstance(value, list) or not value:
            raise ConfigError(
                f"record {number}: column {column} (turns.{key}) is not a list of turns",
                file=where,
                expected="a JSON list with one entry per user turn",
            )
        lists[key] = value
    sizes = {key: len(value) for key, value in lists.items()}
    if len(set(sizes.values())) > 1:
        raise ConfigError(f"record {number}: the turn lists differ in length ({sizes})", file=where)
    count = next(iter(sizes.values()))
    audio = lists.get("audio", [None] * count)
    text = lists.get("text", [None] * count)
    replies = lists.get("replies", [None] * count)
    if spec.history == "reference" and any(r is None for r in replies[:-1]):
        raise ConfigError(
            f"record {number}: history: reference needs a reply to every turn but the last",
            file=where,
            field=f"column {spec.replies}",
        )
    turns = []
    for i in range(count):
        if not audio[i] and not text[i]:
            raise ConfigError(
                f"record {number}: turn {i + 1} has neither audio nor text", file=where
            )
        turns.append(
            Turn(
                FileAudio(folder / str(audio[i])) if audio[i] else None,
                str(text[i]) if text[i] else None,
                None if replies[i] is None else str(replies[i]),
            )
        )
    return tuple(turns)


def dataset_fingerprint(spec: TaskSpec) -> str:
    """What identifies the dataset's content: the manifest's SHA-256, or ``datasets``' fingerprint."""
    from voxbench.tasks.hf import fingerprint, load_hub_dataset, open_dataset

    if spec.dataset.hub is not None:
        return "datasets:" + fingerprint(load_hub_dataset(spec.dataset))
    folder = dataset_folder(spec)
    if spec.dataset.format == "manifest":
        return "sha256:" + hashlib.sha256((folder / spec.dataset.manifest).read_bytes()).hexdigest()
    return "datasets:" + fingerprint(open_dataset(folder, spec.dataset.format, spec.dataset.split))


def select_records(spec: TaskSpec, filters: Filters, *, seed: int, task: str = "") -> list[Record]:
    """The records ``filters`` keep: column and language equality, duration, then a seeded sample.

    The sample is drawn with ``random.Random(f"{seed}:{task}")`` so that every model sees the
    same records and a different seed gives a different draw; kept records stay in order.
    """
    kept: list[Record] = []
    languages = set(filters.language or [])
    for record in read_records(spec):
        if languages and record.language not in languages:
            continue
        if any(str(record.columns.get(k)) != str(v) for k, v in filters.where.items()):
            continue
        if filters.min_duration_s is not None or filters.max_duration_s is not None:
            seconds = record.duration()
            if filters.min_duration_s is not None and seconds < filters.min_duration_s:
                continue
            if filters.max_duration_s is not None and seconds > filters.max_duration_s:
                continue
        kept.append(record)
    if filters.num_samples is not None and filters.num_samples < len(kept):
        chosen = sorted(
            random.Random(f"{seed}:{task}").sample(range(len(kept)), filters.num_samples)
        )
        kept = [kept[i] for i in chosen]
    return kept
