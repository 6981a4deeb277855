"""BERTScore, an optional metric: ``pip install 'voxbench[bertscore]'`` (torch, transformers,
bert-score; kept out of the default install).

The model is read only from the local Hugging Face cache (or a local folder): nothing is
downloaded while a run scores. A run that uses ``bertscore`` is checked before anything is
sent (``check_available``): a missing extra or an uncached model is an error saying what to
install or fetch.

Scoring is batched: each record keeps its texts, and when a task's scores are pooled every
record of the task goes to the scorer at once (``bert_score`` cuts it into GPU/CPU batches of
``BATCH_SIZE`` pairs), one scorer call per target language — never one call per record. The
value is the mean F1 (×100) with its bootstrap interval; the pooled result names the model,
its layer and whether baseline rescaling was applied.

Settings (environment, read when the metric is used):

- ``VOXBENCH_BERTSCORE_MODEL`` — a Hub model id in the local cache, or a folder
  (default ``bert-base-multilingual-cased``, layer 9, as AU-Harness uses);
- ``VOXBENCH_BERTSCORE_LAYER`` — the layer whose embeddings are compared (default: bert-score's
  recommended layer for a model it knows; required for a folder or a model it does not);
- ``VOXBENCH_BERTSCORE_RESCALE=1`` — rescale with bert-score's baseline for the target
  language (off by default, like AU-Harness; rescaled values are not comparable with raw ones).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voxbench.core.errors import PrerequisiteError
from voxbench.metrics.stats import RecordStats

NAME = "bertscore"
EXTRA = "bertscore"
DEFAULT_MODEL = "bert-base-multilingual-cased"
DEFAULT_LAYER = 9
"""bert-score's recommended layer for the default model."""
BATCH_SIZE = 64
"""Pairs per forward pass (bert-score's batches)."""
INSTALL_HINT = f"pip install 'voxbench[{EXTRA}]'"

Scorer = Callable[[list[str], list[str]], list[float]]
"""(predictions, references) → the F1 of each pair, all pairs in one call."""


@dataclass(frozen=True)
class Setup:
    """Which model scores, and how."""

    model: str
    """The Hub id (or folder) as configured."""
    layer: int | None
    rescale: bool

    def describe(self) -> dict[str, Any]:
        """What the pooled result and ``run.json`` say about the scorer."""
        layer = self.layer if self.layer is not None else "bert-score's default for the model"
        return {"model": self.model, "layer": layer, "rescaled_with_baseline": self.rescale,
                "idf": False}  # fmt: skip


def setup_from_env() -> Setup:
    """The scorer's settings from the environment (see the module's doc)."""
    layer = os.environ.get("VOXBENCH_BERTSCORE_LAYER")
    if layer is not None and not layer.isdigit():
        raise PrerequisiteError(f"VOXBENCH_BERTSCORE_LAYER={layer!r}: expected a layer number")
    rescale = os.environ.get("VOXBENCH_BERTSCORE_RESCALE", "0").strip().casefold()
    model = os.environ.get("VOXBENCH_BERTSCORE_MODEL") or DEFAULT_MODEL
    return Setup(
        model=model,
        layer=int(layer) if layer else (DEFAULT_LAYER if model == DEFAULT_MODEL else None),
        rescale=rescale in ("1", "true", "yes", "on"),
    )


def missing_packages() -> list[str]:
    """The extra's packages that are not installed (found without importing them)."""
    return [
        p for p in ("torch", "transformers", "bert_score") if importlib.util.find_spec(p) is None
    ]


def local_model_dir(model: str) -> Path:
    """The model's folder: ``model`` itself when it is one, else its snapshot in the local
    Hugging Face cache; ``PrerequisiteError`` saying how to fetch it otherwise."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        return folder
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(model, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        raise PrerequisiteError(
            f"bertscore: the model {model!r} is not in the local Hugging Face cache, and "
            "voxbench never downloads while scoring. Fetch it once (online): "
            f"`huggingface-cli download {model}` (or set VOXBENCH_BERTSCORE_MODEL to a local "
            "model folder or another cached model)"
        ) from None


def check_available() -> Setup:
    """The setup, after checking the extra is installed and the model is local."""
    missing = missing_packages()
    if missing:
        raise PrerequisiteError(
            f"the {NAME} metric needs the optional extra {EXTRA!r} ({', '.join(missing)} not "
            f"installed): {INSTALL_HINT}"
        )
    setup = setup_from_env()
    local_model_dir(setup.model)
    return setup


def _layer_of(setup: Setup) -> int:
    if setup.layer is not None:
        return setup.layer
    from bert_score.utils import model2layers

    for name in (setup.model, setup.model.rstrip("/").split("/")[-1]):
        if name in model2layers:
            return int(model2layers[name])
    raise PrerequisiteError(
        f"bertscore: no recommended layer is known for {setup.model!r}; set "
        "VOXBENCH_BERTSCORE_LAYER"
    )


def _baseline_file(setup: Setup, language: str) -> str:
    """bert-score's rescaling baseline for the model and language (its files are named by
    the full model id in some versions, by the last part in others)."""
    import bert_score

    folder = Path(bert_score.__file__).parent / "rescale_baseline" / language
    for name in (setup.model, setup.model.rstrip("/").split("/")[-1]):
        path = folder / f"{name}.tsv"
        if path.is_file():
            return str(path)
    raise PrerequisiteError(
        f"bertscore: bert-score has no rescaling baseline for {setup.model!r} in "
        f"language {language!r}; unset VOXBENCH_BERTSCORE_RESCALE"
    )


@functools.cache
def make_scorer(setup: Setup, language: str) -> Scorer:
    """A bert-score scorer for ``language`` (loaded once per process, from local files only)."""
    if missing_packages():
        check_available()  # raises, naming the extra
    from bert_score import BERTScorer

    # The model is given as its local folder, so bert-score cannot find a baseline by name:
    # one is always passed (without rescaling it is never read).
    kwargs: dict[str, Any] = {"baseline_path": os.devnull}
    if setup.rescale:
        kwargs = {"rescale_with_baseline": True, "baseline_path": _baseline_file(setup, language),
                  "lang": language}  # fmt: skip
    scorer = BERTScorer(
        model_type=str(local_model_dir(setup.model)),
        num_layers=_layer_of(setup),
        batch_size=BATCH_SIZE,
        **kwargs,
    )

    def score(predictions: list[str], references: list[str]) -> list[float]:
        _, _, f1 = scorer.score(predictions, references, batch_size=BATCH_SIZE)
        return [float(x) for x in f1.tolist()]

    return score


def record_stats(prediction: str, reference: str, language: str) -> RecordStats:
    """What a record keeps until its task is pooled: the texts (scored together, batched)."""
    return {"prediction": prediction, "reference": reference, "language": language}


def f1_scores(stats: Sequence[RecordStats]) -> tuple[list[float], dict[str, Any]]:
    """Every record's F1 (0–1), one scorer call per target language, and the setup used."""
    setup = setup_from_env()
    by_language: dict[str, list[int]] = {}
    for i, s in enumerate(stats):
        # Without rescaling the language changes nothing: one call for the whole task.
        key = s["language"].split("-")[0] if setup.rescale else ""
        by_language.setdefault(key, []).append(i)
    f1 = [0.0] * len(stats)
    for language, indices in by_language.items():
        scorer = make_scorer(setup, language)
        values = scorer([stats[i]["prediction"] for i in indices],
                        [stats[i]["reference"] for i in indices])  # fmt: skip
        if len(values) != len(indices):
            raise RuntimeError(f"bertscore: {len(values)} scores for {len(indices)} pairs")
        for i, value in zip(indices, values, strict=True):
            f1[i] = value
    return f1, setup.describe()
