"""Evaluation: everything after a run — measure, judge, score, report — behind one call,
for every run kind.

The CLI calls only this room: ``evaluate_run(run_dir, options)`` for a conversation run
(``evaluate_run_async`` in a running event loop), ``load_or_evaluate`` to show a run,
``oracle_check`` to check a benchmark, ``fdb.evaluate_fdb`` to score Full-Duplex-Bench
outputs (imported from its module: it loads the fullduplex room), and ``gates`` to tell
whether an evaluated run passes its ``--fail-under`` gates.
"""

from voxbench.evaluation.evaluate import (
    Evaluation,
    EvaluationOptions,
    evaluate_run,
    evaluate_run_async,
    load_or_evaluate,
)
from voxbench.evaluation.oracle import oracle_check

__all__ = [
    "Evaluation",
    "EvaluationOptions",
    "evaluate_run",
    "evaluate_run_async",
    "load_or_evaluate",
    "oracle_check",
]
