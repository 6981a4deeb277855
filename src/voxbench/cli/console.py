"""The consoles every command prints through: no emoji codes, markup only where we write it.

Rich reads ``:100:`` as an emoji and ``[b]`` as markup, so a path such as
``events.jsonl:100:`` would print as ``events.jsonl💯``. Every console here has emoji codes
off; text that comes from the user or their files goes through ``escape``.

A command makes its consoles when it runs, never when its module is imported: Rich reads the
terminal width (``COLUMNS``) when a console is made, and command modules are imported lazily,
so a console made at import would keep the width of whichever run imported it first.
"""

from __future__ import annotations

import logging

from rich.console import Console
from rich.markup import escape

from voxbench.core.runlog import RedactingFormatter


def make_console(*, stderr: bool = False) -> Console:
    """A console for voxbench output (stderr for messages when stdout carries data)."""
    return Console(stderr=stderr, emoji=False)


class ConsoleLogHandler(logging.Handler):
    """Prints ``voxbench`` log records on a console, above any live progress bar on it.

    ``run`` shows warnings this way, and with ``--verbose`` every progress line too; the
    lines are those of ``run.log`` (secrets redacted), without timestamp and logger name."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console
        self.setFormatter(RedactingFormatter(brief=True))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.console.print(escape(self.format(record)), highlight=False, soft_wrap=True)
        except Exception:  # a broken console must not stop the run
            self.handleError(record)


__all__ = ["ConsoleLogHandler", "escape", "make_console"]
