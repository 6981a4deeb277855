"""Small labelled sets for calibrating a judge, generated offline with eSpeak NG.

Generated on first use into ``$VOXBENCH_CACHE_DIR/audio-judge-sets/<name>-v<version>/``
(wav files and ``manifest.yaml``) and reused afterwards, like ``voxbench synth`` caches
turn audio; nothing is committed to the repository.

- ``accents``: three sentences in eSpeak NG's English voices; labelled for the ``accent``
  rubric with ``target_accent`` = received pronunciation: ``en-gb-x-rp`` 5, ``en-gb``
  (eSpeak's standard British) 4, ``en-gb-scotland`` 3, ``en-029`` (Caribbean) 2, ``en-us``
  1. The labels are the voices' design, not human ratings.
- ``rates``: the same sentences at 80, 170, 260 and 400 words per minute, labelled for the
  ``pace`` rubric 2, 5, 3 and 1.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from voxbench.audio.espeak import espeak_synthesize
from voxbench.audio.wav import write_wav
from voxbench.judging.cache import default_cache_dir

VERSION = 1
SENTENCES = (
    "Good afternoon, thank you for calling. How can I help you today?",
    "Your table for four is booked for half past seven on Thursday evening.",
    "I am afraid the last train to Oxford has already left the station.",
)
ACCENT_VOICES = {"en-gb-x-rp": 5, "en-gb": 4, "en-gb-scotland": 3, "en-029": 2, "en-us": 1}
RATES = {80: 2, 170: 5, 260: 3, 400: 1}
SETS = ("accents", "rates")


def sets_dir() -> Path:
    """Where generated labelled sets live."""
    return default_cache_dir().parent / "audio-judge-sets"


def _items(name: str) -> tuple[dict[str, Any], list[tuple[str, str, int, int]]]:
    """(manifest header, [(file, voice, rate, expected)])."""
    if name == "accents":
        header = {"rubric": "accent", "options": {"target_accent": "received pronunciation (RP)"}}
        items = [
            (f"{voice}_{i + 1}.wav", voice, 170, score)
            for voice, score in ACCENT_VOICES.items()
            for i in range(len(SENTENCES))
        ]
        return header, items
    header = {"rubric": "pace", "options": {}}
    items = [
        (f"wpm{rate}_{i + 1}.wav", "en-us", rate, score)
        for rate, score in RATES.items()
        for i in range(len(SENTENCES))
    ]
    return header, items


def ensure_labelled_set(name: str, directory: Path | None = None) -> Path:
    """The directory of the built-in set ``name``, generated when missing."""
    if name not in SETS:
        raise ValueError(f"no built-in labelled set {name!r} (there are: {', '.join(SETS)})")
    folder = (directory or sets_dir()) / f"{name}-v{VERSION}"
    manifest = folder / "manifest.yaml"
    if manifest.is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    header, items = _items(name)
    entries = []
    for file, voice, rate, expected in items:
        sentence = SENTENCES[int(file.rsplit("_", 1)[1][:-4]) - 1]
        write_wav(folder / file, espeak_synthesize(sentence, voice, rate_wpm=rate))
        entries.append({"file": file, "expected": expected, "voice": voice, "wpm": rate})
    text = yaml.safe_dump({**header, "items": entries}, sort_keys=False, allow_unicode=True)
    tmp = manifest.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, manifest)
    return folder
