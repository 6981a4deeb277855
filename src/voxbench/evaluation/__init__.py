"""Evaluation: everything after a run — measure, judge, score, report — behind one call.

The CLI calls only this room: ``evaluate_run(run_dir, options)`` (``evaluate_run_async`` in
a running event loop), ``load_or_evaluate`` to show a run, ``oracle_check`` to check a
benchmark.
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
