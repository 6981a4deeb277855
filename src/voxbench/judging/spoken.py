"""Fact matching that survives speech: "8:30" said, heard as "8, 30" or "eight thirty".

In audio runs facts are checked on what the agent was heard to say (ASR of its audio), where
numbers, times and prices come back in any written form. A fact alternative holds when its
regex matches the text as heard, or the text with numbers spelled out and punctuation
folded; an alternative that is a plain phrase (no regex operators) also holds when its own
spelled-out form appears as a phrase.
"""

from __future__ import annotations

import re

from voxbench.audio.textnorm import normalize_text as spoken_form
from voxbench.core.benchmark import FactPattern

_OPERATORS = re.compile(r"(?<!\\)[\[\](){}?*+|^$]")


def _literal(pattern: str) -> str | None:
    """The phrase a regex stands for, when it is a plain phrase (escapes undone)."""
    if _OPERATORS.search(pattern.replace(r"\b", "")):
        return None
    return re.sub(r"\\(.)", r"\1", pattern.replace(r"\b", ""))


def fact_holds(fact: FactPattern, said: str) -> bool:
    """Whether ``fact`` is in ``said``, in any spoken or written form."""
    if fact.matches(said):
        return True
    heard = spoken_form(said)
    padded = f" {heard} "
    for alternative in fact.any_of:
        if re.search(alternative, heard, re.IGNORECASE):
            return True
        phrase = _literal(alternative)
        if phrase is not None:
            wanted = spoken_form(phrase)
            if wanted and f" {wanted} " in padded:
                return True
    return False
