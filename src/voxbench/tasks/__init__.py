"""Audio-task evaluation: config schema, task registry, datasets, the engine, metrics, outputs.

``voxbench tasks run eval.yaml`` reads an ``EvalConfig`` (``tasks.config``), resolves its
tasks from the YAML registry (``tasks.registry``), streams each dataset's records
(``tasks.datasets``) through one work queue per model pool (``tasks.engine``), scores them
(``metrics.registry``) and writes ``runs/tasks/<timestamp>_<id>/`` (``core.taskrun``).
"""
