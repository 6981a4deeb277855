"""The built-in offline suite: small datasets spoken by eSpeak NG on first use.

Each ``tasks/data/<name>/items.jsonl`` holds what to say (``text``, ``voice``; or ``turns``,
a list of them spoken one after another with ``TURN_GAP_S`` of silence between, for clips with
several speakers; or ``spoken_turns``, a multi-turn item's user turns, each its own clip
listed in the manifest's ``turn_audio``) and the record's columns.
``ensure_builtin_dataset`` synthesizes the clips into
``<cache>/tasks/<name>/`` beside a ``manifest.jsonl`` (the columns plus ``audio``) and a
``synthesis.json`` of per-item hashes: an item is spoken again only when its text or voice
changed or its file is gone, so the suite is deterministic and costs ~10 ms a clip once.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.wav import Audio, concatenate, write_wav
from voxbench.benchmarks.audio import cache_root
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import read_jsonl, write_json_atomic, write_jsonl_atomic

DATA_DIR = Path(__file__).parents[1] / "data"
SYNTHESIS_FILE = "synthesis.json"
TURN_GAP_S = 0.4
"""Silence between the turns of a several-speaker item."""
SPOKEN_KEYS = ("text", "voice", "turns", "spoken_turns")
BUILTIN_LICENCE = "voxbench's own (eSpeak NG)"
"""The licence note of a built-in dataset."""


def builtin_datasets() -> list[str]:
    """Names of the built-in datasets."""
    return sorted(p.name for p in DATA_DIR.iterdir() if (p / "items.jsonl").is_file())


def builtin_size(name: str) -> int:
    """Records in built-in dataset ``name``."""
    return len(_items(name))


def _items(name: str) -> list[dict[str, Any]]:
    path = DATA_DIR / name / "items.jsonl"
    if not path.is_file():
        raise ConfigError(
            f"unknown built-in dataset {name!r}",
            field="dataset.builtin",
            expected="one of: " + ", ".join(builtin_datasets()),
        )
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _turns(item: dict[str, Any]) -> list[tuple[str, str]]:
    """What an item says: (text, voice) of each turn."""
    if "turns" in item:
        return [(turn["text"], turn["voice"]) for turn in item["turns"]]
    return [(item["text"], item["voice"])]


def _item_hash(item: dict[str, Any]) -> str:
    if "spoken_turns" in item:
        said = [t and [t["text"], t["voice"]] for t in item["spoken_turns"]]
    else:
        said = [list(t) for t in _turns(item)] if "turns" in item else [item["text"], item["voice"]]
    spoken = json.dumps(said, ensure_ascii=False)
    return hashlib.sha256(spoken.encode("utf-8")).hexdigest()


def _speak(item: dict[str, Any]) -> Audio:
    """The item's clip: its turns spoken one after another, a short silence between."""
    parts: list[Audio] = []
    for text, voice in _turns(item):
        spoken = espeak_synthesize(text, voice)
        if parts:
            gap = int(TURN_GAP_S * spoken.sample_rate)
            parts.append(Audio(np.zeros(gap, dtype=np.float32), spoken.sample_rate))
        parts.append(spoken)
    return concatenate(parts)


def ensure_builtin_dataset(name: str, root: Path | None = None) -> Path:
    """The folder of built-in dataset ``name`` with its audio and manifest, made if needed."""
    items = _items(name)
    out = (root or cache_root() / "tasks") / name
    out.mkdir(parents=True, exist_ok=True)
    state_path = out / SYNTHESIS_FILE
    try:
        state = json.loads(state_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    rows, hashes, changed = [], {}, False
    for item in items:
        audio_name = f"{item['id']}.wav"
        digest = _item_hash(item)
        hashes[item["id"]] = digest
        if "spoken_turns" in item:  # one clip per turn (None: a turn with text only)
            names: list[str | None] = []
            for n, turn in enumerate(item["spoken_turns"], 1):
                clip_name = None if turn is None else f"{item['id']}_{n}.wav"
                names.append(clip_name)
                if clip_name is not None and (
                    state.get(item["id"]) != digest or not (out / clip_name).is_file()
                ):
                    write_wav(out / clip_name, espeak_synthesize(turn["text"], turn["voice"]))
                    changed = True
            row = {k: v for k, v in item.items() if k not in SPOKEN_KEYS}
            rows.append({**row, "turn_audio": names})
            continue
        if state.get(item["id"]) != digest or not (out / audio_name).is_file():
            write_wav(out / audio_name, _speak(item))
            changed = True
        row = {k: v for k, v in item.items() if k not in SPOKEN_KEYS}
        voices = ", ".join(voice for _, voice in _turns(item))
        rows.append({**row, "audio": audio_name, "voice": voices})
    manifest = out / "manifest.jsonl"
    # Rewritten when the audio changed, or the items' other columns did (a new column).
    if changed or state != hashes or not manifest.is_file() or read_jsonl(manifest) != rows:
        write_jsonl_atomic(manifest, rows)
        write_json_atomic(state_path, hashes)
    return out
