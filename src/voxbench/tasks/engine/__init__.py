"""The engine: how a task run's requests are prepared, sent, cached and scored.

- ``work_queue``: ``Engine``, one work queue per model pool with exactly ``max_concurrency``
  requests per endpoint, the scorer that appends ``records.jsonl``, and a record's row.
- ``models``: the models a run asks (audio-in chat, ASR, ``local/oracle``), one client per
  endpoint.
- ``prepare``: a record's audio made ready to send (decoded, resampled, cut, WAV, hashed);
  ``chunking``: where a long clip is cut, in a silence; ``pool``: the worker processes that
  prepare clips and score replies for large runs.
- ``cache``: the content-addressed response cache every run shares (``cache.sqlite``).
- ``shards``: a run cut into disjoint shards, each answered by its own worker
  (``scale.task_shards`` runs them on Ray).
"""
