"""The two shapes every metric speaks: a record's statistics and their pooled value.

``RecordStats`` is what a metric's ``score`` returns for one reply: each metric's own small
JSON object (``{"errors": 2, "units": 9}`` for WER, ``{"correct": 1}`` for accuracy, BLEU's
n-gram counts), written as is into ``records.jsonl`` and pooled later, so a run re-read with the
same metric needs no model call. ``Pooled`` is what ``pool`` makes of a task × model's
statistics: ``value``, ``ci`` and ``n`` (typed as ``core.results.MetricScore`` when read) plus
the metric's own counts (``undecided``, ``stages``, ``fields``, …). Both stay JSON objects on
purpose: a new metric brings its own statistics without a schema change anywhere.
"""

from __future__ import annotations

from typing import Any, TypeAlias

RecordStats: TypeAlias = dict[str, Any]
"""One reply's statistics for one metric (the metric's own JSON object)."""
Pooled: TypeAlias = dict[str, Any]
"""A metric pooled over records: ``value``, ``ci``, ``n`` and the metric's own counts."""
