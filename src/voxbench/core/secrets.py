"""Secrets: read from the environment (or a ``.env`` file) and never written anywhere.

``get_secret`` is the only way code reads a key. ``redact`` scrubs anything about to be
written to disk or printed: values of secret-looking keys, every secret value read so far,
strings shaped like common API keys or bearer tokens, and credentials in URLs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dotenv

from voxbench.core.errors import ConfigError, PrerequisiteError

REDACTED = "***"

_SECRET_KEY = re.compile(
    r"(api[_-]?key|secret|password|passwd|authorization|credential|private[_-]?key"
    r"|^token$|access[_-]?token|[_-]token$|^auth$|^x-goog-api-key$)",
    re.IGNORECASE,
)
_SECRET_VALUE = re.compile(
    r"(sk-[A-Za-z0-9_\-]{16,}|sk-ant-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|xai-[A-Za-z0-9]{16,}|gsk_[A-Za-z0-9]{16,}|AKIA[0-9A-Z]{16}"
    r"|(?<=Bearer )[A-Za-z0-9._\-]{12,})"
)
_URL_USERINFO = re.compile(r"(?<=://)[^/\s\"'<>@]+@")
"""``user:password@`` in a URL (``--base-url http://user:pw@host``): the host stays readable."""
_seen_secrets: set[str] = set()
_dotenv_loaded = False


def load_dotenv(path: str | Path | None = None) -> Path | None:
    """Load a ``.env`` file into the environment, never overriding a variable already set.

    Without ``path``, the nearest ``.env`` is searched from the working directory upward
    (python-dotenv's ``find_dotenv(usecwd=True)``). python-dotenv parses the file as shells
    and the SDKs do: quotes, ``export``, and ``KEY=value  # comment`` (the comment is not
    part of the value). Returns the file loaded, or None.
    """
    global _dotenv_loaded
    _dotenv_loaded = True
    found = Path(path) if path is not None else Path(dotenv.find_dotenv(usecwd=True) or ".env")
    if not found.is_file():
        return None
    try:
        dotenv.load_dotenv(found, override=False, encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text ({exc.reason})",
            file=found,
            expected="a UTF-8 .env file of KEY=value lines (re-save it as UTF-8)",
        ) from None
    return found


def get_secret(*env_vars: str, required: bool = True, purpose: str = "") -> str | None:
    """Return the first set env var among ``env_vars``; raise naming them if none is set."""
    for var in env_vars:
        value = os.environ.get(var)
        if value:
            remember_secret(value)
            return value
    if required:
        names = " or ".join(env_vars)
        why = f" for {purpose}" if purpose else ""
        raise PrerequisiteError(f"missing API key{why}: set {names} (in the environment or .env)")
    return None


def remember_secret(value: str) -> None:
    """Register a secret value so ``redact`` scrubs it wherever it appears."""
    if value and len(value) >= 6:
        _seen_secrets.add(value)


def has_key_shaped_string(text: str) -> bool:
    """Whether ``text`` holds a string shaped like an API key or bearer token (by its shape
    alone: unlike ``redact_text``, the secrets this process has seen play no part)."""
    return _SECRET_VALUE.search(text) is not None


def redact_text(text: str) -> str:
    """Scrub known secret values and key-shaped strings from ``text``."""
    # Longest first: a secret that holds another ("my-token-secret" and "secret") must go
    # whole, or the rest of it would be left in the text.
    for secret in sorted(_seen_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    text = _URL_USERINFO.sub(REDACTED + "@", text)
    return _SECRET_VALUE.sub(REDACTED, text)


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a secret (``api_key``, ``Authorization``, ...)."""
    return bool(_SECRET_KEY.search(key)) and not key.lower().endswith(("_env", "_var"))


def redact(value: Any) -> Any:
    """Return a copy of ``value`` with every secret replaced by ``***``."""
    if isinstance(value, Mapping):
        return {
            # Secrets are strings: a number under a key like ``first_token`` is not one.
            k: (
                REDACTED
                if isinstance(k, str) and is_secret_key(k) and isinstance(v, str) and v
                else redact(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
