"""``run.log``: what a run did, line by line, with UTC timestamps and secrets redacted.

Every voxbench module logs through the standard ``logging`` package under the ``voxbench``
logger. While a run executes, ``run_log(path)`` appends that logger's records to the run's
``run.log`` (a resumed run appends to the same file). Only the records of this run reach
it: runs side by side in one process (``voxbench demo``) each log to their own file, told
apart by a context variable that asyncio tasks and ``asyncio.to_thread`` carry along.

Each line is redacted as it is written (``core.secrets.redact_text``: every key read from
the environment, options such as ``api_key`` registered with ``remember_secret``,
key-shaped strings and credentials in URLs).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path

from voxbench.core.secrets import redact_text

LOGGER = "voxbench"
"""The logger every voxbench module logs under (``logging.getLogger(__name__)``)."""

_CURRENT_RUN: ContextVar[str | None] = ContextVar("voxbench_current_run", default=None)


class RedactingFormatter(logging.Formatter):
    """``2026-01-02T03:04:05.678Z WARNING voxbench.runner.launch: message`` (``run.log``),
    or ``WARNING message`` for a terminal (``brief``); secrets redacted."""

    def __init__(self, *, brief: bool = False) -> None:
        fmt = (
            "%(levelname)s %(message)s"
            if brief
            else "%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        super().__init__(fmt)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 - logging's name
        stamp = datetime.fromtimestamp(record.created, UTC)
        return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(super().format(record))


class _ThisRun(logging.Filter):
    """Lets through the records logged while this run is the current one."""

    def __init__(self, run: str) -> None:
        super().__init__()
        self.run = run

    def filter(self, record: logging.LogRecord) -> bool:
        return _CURRENT_RUN.get() == self.run


_SINK_LEVELS: list[int] = []
"""The levels of the sinks attached now; the logger lets through the lowest of them."""
_LEVEL_BEFORE = [logging.NOTSET]
"""The logger's own level before the first sink came, restored when the last one goes."""


@contextmanager
def _attached(handler: logging.Handler, level: int) -> Iterator[logging.Logger]:
    logger = logging.getLogger(LOGGER)
    handler.setLevel(level)
    if not _SINK_LEVELS:
        _LEVEL_BEFORE[0] = logger.level
    _SINK_LEVELS.append(level)
    _set_level(logger)
    logger.addHandler(handler)
    try:
        yield logger
    finally:
        logger.removeHandler(handler)
        _SINK_LEVELS.remove(level)
        _set_level(logger)


def _set_level(logger: logging.Logger) -> None:
    # Never less than the sinks ask for, nor less than the logger was set to before.
    before = _LEVEL_BEFORE[0]
    wanted = [*_SINK_LEVELS, before] if before != logging.NOTSET else _SINK_LEVELS
    logger.setLevel(min(wanted) if wanted else logging.NOTSET)


@contextmanager
def run_log(path: Path, *, level: int = logging.INFO) -> Iterator[logging.Logger]:
    """Append this run's ``voxbench`` log records at ``level`` and above to ``path``."""
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(RedactingFormatter())
    handler.addFilter(_ThisRun(str(path)))
    token = _CURRENT_RUN.set(str(path))
    try:
        with _attached(handler, level) as logger:
            yield logger
    finally:
        handler.close()
        _CURRENT_RUN.reset(token)


@contextmanager
def log_to(handler: logging.Handler, *, level: int) -> Iterator[None]:
    """Also send ``voxbench`` log records at ``level`` and above to ``handler`` (``--verbose``)."""
    with _attached(handler, level):
        yield
