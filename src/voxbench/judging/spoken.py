"""Fact matching that survives speech: "8:30" said, heard as "8, 30" or "eight thirty".

It also decides which transcripts a turn's facts are checked on (``spoken_evidence``).

In audio runs facts are checked on what the agent was heard to say (ASR of its audio), where
numbers, times and prices come back in any written form. A fact alternative holds when its
regex matches the text as heard, or the text with numbers spelled out and punctuation
folded; an alternative that is a plain phrase (no regex operators) also holds when its own
spelled-out form appears as a phrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voxbench.audio.textnorm import join_compounds
from voxbench.audio.textnorm import normalize_text as spoken_form
from voxbench.audio.wer import word_error_rate
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
            if wanted and _same_with_compounds(heard, wanted):
                return True
    return False


def _same_with_compounds(heard: str, wanted: str) -> bool:
    """``wanted`` in ``heard`` once "after party" / "afterparty" are spelled alike on both."""
    said_words, wanted_words = heard.split(), wanted.split()
    said = " ".join(join_compounds(said_words, wanted_words))
    phrase = " ".join(join_compounds(wanted_words, said_words))
    return f" {phrase} " in f" {said} "


FIDELITY_MAX_WER = 0.75
"""Above this word error rate between the provider's transcript and what local ASR heard, the
audio does not corroborate the transcript. Calibrated on the oracle's eSpeak speech heard by
Whisper tiny.en (worst turn of the built-in benchmarks ≈ 0.71, median ≈ 0.27); a turn whose
audio is silent, cut short or says something else scores far above it."""


@dataclass(frozen=True)
class SpokenEvidence:
    """What facts are checked against on one turn, and why."""

    texts: tuple[str, ...]
    """Facts hold when they are in any of these; claims count when they are in any of them."""
    speech_wer: float | None
    """Word error rate of the heard audio against the provider transcript (audio runs)."""
    source: str


def spoken_evidence(provider_text: str, heard_text: str | None) -> SpokenEvidence:
    """Decide which transcripts the fact checks read on a turn.

    Text runs read the agent's text. Audio runs read what was heard; the provider's
    transcript counts too when the heard audio corroborates it (WER ≤ ``FIDELITY_MAX_WER``),
    so the weak local ASR's misspellings of names do not count as the agent's mistakes, while
    audio that is missing, cut short or different still fails.
    """
    if heard_text is None:
        return SpokenEvidence((provider_text,), None, "text")
    if not provider_text.strip():
        return SpokenEvidence((heard_text,), None, "heard")
    wer = round(word_error_rate(provider_text, heard_text), 4)
    if wer <= FIDELITY_MAX_WER:
        return SpokenEvidence((heard_text, provider_text), wer, "heard+corroborated transcript")
    return SpokenEvidence((heard_text,), wer, "heard (audio does not match the transcript)")
