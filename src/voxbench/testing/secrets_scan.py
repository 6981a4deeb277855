"""Scan every file a run wrote for secrets: known key values, URL credentials, auth headers.

Used by the reliability tests after each faulty run, and by anyone who wants to check a run
directory before sharing it::

    assert find_secrets(run_path, secrets=[os.environ["OPENAI_API_KEY"]]) == []
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from voxbench.core.secrets import REDACTED, has_key_shaped_string

TEXT_SUFFIXES = frozenset({".json", ".jsonl", ".md", ".html", ".txt", ".log", ".yaml", ".csv"})
"""Files that hold text; audio is not scanned (random samples can look like anything)."""

_URL_CREDENTIALS = re.compile(r"[a-z][a-z0-9+.\-]*://([^/\s\"'@]+)@", re.IGNORECASE)
_AUTH_HEADER = re.compile(
    r"(authorization|x-api-key|api-key|x-goog-api-key)[\"']?\s*[:=]\s*[\"']?(bearer\s+)?([^\s\"',}]+)",
    re.IGNORECASE,
)


def find_secrets(run_path: str | Path, *, secrets: Iterable[str] = ()) -> list[str]:
    """Every leak in ``run_path``'s text files, as ``file:line: what``; empty when clean.

    Looks for each value in ``secrets``, credentials in a URL (``scheme://user:pass@``),
    an Authorization / API-key header with a value, and key-shaped strings (``sk-…``,
    ``AIza…``, bearer tokens) that ``core.secrets`` would have redacted.
    """
    values = [s for s in secrets if s]
    found: list[str] = []
    for file in sorted(Path(run_path).rglob("*")):
        if not file.is_file() or not _is_text(file):
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{file}:{number}"
            found += [f"{where}: the secret {_hint(v)}" for v in values if v in line]
            for match in _URL_CREDENTIALS.finditer(line):
                if match.group(1) != REDACTED:
                    found.append(f"{where}: credentials in a URL ({_hint(match.group(1))})")
            for match in _AUTH_HEADER.finditer(line):
                if match.group(3) != REDACTED:
                    found.append(f"{where}: the {match.group(1)} header with its value")
            if has_key_shaped_string(line):
                found.append(f"{where}: a key-shaped string")
    return found


def _is_text(file: Path) -> bool:
    return file.suffix in TEXT_SUFFIXES or file.name.startswith(".writer")


def _hint(value: str) -> str:
    # Never print the secret itself in a test failure: its first characters are enough.
    return f"{value[:3]}…" if len(value) > 6 else "…"
