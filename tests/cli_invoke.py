"""Run the ``voxbench`` command in-process the way a user's shell would, for CLI tests."""

from __future__ import annotations

import sys

import pytest

from voxbench.cli.main import main


def invoke(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *args: str,
    columns: int = 200,
) -> tuple[int, str, str]:
    """``voxbench ARGS`` → (exit code, stdout, stderr), in a terminal ``columns`` wide."""
    monkeypatch.setattr(sys, "argv", ["voxbench", *args])
    monkeypatch.setenv("COLUMNS", str(columns))
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (1 if exc.code else 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
