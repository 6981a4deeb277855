"""COMET, an optional metric: ``pip install 'voxbench[comet]'`` (the ``unbabel-comet`` package)
and a COMET checkpoint the user brings.

COMET scores a translation from the source sentence, the translation and the reference with a
trained model (AU-Harness uses ``Unbabel/wmt22-comet-da``). voxbench never downloads weights
while a run scores: the checkpoint is a local file or folder, or a Hub model already in the
local Hugging Face cache; a run that uses ``comet`` is checked before anything is sent
(``check_available``), and a missing extra or checkpoint is an error saying what to do.

Each record keeps its three texts; when a task is pooled every record goes to the model in one
``predict`` call (batched by the model), on the raw text (AU-Harness lower-cased it and
stripped punctuation first, which COMET was not trained on). The value is the mean segment
score ×100 with its bootstrap interval; the pooled result names the checkpoint.

The source sentence is the first of the record's columns ``SOURCE_COLUMNS`` that it has
(CoVoST 2's ``sentence``); a record without one is scored with an empty source and counted
(``no_source``).

Settings (environment): ``VOXBENCH_COMET_MODEL`` — a checkpoint (``…/checkpoints/model.ckpt``),
a folder holding ``checkpoints/model.ckpt``, or a Hub id in the local cache (default
``Unbabel/wmt22-comet-da``); ``VOXBENCH_COMET_GPUS`` — GPUs to score on (default 0: CPU);
``VOXBENCH_COMET_BATCH`` — segments per batch (default 16).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from voxbench.core.errors import PrerequisiteError
from voxbench.metrics.stats import RecordStats

NAME = "comet"
EXTRA = "comet"
DEFAULT_MODEL = "Unbabel/wmt22-comet-da"
SOURCE_COLUMNS = ("source", "sentence", "source_sentence", "transcript", "transcription")
INSTALL_HINT = f"pip install 'voxbench[{EXTRA}]'"

Scorer = Callable[[list[dict[str, str]]], list[float]]
"""[{src, mt, ref}, …] → each segment's score, all in one call."""


def model_from_env() -> str:
    """The configured checkpoint (see the module's doc)."""
    return os.environ.get("VOXBENCH_COMET_MODEL") or DEFAULT_MODEL


def _whole(name: str, default: int) -> int:
    text = os.environ.get(name, str(default)).strip()
    if not text.isdigit():
        raise PrerequisiteError(f"{name}={text!r}: expected a whole number")
    return int(text)


def checkpoint_file(model: str) -> Path:
    """The checkpoint of ``model``: a ``.ckpt`` file, a folder's ``checkpoints/model.ckpt``, or
    the cached Hub snapshot's; ``PrerequisiteError`` saying how to get it otherwise."""
    path = Path(model).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        folder = path
    else:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:
            folder = Path(snapshot_download(model, local_files_only=True))
        except (LocalEntryNotFoundError, OSError, ValueError):
            raise PrerequisiteError(
                f"comet: the checkpoint {model!r} is not a local file or folder, nor in the "
                "local Hugging Face cache, and voxbench never downloads while scoring. Fetch "
                f"it once (online): `huggingface-cli download {model}`, or set "
                "VOXBENCH_COMET_MODEL to a checkpoint you have"
            ) from None
    found = folder / "checkpoints" / "model.ckpt"
    if not found.is_file():
        raise PrerequisiteError(f"comet: {folder} holds no checkpoints/model.ckpt")
    return found


def check_available() -> Path:
    """The checkpoint, after checking the extra is installed."""
    if importlib.util.find_spec("comet") is None:
        raise PrerequisiteError(
            f"the {NAME} metric needs the optional extra {EXTRA!r} (unbabel-comet not "
            f"installed): {INSTALL_HINT}"
        )
    return checkpoint_file(model_from_env())


@functools.cache
def make_scorer(checkpoint: Path, gpus: int, batch_size: int) -> Scorer:
    """A scorer loading the checkpoint once per process (``comet.load_from_checkpoint``)."""
    from comet import load_from_checkpoint

    model = load_from_checkpoint(str(checkpoint))

    def score(segments: list[dict[str, str]]) -> list[float]:
        out = model.predict(segments, batch_size=batch_size, gpus=gpus, progress_bar=False)
        return [float(x) for x in out.scores]

    return score


def source_of(columns: Mapping[str, Any]) -> str | None:
    """The record's source sentence (the first of ``SOURCE_COLUMNS`` it has)."""
    for name in SOURCE_COLUMNS:
        value = columns.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def record_stats(prediction: str, reference: str, columns: Mapping[str, Any]) -> RecordStats:
    """What a record keeps until its task is pooled: the three texts (scored together)."""
    source = source_of(columns)
    return {"src": source or "", "mt": prediction, "ref": reference, "no_source": source is None}


def scores(stats: Sequence[RecordStats]) -> tuple[list[float], dict[str, Any]]:
    """Every record's COMET score, one model call for the task, and what scored them."""
    checkpoint = check_available()
    scorer = make_scorer(checkpoint, _whole("VOXBENCH_COMET_GPUS", 0),
                         _whole("VOXBENCH_COMET_BATCH", 16))  # fmt: skip
    values = scorer([{"src": s["src"], "mt": s["mt"], "ref": s["ref"]} for s in stats])
    if len(values) != len(stats):
        raise RuntimeError(f"comet: {len(values)} scores for {len(stats)} segments")
    setup = {
        "model": model_from_env(),
        "checkpoint": str(checkpoint),
        "no_source": sum(int(bool(s.get("no_source"))) for s in stats),
    }
    return values, setup
