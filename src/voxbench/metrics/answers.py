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


def extract_label(
    text: str, labels: list[str], aliases: dict[str, str] | None = None
) -> str | None:
    """The label a reply names: an exact reply, else the label mentioned first as whole words.

    ``aliases`` are other spellings of labels (``{"angry": "anger"}``): a reply naming one
    names its label.
    """
    said = basic_normalize(text)
    by_norm = {basic_normalize(label): label for label in labels}
    for spelling, label in (aliases or {}).items():
        by_norm.setdefault(basic_normalize(spelling), label)
    if said in by_norm:
        return by_norm[said]
    best: tuple[int, int, str] | None = None
    for norm, label in by_norm.items():
        found = re.search(rf"(?<!\w){re.escape(norm)}(?!\w)", said)
        # The earliest mention wins; at one position the longer spelling ("very happy").
        if found and (best is None or (found.start(), -len(norm)) < best[:2]):
            best = (found.start(), -len(norm), label)
    return best[2] if best else None


def reference_label(
    reference: str, labels: list[str], aliases: dict[str, str], *, mentioned: bool
) -> str | None:
    """The label a dataset's reference stands for.

    ``mentioned``: the label a reference sentence names first (None when it names none).
    Otherwise the reference is the label: an alias is renamed, a label in other case or
    punctuation takes the label's spelling, anything else is kept as it is.
    """
    if mentioned:
        return extract_label(reference, labels, aliases)
    said = basic_normalize(reference)
    for spelling, label in aliases.items():
        if basic_normalize(spelling) == said:
            return label
    return next((label for label in labels if basic_normalize(label) == said), reference)


def json_values(text: str) -> list[Any]:
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
    for value in json_values(text):
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
