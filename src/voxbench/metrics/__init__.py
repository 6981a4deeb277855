"""Metrics: pure, deterministic per-record statistics and their pooling, no model called.

``metrics.registry`` holds ``METRICS``, the table every task names its metrics from: each
metric scores one reply against its record (``score``) and pools the records' statistics
into a value on a 0–100 scale with a 95% interval (``pool``: Wilson for yes/no rates,
bootstrap for the rest). Beside it, one module a family: answer extraction (``answers``), slot filling (``slots``), numbers (``numeric``),
refusals (``refusal``), SQL execution (``sql``), IFEval's instructions (``ifeval``), METEOR
(``meteor``), BERTScore (``bertscore``, a local model read from the cache) and speaker
diarisation (``diarisation``). Metrics that ask a model to grade (``llm_judge*``) have their
statistics' shape here and their grading in ``tasks.judge`` and ``tasks.audio_judge_metric``.
"""
