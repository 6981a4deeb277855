"""``numeric_match``: the final number of a free-text answer equals the reference's number.

The answer is looked for in order: the last ``\\boxed{…}``, the last ``#### n``, the last
"the (final) answer is n" / "answer: n", else the last number in the reply. A number may be
written with thousands commas, ``$``, ``%``, units after it, as a fraction (``3/4``,
``\\frac{3}{4}``), a decimal, or in words ("eighteen", "two hundred and five"). Numbers
are compared as numbers (``18.0`` = ``18`` = ``eighteen``; AU-Harness compared strings, and
failed every reply without ``\\boxed``). A GSM8K reference ends ``#### n``: its n is taken.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from voxbench.metrics.stats import Pooled, RecordStats

TOLERANCE = 1e-6
"""Relative difference under which two numbers are equal (decimals written out to 6 places)."""

_NUMBER = re.compile(
    r"(?<![\w.])-?\$?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?/\s?\d+(?:\.\d+)?)?(?![\d])"
    r"|(?<![\w.])-?\.\d+"
)
_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*(-?[\d.,]+)\s*\}\s*\{\s*(-?[\d.,]+)\s*\}")
_ANSWER_IS = re.compile(
    r"(?:final answer|the answer|answer)\s*(?:is|=|:)\s*(?:approximately\s+|about\s+)?",
    re.IGNORECASE,
)
_HASHES = re.compile(r"####\s*")

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_WORD = "|".join([*_UNITS, *_SCALES])
_WORDS = re.compile(rf"\b(?:minus\s+)?(?:{_WORD})(?:(?:\s+and\s+|[\s-]+)(?:{_WORD}))*\b", re.I)


def _words_value(text: str) -> Fraction:
    words = re.split(r"[\s-]+", text.lower())
    sign = -1 if words and words[0] == "minus" else 1
    total = current = 0
    for word in words:
        if word in _UNITS:
            current += _UNITS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
    return Fraction(sign * (total + current))


def _digits_value(text: str) -> Fraction | None:
    text = text.replace("$", "").replace(",", "").replace(" ", "")
    try:
        if "/" in text:
            num, den = text.split("/", 1)
            return Fraction(num) / Fraction(den) if Fraction(den) != 0 else None
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def numbers_in(text: str, *, words: bool = True) -> list[tuple[int, Fraction]]:
    """Every number in ``text`` with where it starts: digits, ``\\frac``, and (``words``)
    numbers in words."""
    found: list[tuple[int, int, Fraction]] = []
    for m in _FRAC.finditer(text):
        num, den = _digits_value(m.group(1)), _digits_value(m.group(2))
        if num is not None and den:
            found.append((m.start(), m.end(), num / den))
    for m in _NUMBER.finditer(text):
        value = _digits_value(m.group(0))
        if value is not None:
            found.append((m.start(), m.end(), value))
    for m in _WORDS.finditer(text) if words else ():
        found.append((m.start(), m.end(), _words_value(m.group(0))))
    found.sort(key=lambda f: (f[0], -f[1]))
    kept: list[tuple[int, Fraction]] = []
    end = -1
    for start, stop, value in found:  # a number inside another (the 3 of \frac{3}{4}) is not one
        if start >= end:
            kept.append((start, value))
            end = stop
    return kept


def _boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{…}`` (nested braces kept)."""
    start = text.rfind("\\boxed")
    if start < 0:
        return None
    brace = text.find("{", start)
    if brace < 0:
        return None
    depth = 0
    for i in range(brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[brace + 1 : i]
    return None


def extract_number(text: str) -> Fraction | None:
    """The final numeric answer of a reply (see the module's order), or None."""
    boxed = _boxed(text)
    if boxed is not None:
        inside = numbers_in(boxed)
        if inside:
            return inside[0][1]
    for marker in (_HASHES, _ANSWER_IS):
        hits = list(marker.finditer(text))
        if hits:
            after = numbers_in(text[hits[-1].end() :])
            if after:
                return after[0][1]
    # The last number: in digits if the reply has any ("no one else" is not an answer of 1).
    everywhere = numbers_in(text, words=False) or numbers_in(text)
    return everywhere[-1][1] if everywhere else None


def reference_number(reference: str) -> Fraction | None:
    """The reference's number: after its last ``####`` (GSM8K), else its last number."""
    hits = list(_HASHES.finditer(reference))
    tail = reference[hits[-1].end() :] if hits else reference
    found = numbers_in(tail)
    if not found:
        return None
    return found[0][1] if hits else found[-1][1]


def same_number(a: Fraction, b: Fraction) -> bool:
    """Equal as numbers, within ``TOLERANCE`` relative to the larger."""
    return abs(a - b) <= Fraction(TOLERANCE) * max(Fraction(1), abs(a), abs(b))


def _show(value: Fraction | None) -> str | None:
    if value is None:
        return None
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def score(prediction: str, ctx: Any) -> RecordStats:
    """``correct`` and both numbers as read (``answer`` None: the reply holds no number)."""
    expected = reference_number(ctx.reference)
    got = extract_number(prediction)
    ok = expected is not None and got is not None and same_number(expected, got)
    return {"correct": int(ok), "answer": _show(got), "reference": _show(expected)}


def pool(
    stats: Sequence[RecordStats],
    rng: np.random.Generator | None,
    *,
    rate_pool: Callable[[str], Callable[..., Pooled]],
) -> Pooled:
    """Accuracy (%), and how many replies held no number at all (``rate_pool``: the rate with
    its Wilson interval, passed in by ``metrics.registry``, which imports this module)."""
    out = rate_pool("correct")(stats, rng)
    out["no_answer"] = sum(1 for s in stats if s["answer"] is None)
    return out
