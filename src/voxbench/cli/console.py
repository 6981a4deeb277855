"""The consoles every command prints through: no emoji codes, markup only where we write it.

Rich reads ``:100:`` as an emoji and ``[b]`` as markup, so a path such as
``events.jsonl:100:`` would print as ``events.jsonl💯``. Every console here has emoji codes
off; text that comes from the user or their files goes through ``escape``.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape


def make_console(*, stderr: bool = False) -> Console:
    """A console for voxbench output (stderr for messages when stdout carries data)."""
    return Console(stderr=stderr, emoji=False)


__all__ = ["escape", "make_console"]
