"""Audio-task evaluation: ``voxbench tasks run eval.yaml``, models × tasks × metrics.

A run reads an ``EvalConfig`` (``config``), resolves its tasks from the YAML registry
(``spec``; the task files are under ``registry/``), plans which records each model answers
(``plan``), streams each dataset's records (``datasets/``) through one work queue per model
pool (``engine/``), scores the replies with the metrics of ``voxbench.metrics`` (the ones that
ask a model to grade: ``judge``, ``audio_judge_metric``), and writes
``runs/tasks/<timestamp>_<id>/`` (``run``, ``scores``, ``report``, ``html``; the directory
itself is ``core.taskrun``).

- ``config``, ``spec``: the eval config and the task files' schema (``registry/<family>/``).
- ``plan``: the jobs (task × model) and their records; ``sql_database``: which SQLite file a
  SQL task's record runs on.
- ``datasets/``: ``readers`` (manifests, Hugging Face datasets, filters), ``hf``, ``suite``
  (the built-in offline suite spoken from ``data/``).
- ``engine/``: ``work_queue`` (``Engine``), ``models``, ``prepare``, ``chunking``, ``pool``,
  ``cache``, ``shards``.
- ``judge``, ``audio_judge_metric``: the LLM judge and the audio judge of the judge metrics.
- ``run``, ``scores``, ``report``, ``html``: a whole run, its scores, ``report.md`` and
  ``report.html``.
"""
