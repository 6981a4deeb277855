"""File names of the run kinds whose own modules live above the store (audio-task runs and
full-duplex scorings): spelled once here, so the writers and the results store agree."""

from __future__ import annotations

TASK_RUN_SCHEMA = "voxbench.tasks/1"
"""The ``schema`` field of a task run's ``run.json``."""
TASK_SCORES = "scores.json"
"""A task run's pooled scores (per task × model × metric)."""
FDB_SUMMARY_PREFIX = "fdb_summary_"


def fdb_summary_name(mode: str) -> str:
    """The summary an FDB scoring in ``mode`` writes into the scored directory."""
    return f"{FDB_SUMMARY_PREFIX}{mode}.json"


def fdb_summary_mode(file_name: str) -> str | None:
    """The scoring mode of an FDB summary file name, or None when it is not one."""
    if file_name.startswith(FDB_SUMMARY_PREFIX) and file_name.endswith(".json"):
        return file_name[len(FDB_SUMMARY_PREFIX) : -len(".json")] or None
    return None
