"""Paths a request may name: only files inside the served directory, whatever the spelling.

A request path is refused when it is absolute, holds a ``..`` or hidden part, a backslash or
a NUL, and, after every symbolic link is followed, when it lands outside the run directory or
the served root. Percent-encoding is undone by the server before this sees the path, so an
encoded ``..`` is caught like a plain one; a doubly encoded one names a file that does not
exist.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath


class OutsideServedDirectory(Exception):
    """A request named a path outside what the viewer serves."""


def inside(root: Path, path: Path) -> bool:
    """Whether ``path``, with links followed, is ``root`` or lies under it."""
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def resolve_inside(base: Path, relative: str, *, root: Path) -> Path:
    """The existing file ``relative`` names under ``base`` (itself under ``root``)."""
    if not relative or "\x00" in relative or "\\" in relative:
        raise OutsideServedDirectory(relative)
    parts = PurePosixPath(relative).parts
    # Hidden files (the writer lock naming a process and host) are not artifacts.
    if PurePosixPath(relative).is_absolute() or any(
        p in ("..", "") or p.startswith(".") for p in parts
    ):
        raise OutsideServedDirectory(relative)
    candidate = base / Path(*parts)
    if not (inside(base, candidate) and inside(root, candidate)):
        raise OutsideServedDirectory(relative)
    resolved = candidate.resolve()
    if not resolved.is_file():
        raise FileNotFoundError(relative)
    return resolved
