"""The one error family of voxbench.

Every error a user can cause names where the problem is (file, field) and what was
expected, so the CLI can print it as a message instead of a traceback.
"""

from __future__ import annotations

from pathlib import Path


class VoxbenchError(Exception):
    """Base of every error voxbench raises on purpose."""

    exit_code = 1


class ConfigError(VoxbenchError):
    """A file or option the user gave is wrong: names the file, the field and what was expected."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        field: str | None = None,
        expected: str | None = None,
    ) -> None:
        self.file = str(file) if file is not None else None
        self.field = field
        self.expected = expected
        self.detail = message
        where = ": ".join(part for part in (self.file, self.field) if part)
        text = f"{where}: {message}" if where else message
        if expected:
            text += f" (expected {expected})"
        super().__init__(text)


class BenchmarkError(ConfigError):
    """A benchmark package is invalid."""


class AudioError(VoxbenchError):
    """An audio file is corrupt, empty, not audio, or in a format we cannot read."""

    def __init__(self, message: str, *, file: str | Path | None = None) -> None:
        self.file = str(file) if file is not None else None
        super().__init__(f"{self.file}: {message}" if self.file else message)


class PrerequisiteError(VoxbenchError):
    """Something the user must provide is missing: an API key, an optional dependency."""

    exit_code = 3


class ProtocolError(VoxbenchError):
    """A provider or fake server sent something that breaks its documented wire protocol."""


class ProviderError(VoxbenchError):
    """A call to a provider failed.

    ``category`` follows one taxonomy (authentication, rate_limit, server, timeout,
    connectivity, bad_request, not_found, protocol); ``retryable`` says whether the runner may
    try again, ``retry_after`` how long the provider asked us to wait.
    """

    def __init__(
        self,
        message: str,
        *,
        category: str,
        retryable: bool,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        self.category = category
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        super().__init__(message)


class RunError(VoxbenchError):
    """A run directory is missing, unreadable or inconsistent."""
