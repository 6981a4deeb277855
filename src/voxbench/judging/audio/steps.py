"""Evaluation steps: the rubric's own, or written once by the judge model and stored.

G-Eval's auto chain of thought: a rubric with ``generate_steps: true`` has the judge model
write its steps from the task and criteria the first time it is used. They are stored
under the rubric's hash (``$VOXBENCH_CACHE_DIR/audio-rubric-steps/<hash>.json``), so every
later judgment with the same rubric — same text, same parameters — uses the same steps;
changing the rubric changes its hash and gets new steps.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from voxbench.core.errors import ProviderError
from voxbench.judging.audio.clients import AudioJudgeClient
from voxbench.judging.audio.prompt import steps_request
from voxbench.judging.audio.rubric import BoundRubric
from voxbench.judging.cache import default_cache_dir

_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*(.+?)\s*$")


def steps_dir() -> Path:
    """Where generated steps are stored."""
    return default_cache_dir().parent / "audio-rubric-steps"


def parse_steps(text: str) -> list[str]:
    """Numbered or bulleted lines → the steps; plain lines when nothing is numbered."""
    lines = [line for line in text.splitlines() if line.strip()]
    steps = [m.group(1) for line in lines if (m := _STEP.match(line))]
    return steps or [line.strip() for line in lines]


def stored_steps(bound: BoundRubric, directory: Path | None = None) -> list[str] | None:
    """The steps stored for this rubric's hash, or None."""
    path = (directory or steps_dir()) / f"{bound.digest()}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    steps = data.get("steps") if isinstance(data, dict) else None
    return [str(s) for s in steps] if isinstance(steps, list) and steps else None


async def ensure_steps(
    bound: BoundRubric, client: AudioJudgeClient, directory: Path | None = None
) -> list[str]:
    """The rubric's steps: its own, the stored ones, or new ones written by ``client``."""
    if bound.rubric.steps:
        return list(bound.rubric.steps)
    directory = directory or steps_dir()
    known = stored_steps(bound, directory)
    if known is not None:
        return known
    system, user = steps_request(bound)
    steps = parse_steps(await client.write(system, user))
    if not steps:
        raise ProviderError(
            f"{client.name}: wrote no evaluation steps for rubric {bound.name!r}",
            category="protocol",
            retryable=True,
        )
    path = directory / f"{bound.digest()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "rubric": bound.name,
        "hash": bound.digest(),
        "written_by": client.name,
        "steps": steps,
    }
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return steps
