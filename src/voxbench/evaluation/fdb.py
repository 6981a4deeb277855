"""Full-Duplex-Bench outputs, evaluated from this room like every other run kind.

``evaluate_fdb(options)`` scores a directory of FDB outputs: the scorers, the summary and
its files, the baseline gates and what ends the command, as ``fullduplex.score.score_fdb``
decides them. Import it from this module (``voxbench.evaluation`` does not load the
fullduplex room for the conversation path).
"""

from __future__ import annotations

from voxbench.fullduplex.progress import ProgressView, no_progress
from voxbench.fullduplex.score import FdbScoreOptions, FdbScoreResult, score_fdb

__all__ = ["FdbScoreOptions", "FdbScoreResult", "evaluate_fdb"]


def evaluate_fdb(
    options: FdbScoreOptions, *, progress: ProgressView = no_progress
) -> FdbScoreResult:
    """Score ``options.out_dir`` (``voxbench fdb score``); ``progress`` is shown while the
    samples are scored. Nothing is printed."""
    return score_fdb(options, progress=progress)
