"""A command lays out its output at the terminal width of the run that prints it.

Command modules are imported lazily, by the first run of their command; a console made at
import would keep that run's ``COLUMNS`` for the rest of the process."""

from __future__ import annotations

import sys

import voxbench.cli
from tests.cli_invoke import invoke


def test_a_command_prints_at_the_width_of_each_run_not_of_the_first(monkeypatch, capsys) -> None:
    # The first run below imports the module, whatever tests ran before in this process.
    monkeypatch.delitem(sys.modules, "voxbench.cli.bench", raising=False)
    monkeypatch.delattr(voxbench.cli, "bench", raising=False)
    code, narrow, err = invoke(monkeypatch, capsys, "bench", "stats", "smoke", columns=60)
    assert code == 0, err
    assert narrow.startswith("smoke v") and len(narrow.splitlines()[0]) <= 60  # wrapped

    code, wide, err = invoke(monkeypatch, capsys, "bench", "stats", "smoke", columns=200)
    assert code == 0, err
    first = wide.splitlines()[0]  # about 180 characters: one line at 200 columns
    assert first.startswith("smoke v") and first.endswith("turns with audio"), wide
    assert len(first) > 120
