"""How a long Full-Duplex-Bench step reports its progress to whoever shows it.

The room draws nothing: ``run_fdb`` and ``score_fdb`` take a ``ProgressView`` (the CLI's is
a progress bar on stderr), open it around the step and tick it as samples finish.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol


class Ticker(Protocol):
    """The running display of one step."""

    def total(self, count: int, note: str | None = None) -> None:
        """The step has ``count`` samples to do; ``note`` (when given) replaces the last note."""

    def advance(self, note: str) -> None:
        """One more sample done; ``note`` says which."""


ProgressView = Callable[[str], AbstractContextManager[Ticker]]
"""Opens a display titled with its argument around a step and yields the step's ``Ticker``."""


class _Silent:
    def total(self, count: int, note: str | None = None) -> None:
        pass

    def advance(self, note: str) -> None:
        pass


@contextmanager
def no_progress(title: str) -> Iterator[Ticker]:
    """The ``ProgressView`` that shows nothing."""
    yield _Silent()
