"""The built-in offline suite: small datasets spoken by eSpeak NG on first use.

Each ``tasks/data/<name>/items.jsonl`` holds what to say (``text``, ``voice``; for a
multi-turn item ``spoken_turns``, each turn's) and the record's columns. ``ensure_builtin_dataset`` synthesizes the clips into
``<cache>/tasks/<name>/`` beside a ``manifest.jsonl`` (the columns plus ``audio``) and a
``synthesis.json`` of per-item hashes: an item is spoken again only when its text or voice
changed or its file is gone, so the suite is deterministic and costs ~10 ms a clip once.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.wav import write_wav
from voxbench.benchmarks.audio import cache_root
from voxbench.core.errors import ConfigError
from voxbench.core.rundir import write_json_atomic, write_jsonl_atomic

DATA_DIR = Path(__file__).parent / "data"
SYNTHESIS_FILE = "synthesis.json"
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


def _clips(item: dict[str, Any]) -> list[tuple[str, str, str]]:
    """What an item says: (file, text, voice) of its one clip, or of each spoken turn of a
    multi-turn item (``spoken_turns``: one ``{text, voice}`` or null per turn)."""
    if "spoken_turns" not in item:
        return [(f"{item['id']}.wav", item["text"], item["voice"])]
    return [
        (f"{item['id']}_{n}.wav", turn["text"], turn["voice"])
        for n, turn in enumerate(item["spoken_turns"], 1)
        if turn is not None
    ]


def _item_hash(item: dict[str, Any]) -> str:
    spoken = json.dumps([[text, voice] for _, text, voice in _clips(item)], ensure_ascii=False)
    if "spoken_turns" not in item:  # the hash single-clip items always had
        spoken = json.dumps([item["text"], item["voice"]], ensure_ascii=False)
    return hashlib.sha256(spoken.encode("utf-8")).hexdigest()


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
        clips = _clips(item)
        digest = _item_hash(item)
        hashes[item["id"]] = digest
        stale = state.get(item["id"]) != digest
        for audio_name, text, voice in clips:
            if stale or not (out / audio_name).is_file():
                write_wav(out / audio_name, espeak_synthesize(text, voice))
                changed = True
        if "spoken_turns" in item:
            row = {k: v for k, v in item.items() if k != "spoken_turns"}
            names = iter(name for name, _, _ in clips)
            spoken = [None if t is None else next(names) for t in item["spoken_turns"]]
            rows.append({**row, "turn_audio": spoken})
            continue
        row = {k: v for k, v in item.items() if k not in ("text", "voice")}
        rows.append({**row, "audio": clips[0][0], "voice": item["voice"]})
    manifest = out / "manifest.jsonl"
    if changed or state != hashes or not manifest.is_file():
        write_jsonl_atomic(manifest, rows)
        write_json_atomic(state_path, hashes)
    return out
