"""``voxbench import mt-bench-audio``: MT-Bench spoken (``ServiceNow-AI/mt-bench_audio``, as
AU-Harness reads it) → the multi-turn manifest the registry task ``mtbench_audio`` reads.

Each record of the Hub dataset holds a question id, a category, its turns as text (``turns``)
and as audio (``audio``: one clip per turn) and the reference answers (``reference``: one per
turn, empty for the categories without one). voxbench's multi-turn tasks read a manifest
beside their audio files, so each turn's clip is written as a WAV and each record becomes one
manifest line: ``id``, ``category``, ``turn_audio`` (the WAV files), ``turns`` (the text),
``reference`` (the last turn's reference answer, "" when the category has none). The source is
the Hub id (``datasets`` reads it into its cache: online the first time) or a local
``save_to_disk`` copy.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from voxbench.core.errors import ConfigError

HUB_ID = "ServiceNow-AI/mt-bench_audio"
DEFAULT_OUT = Path("~/.cache/voxbench/mt-bench_audio")
"""Where the registry task ``mtbench_audio`` reads the manifest."""
COLUMNS = ("question_id", "category", "turns", "audio")


def _load(source: str, split: str) -> Any:
    try:
        import datasets
    except ImportError:
        raise ConfigError(
            "reading MT-Bench from the Hub needs the optional 'datasets' package",
            expected="pip install 'voxbench[hf]'",
        ) from None
    path = Path(source).expanduser()
    if path.is_dir():
        loaded = datasets.load_from_disk(str(path))
        return loaded[split] if isinstance(loaded, datasets.DatasetDict) else loaded
    return datasets.load_dataset(source, split=split)


def _undecoded(dataset: Any, column: str) -> Any:
    """The dataset with its audio (a clip, or a list of clips per row) left encoded: the WAVs
    are copied, never decoded and re-encoded by ``datasets`` (which needs torchcodec for it)."""
    import datasets

    feature = dataset.features[column]
    raw = datasets.Audio(decode=False)
    if isinstance(feature, datasets.Audio):
        return dataset.cast_column(column, raw)
    inner = getattr(feature, "feature", None)
    if isinstance(inner, datasets.Audio):
        return dataset.cast_column(column, type(feature)(raw))
    return dataset


def _clips(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value]
    return list(value or [])


def _write_clip(clip: Any, target: Path) -> None:
    """One decoded (``array``/``sampling_rate``) or encoded (``bytes``/``path``) clip as a WAV."""
    if isinstance(clip, dict) and clip.get("array") is not None:
        array, rate = np.asarray(clip["array"], dtype=np.float32), int(clip["sampling_rate"])
    elif isinstance(clip, dict) and (clip.get("bytes") or clip.get("path")):
        data = clip.get("bytes") or Path(str(clip["path"])).read_bytes()
        array, rate = sf.read(io.BytesIO(data), dtype="float32")
    else:
        raise ConfigError(f"{target.stem}: an audio cell holds no audio")
    sf.write(target, array, rate, subtype="PCM_16")


def write_manifest(source: str, out: Path, *, split: str = "test") -> int:
    """Write the manifest and WAVs under ``out``; the number of records written."""
    dataset = _load(source, split)
    missing = [c for c in COLUMNS if c not in dataset.column_names]
    if missing:
        raise ConfigError(
            f"{source} has no column {', '.join(missing)} (it has "
            f"{', '.join(dataset.column_names)})",
            expected="ServiceNow-AI/mt-bench_audio or a copy of it",
        )
    dataset = _undecoded(dataset, "audio")
    out = out.expanduser()
    (out / "audio").mkdir(parents=True, exist_ok=True)
    lines = []
    for row in dataset:
        record = str(row["question_id"])
        texts = [str(t) for t in row["turns"] or []]
        clips = _clips(row["audio"])
        if not clips or len(clips) != len(texts):
            raise ConfigError(
                f"{source}: question {record} has {len(clips)} clips for {len(texts)} turns"
            )
        files = []
        for i, clip in enumerate(clips, 1):
            name = f"audio/{record}_{i}.wav"
            _write_clip(clip, out / name)
            files.append(name)
        references = [r for r in (row.get("reference") or []) if r]
        lines.append(
            {
                "id": record,
                "category": str(row["category"]),
                "turn_audio": files,
                "turns": texts,
                "reference": str(references[-1]) if references else "",
            }
        )
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    (out / "manifest.jsonl").write_text(text, encoding="utf-8")
    return len(lines)
