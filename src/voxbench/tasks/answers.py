"""Reading a model's free-text reply as an answer: a choice letter, a label, tool calls.

Models answer "The answer is (B).", "I think it's female." or a fenced JSON block; each
extractor returns None when the reply holds no answer, so a non-answer is counted as wrong
(and shown) instead of crashing or matching by accident.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

LETTERS = "ABCDEFGHIJ"


def basic_normalize(text: str) -> str:
    """Lower-case, punctuation and symbols to spaces, accents kept, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
    return " ".join(text.split())


def extract_choice(text: str, choices: list[str]) -> str | None:
    """The choice letter a reply gives (``B``, ``(B)``, ``Answer: B``, or a choice's words)."""
    letters = LETTERS[: max(1, len(choices))]
    stripped = text.strip()
    patterns = (
        rf"^\(?([{letters}])\)?(?:[.):,\s]|$)",
        rf"(?:answer|option|choice)\s*(?:is|:)?\s*\(?([{letters}])\)?\b",
        rf"\(([{letters}])\)",
    )
    for pattern in patterns:
        found = re.search(pattern, stripped, flags=re.IGNORECASE if pattern[0] != "^" else 0)
        if found:
            return found.group(1).upper()
    said = basic_normalize(stripped)
    named = [LETTERS[i] for i, c in enumerate(choices) if c and basic_normalize(c) in said]
    return named[0] if len(named) == 1 else None


def extract_label(text: str, labels: list[str]) -> str | None:
    """The label a reply names: an exact reply, else the label mentioned first as whole words."""
    said = basic_normalize(text)
    by_norm = {basic_normalize(label): label for label in labels}
    if said in by_norm:
        return by_norm[said]
    best: tuple[int, str] | None = None
    for norm, label in by_norm.items():
        found = re.search(rf"(?<!\w){re.escape(norm)}(?!\w)", said)
        if found and (best is None or found.start() < best[0]):
            best = (found.start(), label)
    return best[1] if best else None


def _json_values(text: str) -> list[Any]:
    """Every JSON object or array that can be decoded from a position in ``text``, in order."""
    decoder = json.JSONDecoder()
    out, i = [], 0
    while i < len(text):
        if text[i] in "[{":
            try:
                value, end = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                i += 1
                continue
            out.append(value)
            i = end
        else:
            i += 1
    return out


def _as_call(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):  # OpenAI tool_calls shape
        item = item["function"]
    name = item.get("name")
    args = item.get("arguments", item.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    if not isinstance(name, str) or not isinstance(args, dict):
        return None
    return {"name": name, "arguments": args}


def extract_calls(text: str) -> list[dict[str, Any]] | None:
    """Tool calls in a reply: ``{"name", "arguments"}``, a list of them, or ``{"tool_calls": [...]}``."""
    for value in _json_values(text):
        if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
            value = value["tool_calls"]
        items = value if isinstance(value, list) else [value]
        parsed = [_as_call(item) for item in items]
        calls = [c for c in parsed if c is not None]
        if calls and len(calls) == len(parsed):
            return calls
        if isinstance(value, list) and not value:
            return []
    return None
