"""Datasets: where a task's records come from, read lazily.

- ``readers``: ``Record`` and the readers of a manifest (JSONL or CSV) beside audio files or
  a Hugging Face dataset, the filters that select records, and a dataset's fingerprint.
- ``hf``: Hugging Face datasets from the Hub's cache or a local copy, never a download the
  run did not ask for.
- ``arrow``: a local parquet or ``save_to_disk`` dataset read by pyarrow alone (no
  ``datasets`` import, no per-row formatting) when its columns are plain.
- ``suite``: the built-in offline suite, spoken by eSpeak NG on first use from the items in
  ``tasks/data/``.
"""
