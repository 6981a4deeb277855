"""Typed models of the Full-Duplex-Bench annotation and ASR files, and strict loaders.

Field names follow the public corpus: ``pause.json`` / ``turn_taking.json`` are lists of
``{"text", "timestamp": [s, e]}``, ``interrupt.json`` a list of
``{"context", "interrupt", "timestamp": [start, end]}``, ``transcription.json`` a list of
``{"speaker", "item": [{"text", "timestamp"}]}``, a v1.5 ``metadata.json`` an object
``{"context_text", "current_turn_text", "timestamps": [ov_start, ov_end]}``, and an ASR
file (``output.json``) ``{"text", "chunks": [{"text", "timestamp": [s, e]}]}``. Unknown
extra keys are tolerated (the corpus grows fields); wrong types are not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from pydantic_core import ErrorDetails

from voxbench.core.errors import ConfigError

PAUSE_FILE = "pause.json"
TURN_TAKING_FILE = "turn_taking.json"
INTERRUPT_FILE = "interrupt.json"
TRANSCRIPTION_FILE = "transcription.json"
METADATA_FILE = "metadata.json"
GT_DISTRIBUTION_FILE = "icc_gt_distribution.json"


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class TimedSpan(_Lenient):
    """One annotated span: ``[PAUSE]`` or ``[TURN-TAKING]`` with ``[start, end]`` seconds."""

    text: str = ""
    timestamp: tuple[float, float]

    @model_validator(mode="after")
    def _ordered(self) -> TimedSpan:
        if self.timestamp[1] < self.timestamp[0]:
            raise ValueError("timestamp end is before its start")
        return self

    @property
    def start(self) -> float:
        return self.timestamp[0]

    @property
    def end(self) -> float:
        return self.timestamp[1]


class InterruptSpan(_Lenient):
    """``interrupt.json``: the user's earlier request, the barge-in text, and its span."""

    context: str = ""
    interrupt: str = ""
    timestamp: tuple[float, float]

    @model_validator(mode="after")
    def _ordered(self) -> InterruptSpan:
        if self.timestamp[1] < self.timestamp[0]:
            raise ValueError("timestamp end is before its start")
        return self

    @property
    def start(self) -> float:
        return self.timestamp[0]

    @property
    def end(self) -> float:
        return self.timestamp[1]


class TimedWord(_Lenient):
    """A word with ``[start, end]`` seconds; either bound may be null in ASR output."""

    text: str
    timestamp: tuple[float | None, float | None]

    @property
    def start(self) -> float | None:
        return self.timestamp[0]

    @property
    def end(self) -> float | None:
        return self.timestamp[1]


class SpeakerWords(_Lenient):
    """One speaker's words in ``transcription.json``."""

    speaker: int | str
    item: list[TimedWord] = Field(default_factory=list)


class OverlapMetadata(_Lenient):
    """A v1.5 ``metadata.json``: the conversation so far and the overlap event's span."""

    context_text: str = ""
    current_turn_text: str = ""
    timestamps: tuple[float, float]

    @model_validator(mode="after")
    def _ordered(self) -> OverlapMetadata:
        if self.timestamps[1] < self.timestamps[0]:
            raise ValueError("timestamps end is before their start")
        return self

    @property
    def start(self) -> float:
        return self.timestamps[0]

    @property
    def end(self) -> float:
        return self.timestamps[1]


class AsrTranscript(_Lenient):
    """An ASR file (``output.json``): full text and word chunks on the audio's timeline."""

    text: str = ""
    chunks: list[TimedWord] = Field(default_factory=list)


_T = TypeVar("_T")


def _field_path(error: ErrorDetails) -> str:
    return ".".join(str(p) for p in error.get("loc", ())) or "(top level)"


def load_json_file(path: Path, adapter: TypeAdapter[_T], expected: str) -> _T:
    """Read ``path`` and validate it with ``adapter``; a bad file raises ``ConfigError``."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError("file not found", file=path, expected=expected) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"not readable JSON: {exc}", file=path, expected=expected) from exc
    try:
        return adapter.validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(
            first["msg"], file=path, field=_field_path(first), expected=expected
        ) from exc


_SPANS = TypeAdapter(list[TimedSpan])
_INTERRUPTS = TypeAdapter(list[InterruptSpan])
_SPEAKERS = TypeAdapter(list[SpeakerWords])
_METADATA = TypeAdapter(OverlapMetadata)
_ASR = TypeAdapter(AsrTranscript)
_GT = TypeAdapter(dict[str, list[float]])


def _first(items: list[_T], path: Path, expected: str) -> _T:
    if not items:
        raise ConfigError("empty list", file=path, field="0", expected=expected)
    return items[0]


def load_pause(path: Path) -> TimedSpan:
    """The pause span of ``pause.json`` (its first entry, as the public scripts use)."""
    expected = 'a list like [{"text": "[PAUSE]", "timestamp": [start, end]}]'
    return _first(load_json_file(path, _SPANS, expected), path, expected)


def load_turn_taking(path: Path) -> TimedSpan:
    """The turn-taking span of ``turn_taking.json``; ``start`` is the end of the user's turn."""
    expected = 'a list like [{"text": "[TURN-TAKING]", "timestamp": [turn_end, t1]}]'
    return _first(load_json_file(path, _SPANS, expected), path, expected)


def load_interrupt(path: Path) -> InterruptSpan:
    """The interruption of ``interrupt.json`` (its first entry)."""
    expected = 'a list like [{"context": str, "interrupt": str, "timestamp": [start, end]}]'
    return _first(load_json_file(path, _INTERRUPTS, expected), path, expected)


def load_transcription(path: Path) -> list[SpeakerWords]:
    """The input's word transcript per speaker (``transcription.json``)."""
    return load_json_file(path, _SPEAKERS, 'a list of {"speaker": id, "item": [words]}')


def load_metadata(path: Path) -> OverlapMetadata:
    """A v1.5 ``metadata.json``."""
    expected = '{"context_text": str, "current_turn_text": str, "timestamps": [start, end]}'
    return load_json_file(path, _METADATA, expected)


def load_asr(path: Path) -> AsrTranscript:
    """An ASR file such as ``output.json``."""
    expected = '{"text": str, "chunks": [{"text": str, "timestamp": [start, end]}]}'
    return load_json_file(path, _ASR, expected)


def save_asr(
    path: Path, transcript: AsrTranscript, provenance: dict[str, Any] | None = None
) -> None:
    """Write an ASR file in the corpus format (atomically: a killed write leaves no half file).

    ``provenance`` (which engine made it, from which audio) goes under an extra key that
    readers of the corpus format ignore."""
    payload: dict[str, Any] = {
        "text": transcript.text,
        "chunks": [{"text": c.text, "timestamp": list(c.timestamp)} for c in transcript.chunks],
    }
    if provenance is not None:
        payload["voxbench"] = provenance
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_gt_distribution(path: Path) -> dict[str, list[float]]:
    """``icc_gt_distribution.json``: sample id → normalised histogram over 0.2 s bins."""
    return load_json_file(path, _GT, "an object mapping sample ids to lists of numbers")
