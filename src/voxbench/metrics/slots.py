"""Slot filling: the (slot, value) pairs a reply gives, matched against the reference's.

A slot-filling task asks for the slots of a spoken request as a JSON object
(``{"date": "tomorrow", "time": "five am"}``; a slot said twice takes a list of values) or a
JSON list of ``{"slot": ..., "value": ...}`` objects (``type``/``filler`` and
``name``/``value`` are read too, SLURP's and other datasets' spellings). A reference may also
be SLURP's bracket annotation (``wake me up at [time : five am]``), which a reply may use as
well. Both sides are normalised the same way before matching: slot names lower-cased with
spaces, hyphens and underscores alike (``Place Name`` = ``place_name``), values lower-cased
with punctuation as spaces and whitespace collapsed (``5:00 AM.`` = ``5 00 am``). Pairs are
matched as a multiset: a pair given twice counts twice.

``slot_f1`` pools micro-averaged over the task: F1 = 2·TP / (2·TP + FP + FN) with TP, FP, FN
summed over records (a record with no slots and a reply with none adds nothing; a task with
nothing to find and nothing found scores 100).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from voxbench.metrics.answers import basic_normalize, json_values
from voxbench.metrics.stats import RecordStats

Pair = tuple[str, str]

_BRACKET = re.compile(r"\[\s*([^\[\]:]+?)\s*:\s*([^\[\]]*?)\s*\]")
_SLOT_KEYS = ("slot", "type", "name", "entity")
_VALUE_KEYS = ("value", "filler", "text")


def normalize_slot(name: str) -> str:
    """A slot name compared without case, punctuation or the space/``_``/``-`` difference."""
    return "_".join(basic_normalize(name.replace("_", " ").replace("-", " ")).split())


def normalize_value(value: Any) -> str:
    """A slot value compared without case, punctuation or extra whitespace."""
    return basic_normalize(value if isinstance(value, str) else str(value))


def _pairs_of_json(value: Any) -> list[Pair] | None:
    """The pairs a decoded JSON value holds, or None when it is not a slot structure."""
    if isinstance(value, dict) and set(value) == {"slots"}:
        value = value["slots"]
    if isinstance(value, dict):
        pairs: list[Pair] = []
        for slot, filled in value.items():
            for item in filled if isinstance(filled, list) else [filled]:
                if isinstance(item, dict | list) or item is None:
                    return None
                pairs.append((normalize_slot(str(slot)), normalize_value(item)))
        return pairs
    if isinstance(value, list):
        pairs = []
        for item in value:
            if not isinstance(item, dict):
                return None
            slot = next((item[k] for k in _SLOT_KEYS if isinstance(item.get(k), str)), None)
            filled = next((item[k] for k in _VALUE_KEYS if k in item), None)
            if slot is None or filled is None or isinstance(filled, dict | list):
                return None
            pairs.append((normalize_slot(slot), normalize_value(filled)))
        return pairs
    return None


def parse_slots(text: str) -> list[Pair] | None:
    """The (slot, value) pairs a text gives: its first JSON slot structure, else its bracket
    annotations; None when it has neither (an empty JSON object or list is no slots)."""
    for value in json_values(text):
        pairs = _pairs_of_json(value)
        if pairs is not None:
            return pairs
    found = _BRACKET.findall(text)
    if found:
        return [(normalize_slot(slot), normalize_value(value)) for slot, value in found]
    return None


def slot_stats(prediction: str, reference: str) -> RecordStats:
    """One record's true positives, false positives and false negatives over its pairs."""
    expected = Counter(parse_slots(reference) or [])
    parsed = parse_slots(prediction)
    got = Counter(parsed or [])
    tp = sum((expected & got).values())
    return {
        "tp": tp,
        "fp": sum(got.values()) - tp,
        "fn": sum(expected.values()) - tp,
        "parsed": int(parsed is not None),
    }


def micro_f1(tp: float, fp: float, fn: float) -> float:
    """F1 (%) of summed counts; 100 when there was nothing to find and nothing was found."""
    denominator = 2 * tp + fp + fn
    return 100.0 if denominator == 0 else 100.0 * 2 * tp / denominator


def dialogue_state_stats(prediction: str, reference: str) -> RecordStats:
    """Dialogue-state tracking (SpokenWOZ's ``joint_goal_accuracy`` and ``slot_accuracy``):
    how many of the reference's (slot, value) pairs the reply's state holds, and whether it
    holds them all with nothing else (``joint``: a reference with no slots is matched only
    by a reply giving none). Slots and values are read and normalised as for ``slot_f1``; a
    slot the reference gives several values needs each of them."""
    expected = Counter(parse_slots(reference) or [])
    parsed = parse_slots(prediction)
    got = Counter(parsed or [])
    correct = sum((expected & got).values())
    total = sum(expected.values())
    return {
        "joint": int(expected == got),
        "slots_correct": correct,
        "slots_total": total,
        "parsed": int(parsed is not None),
    }
