"""Dataset readers: a manifest (JSONL or CSV) beside audio files, or a Hugging Face dataset on
disk (``tasks.datasets.hf``), read lazily.

A ``Record`` carries its columns and where its clip is; the audio is decoded
only when ``load_audio`` is called (by an engine worker, just before the request), so a
100-hour dataset never sits in memory. Durations come from file headers (no decoding) and
only when a duration filter asks for them.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, Protocol

import soundfile as sf

from voxbench.audio.wav import Audio, concatenate, read_wav
from voxbench.core.errors import ConfigError
from voxbench.metrics.answers import reference_label
from voxbench.tasks.config import Filters
from voxbench.tasks.datasets.suite import ensure_builtin_dataset
from voxbench.tasks.spec import TaskSpec, Turns

log = logging.getLogger(__name__)


class AudioSource(Protocol):
    """Where a record's clip is, read only on demand.

    Most sources also have ``encoded()`` (``EncodedAudioSource``); one without it (a clip
    made on load: ``tasks.perturb.PerturbedAudio``) is decoded with ``load()`` instead: the
    engine looks the method up with ``getattr``."""

    @property
    def name(self) -> str:
        """What tables and ``records.jsonl`` show (a path, or ``dataset#row``)."""
        ...

    def load(self) -> Audio:
        """Decode the clip."""
        ...

    def duration(self) -> float:
        """Seconds of audio, as cheaply as the source allows."""
        ...


class EncodedAudioSource(AudioSource, Protocol):
    """An ``AudioSource`` whose clip can be handed over undecoded."""

    def encoded(self) -> tuple[bytes | None, str | None, str]:
        """The encoded clip (bytes, or a file path without them) and its name, undecoded:
        what a worker process decodes with ``tasks.engine.prepare.decode_encoded``."""
        ...


@dataclass(frozen=True)
class FileAudio:
    """A clip in a file beside the manifest."""

    path: str
    """The file, as ``str(folder / name)`` spells it (``beside``)."""

    @property
    def name(self) -> str:
        return self.path

    def load(self) -> Audio:
        return read_wav(self.path)

    def encoded(self) -> tuple[bytes | None, str | None, str]:
        """What a worker process needs to decode it: (no bytes, the path, the name)."""
        return None, self.path, self.path

    def duration(self) -> float:
        return float(sf.info(self.path).duration)


def beside(folder: str, name: str) -> str:
    """``str(Path(folder) / name)``, without making the Path when ``name`` is a plain
    relative path (pathlib's parsing was a third of listing a manifest): any name pathlib
    would normalise (absolute, ``//``, a ``.`` segment, a trailing ``/``) goes through it."""
    plain = (
        name
        and folder not in ("", ".")
        and not folder.endswith("/")
        and name[0] != "/"
        and name[-1] != "/"
        and "//" not in name
        and "/./" not in f"/{name}/"
    )
    return f"{folder}/{name}" if plain else str(Path(folder) / name)


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
    """The manifest's rows; a manifest that is not UTF-8 or holds no record is an error
    naming the file."""
    count = 0
    try:
        for row in _decoded_rows(manifest):
            count += 1
            yield row
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text (byte {exc.start}: {exc.reason})",
            file=manifest,
            expected="a UTF-8 manifest (re-save it as UTF-8)",
        ) from exc
    if count == 0:
        raise ConfigError(
            "the manifest holds no records",
            file=manifest,
            expected="one record per line (JSONL) or per row after the header (CSV)",
        )


def _decoded_rows(manifest: Path) -> Iterator[dict[str, Any]]:
    if not manifest.is_file():
        raise ConfigError(f"manifest {manifest} does not exist", field="dataset.manifest")
    if manifest.suffix == ".csv":
        # utf-8-sig: a byte-order mark (as spreadsheet programs write) is not part of the
        # first column's name.
        with manifest.open(encoding="utf-8-sig", newline="") as f:
            yield from csv.DictReader(f)
        return
    if manifest.suffix != ".jsonl":
        raise ConfigError(
            f"manifest {manifest.name} is neither .jsonl nor .csv", field="dataset.manifest"
        )
    with manifest.open(encoding="utf-8-sig") as f:
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
    spec: TaskSpec, folder: Path | None, local_copy: Path | None, file: Path | None
) -> Iterator[tuple[dict[str, Any], AudioSource | None]]:
    """Each row of the dataset with its audio source (None: the audio column names a file)."""
    from voxbench.tasks.datasets.arrow import arrow_rows, open_local
    from voxbench.tasks.datasets.hf import dataset_rows, open_dataset

    if folder is None:
        assert spec.dataset.hub is not None
        label = str(local_copy) if local_copy is not None else spec.dataset.hub
        yield from dataset_rows(hub_dataset(spec, local_copy), spec.columns.audio, label, file)
        return
    if spec.dataset.format == "manifest":
        for row in _rows(folder / spec.dataset.manifest):
            yield row, None
        return
    fast = open_local(folder, spec.dataset.format, spec.dataset.split)
    if fast is not None and fast.plain(spec.columns.audio):  # no ``datasets`` import
        yield from arrow_rows(fast, spec.columns.audio, str(folder), file)
        return
    dataset = open_dataset(folder, spec.dataset.format, spec.dataset.split)
    yield from dataset_rows(dataset, spec.columns.audio, str(folder), file)


def hub_dataset(spec: TaskSpec, local_copy: Path | None = None) -> Any:
    """The ``datasets.Dataset`` of a Hub task: from its local copy when given, else the Hub."""
    from voxbench.tasks.datasets.hf import load_hub_dataset, open_local_copy

    if local_copy is not None:
        return open_local_copy(local_copy, spec.dataset)
    return load_hub_dataset(spec.dataset)


def _references_dataset(spec: TaskSpec, local_copy: Path | None) -> Any:
    """The config of a Hub dataset that ``references_from`` names (local copy or Hub)."""
    from voxbench.tasks.datasets.hf import load_hub_dataset, open_local_copy

    joined = spec.dataset.references_from
    assert joined is not None
    if local_copy is not None:
        return open_local_copy(local_copy, spec.dataset, config=joined.config)
    other = spec.dataset.model_copy(update={"config": joined.config, "references_from": None})
    return load_hub_dataset(other)


def joined_references(
    spec: TaskSpec, local_copy: Path | None = None, file: Path | None = None
) -> dict[str, str]:
    """``references_from``: the ``key`` value → the reference, from the other config (the
    first row of a value wins: FLEURS has several recordings of one sentence)."""
    joined = spec.dataset.references_from
    assert joined is not None
    dataset = _references_dataset(spec, local_copy)
    missing = [c for c in (joined.key, joined.column) if c not in dataset.column_names]
    if missing:
        raise ConfigError(
            f"config {joined.config} of {spec.dataset.hub} has no column {', '.join(missing)}; "
            f"it has {', '.join(dataset.column_names)}",
            file=file,
            field="dataset.references_from",
        )
    out: dict[str, str] = {}
    for row in dataset.select_columns([joined.key, joined.column]):
        out.setdefault(str(row[joined.key]), str(row[joined.column]))
    return out


def read_records(
    spec: TaskSpec, *, file: Path | None = None, local_copy: Path | None = None
) -> Iterator[Record]:
    """Every record of a task's dataset, in dataset order (audio not decoded).

    ``local_copy``: a folder holding a copy of a Hub task's dataset (``save_to_disk`` or the
    Hub's parquet layout), read instead of the Hub with the task's config, split and columns.
    """
    folder = dataset_folder(spec) if spec.dataset.hub is None else None
    if folder is None and local_copy is not None:
        where: Path | str = f"local copy {local_copy} of {spec.dataset.hub}"
    elif folder is None:
        where = f"hub dataset {spec.dataset.hub}"
    elif spec.dataset.format == "manifest":
        where = folder / spec.dataset.manifest
    else:
        where = folder
    cols = spec.columns
    joined = spec.dataset.references_from
    references = joined_references(spec, local_copy, file) if joined is not None else None
    if spec.turns is not None and (folder is None or spec.dataset.format != "manifest"):
        raise ConfigError(
            "a multi-turn task reads a manifest beside its audio files",
            file=file,
            field="dataset",
            expected="dataset: {path: ...} or {builtin: ...} with a manifest",
        )
    seen: dict[str, int] = {}
    from_manifest = folder is not None and spec.dataset.format == "manifest"
    folder_text = str(folder)  # a manifest's folder (the audio column names files in it)
    # What every row must hold, worked out once: per row, one C-level test each (a row that
    # fails one is then described in full).
    needed = (
        {"reference": cols.reference} if joined is None else {"references_from.key": joined.key}
    )
    if cols.id is not None:
        needed["id"] = cols.id
    needed_columns = set(needed.values())
    non_null = [
        (key, c)
        for key, c in (("id", cols.id), ("reference", None if joined else cols.reference))
        if c is not None
    ]
    values_of = itemgetter(*(c for _, c in non_null)) if non_null else None
    for number, (row, source) in enumerate(_source_rows(spec, folder, local_copy, file), 1):
        named_audio = source is None and spec.turns is None  # a multi-turn record's: in turns
        if not row.keys() >= needed_columns or (named_audio and cols.audio not in row):
            wanted = {**needed, **({"audio": cols.audio} if named_audio else {})}
            missing = {key: c for key, c in wanted.items() if c not in row}
            named = ", ".join(
                f"{c} ({'dataset.' + key if '.' in key else 'columns.' + key})"
                for key, c in missing.items()
            )
            raise ConfigError(
                f"record {number} of {where} has no column {named}; it has "
                + ", ".join(sorted(row)),
                file=file or where,
                field="columns",
                expected="the dataset's own column names under columns:",
            )
        language = row.get(cols.language) if cols.language else None
        values = values_of(row) if values_of is not None else ()
        null = None in values if len(non_null) > 1 else values is None
        if null or (named_audio and row[cols.audio] in (None, "")):
            empty = [f"{c} (columns.{key})" for key, c in non_null if row[c] is None]
            if named_audio and row[cols.audio] in (None, ""):
                empty.append(f"{cols.audio} (columns.audio)")
            # A null would otherwise be scored as the word "null" (or a file named "None").
            raise ConfigError(
                f"record {number} of {where}: {', '.join(empty)} is empty (null)",
                file=file or where,
                field="columns",
                expected="a value in every record (remove the record, or give it one)",
            )
        if references is not None:
            assert joined is not None
            if str(row[joined.key]) not in references:
                continue  # no reference for it in the other config
            reference = references[str(row[joined.key])]
        else:
            reference = row[cols.reference]
        if not isinstance(reference, str):
            reference = json.dumps(reference, ensure_ascii=False)
        turns: tuple[Turn, ...] = ()
        if spec.turns is not None:
            turns = _turns(spec.turns, row, folder, where, number)  # type: ignore[arg-type]
            audio: AudioSource = TurnAudio(tuple(t.audio for t in turns if t.audio is not None))
        else:
            audio = source or FileAudio(beside(folder_text, str(row[cols.audio])))
        record_id = str(row[cols.id]) if cols.id is not None else str(number - 1)
        if record_id in seen:
            # Both would be answered, but a record's score is keyed by its id: one would count.
            if from_manifest:
                raise ConfigError(
                    f"records {seen[record_id]} and {number} of {where} share the id {record_id!r}",
                    file=file or where,
                    field=f"columns.id ({cols.id})",
                    expected="a unique id per record (or columns: {id: null} to number them)",
                )
            # A dataset the user does not write (several splits, several recordings of one
            # sentence): every record is kept and scored, the later ones as ``id#2``, ``id#3``.
            copies = 2
            while f"{record_id}#{copies}" in seen:
                copies += 1
            log.warning(
                "%s: records %d and %d share the id %r; the later one is %r",
                where, seen[record_id], number, record_id, f"{record_id}#{copies}",
            )  # fmt: skip
            record_id = f"{record_id}#{copies}"
        seen[record_id] = number
        yield Record(
            id=record_id,
            audio=audio,
            reference=_label_reference(spec, reference, record_id, where, file),
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
                FileAudio(beside(str(folder), str(audio[i]))) if audio[i] else None,
                str(text[i]) if text[i] else None,
                None if replies[i] is None else str(replies[i]),
            )
        )
    return tuple(turns)


def _label_reference(
    spec: TaskSpec, reference: str, record_id: str, where: Path | str, file: Path | None
) -> str:
    """A label task's reference as its label (``label_map``, ``reference_label``)."""
    if spec.answer != "label" or (not spec.label_map and spec.reference_label == "exact"):
        return reference
    mentioned = spec.reference_label == "mentioned"
    label = reference_label(reference, spec.labels, spec.label_map, mentioned=mentioned)
    if label is None:
        raise ConfigError(
            f"record {record_id} of {where}: the reference {reference!r} names none of the labels",
            file=file or where,
            field="labels",
            expected=f"one of {', '.join(spec.labels)} (or a label_map spelling) in column "
            f"{spec.columns.reference!r}: extend labels or label_map",
        )
    return label


def dataset_fingerprint(spec: TaskSpec, local_copy: Path | None = None) -> str:
    """What identifies the dataset's content: the manifest's SHA-256, ``datasets``' fingerprint
    of a Hub dataset, or a local one's (``arrow.local_fingerprint``)."""
    from voxbench.tasks.datasets.arrow import local_fingerprint
    from voxbench.tasks.datasets.hf import fingerprint

    if spec.dataset.hub is not None:
        found = "datasets:" + fingerprint(hub_dataset(spec, local_copy))
        if spec.dataset.references_from is not None:
            found += "+" + fingerprint(_references_dataset(spec, local_copy))
        return found
    folder = dataset_folder(spec)
    if spec.dataset.format == "manifest":
        return "sha256:" + hashlib.sha256((folder / spec.dataset.manifest).read_bytes()).hexdigest()
    return local_fingerprint(folder, spec.dataset.format, spec.dataset.split)


def select_records(
    spec: TaskSpec,
    filters: Filters,
    *,
    seed: int,
    task: str = "",
    local_copy: Path | None = None,
    file: Path | None = None,
) -> list[Record]:
    """The records ``filters`` keep: column and language equality, duration, then a seeded sample.

    The sample is drawn with ``random.Random(f"{seed}:{task}")`` so that every model sees the
    same records and a different seed gives a different draw; kept records stay in order.
    """
    kept: list[Record] = []
    languages = set(filters.language or [])
    for record in read_records(spec, file=file, local_copy=local_copy):
        if languages and record.language not in languages:
            continue
        if filters.where and any(
            str(record.columns.get(k)) != str(v) for k, v in filters.where.items()
        ):
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
