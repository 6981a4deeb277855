"""The one error family of voxbench.

Every error a user can cause names where the problem is (file, field) and what was
expected, so the CLI can print it as a message instead of a traceback.

Each error carries the CLI's exit code (the README's table): 2 a user error (a bad option,
config, benchmark package, run directory or audio file), 3 a missing or rejected
credential, 4 a run or scoring that could not be completed. 0 is a completed evaluation
whatever its scores; 1 a failed ``--fail-under`` / ``--baseline`` gate, or an unexpected
failure.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

EXIT_CODES: dict[int, str] = {
    0: "completed",
    1: "a gate failed (or an unforeseen failure)",
    2: "a user error",
    3: "a missing or rejected credential",
    4: "the run could not be completed",
}
"""The CLI's exit codes, as the README's table lists them (``tests`` check the two agree)."""


class ErrorCategory(StrEnum):
    """The closed taxonomy of provider and target failures (what went wrong, not where)."""

    AUTHENTICATION = "authentication"
    """401/403, a websocket auth close: the key is wrong or lacks access; never retried."""
    RATE_LIMIT = "rate_limit"
    """429: wait (``Retry-After``) and retry."""
    SERVER = "server"
    """5xx, 529 (overloaded), transient 408/409/425: retry."""
    TIMEOUT = "timeout"
    CONNECTIVITY = "connectivity"
    """Cannot connect, or the connection dropped mid-response."""
    BAD_REQUEST = "bad_request"
    """400/413/422 and other 4xx: the request (model name, options) is wrong."""
    NOT_FOUND = "not_found"
    """404: wrong model name or base URL."""
    PROTOCOL = "protocol"
    """The provider broke its documented wire format."""
    REFUSED = "refused"
    """The model refused to answer."""
    MALFORMED_TOOL_CALL = "malformed_tool_call"
    """The model produced a tool call the provider could not parse."""
    AGENT = "agent"
    """The system under test itself failed (an in-process agent raised, a tool loop)."""
    CASCADE = "cascade"
    """A stage of an STT → LLM → TTS cascade failed."""


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

    exit_code = 2

    def __init__(self, message: str, *, file: str | Path | None = None) -> None:
        self.file = str(file) if file is not None else None
        super().__init__(f"{self.file}: {message}" if self.file else message)


class PrerequisiteError(VoxbenchError):
    """Something the user must provide is missing: an API key, an optional dependency."""

    exit_code = 3


class AuthenticationError(PrerequisiteError):
    """A provider rejected the credentials (401/403, an auth close): the run stops at once.

    The message names the env var or option to fix; retrying cannot help."""


class ProtocolError(VoxbenchError):
    """A provider or fake server sent something that breaks its documented wire protocol."""


class ProviderError(VoxbenchError):
    """A call to a provider failed.

    ``category`` is an ``ErrorCategory``; ``retryable`` says whether the caller may try
    again, ``retry_after`` how long the provider asked us to wait.
    """

    def __init__(
        self,
        message: str,
        *,
        category: ErrorCategory | str,
        retryable: bool,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        self.category = ErrorCategory(category)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        # A rejected key is a credential problem wherever it surfaces (a judge, a task
        # model, a target): exit code 3, as AuthenticationError.
        if self.category is ErrorCategory.AUTHENTICATION:
            self.exit_code = AuthenticationError.exit_code
        super().__init__(message)


class RunError(VoxbenchError):
    """A run directory is missing, unreadable or inconsistent."""

    exit_code = 2


class RunIncompleteError(VoxbenchError):
    """The run (or the scoring) could not be completed: every turn or sample failed, or too
    many judgments are undecided. A run raises it after ``run.json`` says ``error``."""

    exit_code = 4


class RunLockedError(RunError):
    """Another process holds the run directory's writer lock."""


class StoreError(VoxbenchError):
    """The results store cannot be opened, migrated, read or written (named by its URL,
    password redacted)."""

    exit_code = 2
