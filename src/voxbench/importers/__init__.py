"""Importers: other harnesses' benchmarks and configs, turned into voxbench's own.

- ``conversation_bench``, ``aiewf``: an upstream checkout of ConversationBench or AIEWF (its
  data lives in Python modules, read with ``ast`` and never executed: ``pyliteral``,
  ``upstream``, ``prompt``) written as a voxbench benchmark package (``package``);
  ``download`` fetches the pinned upstream commits first (``voxbench download``).
- ``au_harness``: an AU-Harness run config turned into an ``eval.yaml`` for ``voxbench tasks
  run``, its task and metric names mapped through ``au_harness_names``.

Each importer is imported from its own module; nothing below ``cli`` imports this room.
"""
