"""Strict reading of the evaluation form: one whole score in range and an explanation per
criterion, or a ``FormError`` saying what is wrong (the judge is told, once).

Accepted shapes, each criterion matched by name (case, ``_`` and spaces alike):

- the seed's lines: ``- Accent (1-5): 4 - explanation`` (also ``Accent: 4 — …``,
  ``**Accent:** 4/5 …``, ``4 out of 5``);
- for a single criterion, ``Score: 4`` with ``Explanation: …`` on the next line;
- a JSON object, bare or in a code fence: ``{"accent": {"score": 4, "explanation": …}}``,
  ``{"scores": [{"name": "accent", "score": 4, "explanation": …}]}``, or, for a single
  criterion, ``{"score": 4, "explanation": …}``.

A score that is not a whole number (``4.5``), is out of range, a criterion missing or given
twice, or an empty explanation is an error, never a guess. So is a range or a choice of two
scores in the lines form (``3-4``, ``3–4``, ``3 to 4``, ``3 or 4``: the second number within
the scale): the judge is asked once for one score, then the sample is undecided — it is
never read as the first number.

Each answer keeps where its score stands in the text (``score_at``) so that the logprob
weighting reads the score's own token: in the JSON form, the value of the criterion's
``"score"`` key (never a digit of an explanation written before it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from voxbench.judging.audio.rubric import BoundRubric, Criterion


class FormError(ValueError):
    """The answer is not a usable evaluation form (the message says why)."""


@dataclass(frozen=True)
class FormAnswer:
    """One criterion's answer."""

    score: int
    explanation: str
    score_at: int = -1
    """Character offset of the score in the answer (to find its token's logprobs)."""


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)
_NUMBER = r"(-?\d+(?:[.,]\d+)?)"
_SCORE_TAIL = re.compile(
    r"^\s*(?:\*\*)?\s*" + _NUMBER + r"(?:\s*(?:/|out of)\s*\d+)?(?:\*\*)?\s*(?:[-–—:,.]\s*)?(.*)$",
    re.S | re.I,
)


_RANGE = re.compile(r"^\s*(?:\*\*)?\s*(\d+)\s*(?:-|–|—|to|or)\s*(\d+)(?!\d)", re.I)
_SCORE_KEY = re.compile(r'(?<!\\)"score"\s*:\s*"?\s*(-?\d+)')
"""A ``"score"`` key of the JSON answer (a quote inside a string value is escaped)."""


def _no_range(criterion: Criterion, tail: str) -> None:
    """``FormError`` when ``tail`` starts with a range or a choice of two scores."""
    match = _RANGE.match(tail)
    if match is None:
        return
    first, second = int(match.group(1)), int(match.group(2))
    if first != second and criterion.low <= second <= criterion.high:
        raise FormError(
            f"{criterion.name}: {match.group(0).strip()!r} is a range or a choice of two "
            "scores; give one whole score"
        )


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def parse_form(text: str, bound: BoundRubric) -> dict[str, FormAnswer]:
    """The answer per criterion name; ``FormError`` when the form is not filled in properly."""
    stripped = text.strip()
    if not stripped:
        raise FormError("the answer is empty")
    fenced = _FENCE.match(stripped)
    body = fenced.group(1) if fenced else stripped
    if body.startswith("{"):
        return _from_json(body, text, bound)
    return _from_lines(text, bound)


def _check(criterion: Criterion, raw: Any, explanation: Any, at: int) -> FormAnswer:
    name = criterion.name
    if isinstance(raw, bool) or raw is None:
        raise FormError(f"{name}: no score")
    if isinstance(raw, str):
        raw = raw.strip().replace(",", ".")
        try:
            number = float(raw)
        except ValueError:
            raise FormError(f"{name}: score {raw!r} is not a number") from None
    elif isinstance(raw, (int, float)):
        number = float(raw)
    else:
        raise FormError(f"{name}: score is a {type(raw).__name__}, not a number")
    if number != int(number):
        raise FormError(f"{name}: score {raw} is not a whole number")
    score = int(number)
    if not criterion.low <= score <= criterion.high:
        raise FormError(f"{name}: score {score} is outside {criterion.low}-{criterion.high}")
    if not isinstance(explanation, str) or not explanation.strip():
        raise FormError(f"{name}: the explanation is missing")
    return FormAnswer(score, explanation.strip(), at)


def _from_json(body: str, text: str, bound: BoundRubric) -> dict[str, FormAnswer]:
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise FormError(f"the JSON answer does not parse ({exc.msg} at {exc.pos})") from None
    if not isinstance(data, dict):
        raise FormError("the JSON answer is not an object")
    entries: dict[str, Any] = {}
    listed = data.get("scores", data.get("criteria"))
    if isinstance(listed, list):
        for item in listed:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise FormError("each entry of the scores list needs a name")
            if _key(item["name"]) in entries:
                raise FormError(f"{item['name']}: given twice")
            entries[_key(item["name"])] = item
    elif isinstance(listed, dict):
        entries = {_key(k): v for k, v in listed.items()}
    elif "score" in data and len(bound.criteria) == 1:
        entries = {_key(bound.criteria[0].name): data}
    else:
        entries = {_key(k): v for k, v in data.items()}
    positions = _score_positions(text, entries)
    out: dict[str, FormAnswer] = {}
    for c in bound.criteria:
        entry = entries.get(_key(c.name))
        if entry is None:
            raise FormError(f"{c.name}: missing from the answer")
        if not isinstance(entry, dict):
            raise FormError(f'{c.name}: expected {{"score": …, "explanation": …}}')
        score = entry.get("score")
        out[c.name] = _check(c, score, entry.get("explanation"), positions.get(_key(c.name), -1))
    return out


def _score_positions(text: str, entries: dict[str, Any]) -> dict[str, int]:
    """Where each entry's score value stands in ``text``: the n-th ``"score"`` key of the
    text is the n-th entry's (entries keep the answer's order). When the keys and the entries
    do not pair up one to one, or a value differs, that score has no position (no weighting,
    never a digit read from elsewhere)."""
    scored = [(k, e) for k, e in entries.items() if isinstance(e, dict) and "score" in e]
    found = list(_SCORE_KEY.finditer(text))
    if len(found) != len(scored):
        return {}
    out: dict[str, int] = {}
    for (key, entry), match in zip(scored, found, strict=True):
        value = entry["score"]
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            same = False
        else:
            same = str(value).strip() == match.group(1)
        out[key] = match.start(1) if same else -1
    return out


def _from_lines(text: str, bound: BoundRubric) -> dict[str, FormAnswer]:
    lines = text.splitlines()
    offsets, total = [], 0
    for line in lines:
        offsets.append(total)
        total += len(line) + 1
    found: dict[str, FormAnswer] = {}
    for c in bound.criteria:
        label = re.escape(c.name).replace("_", r"[ _\-]?")
        head = re.compile(
            r"^\s*(?:[-*•]\s*)?(?:\*\*)?\s*"
            + label
            + r"(?:\s*score)?\s*(?:\(\s*\d+\s*[-–]\s*\d+\s*\))?"
            r"\s*(?:\*\*)?\s*:\s*(?:\*\*)?(.*)$",
            re.I,
        )
        hits = [(i, m) for i, line in enumerate(lines) if (m := head.match(line))]
        if len(hits) > 1:
            raise FormError(f"{c.name}: given twice")
        if hits:
            i, match = hits[0]
            _no_range(c, match.group(1))
            tail = _SCORE_TAIL.match(match.group(1))
            if tail is None:
                raise FormError(f"{c.name}: no score after its name")
            explanation = tail.group(2).strip()
            if not explanation and i + 1 < len(lines):
                explanation = re.sub(r"^\s*explanation\s*:\s*", "", lines[i + 1], flags=re.I)
            at = offsets[i] + match.start(1) + tail.start(1)
            found[c.name] = _check(c, tail.group(1), explanation, at)
            continue
        if len(bound.criteria) == 1:
            found[c.name] = _single(text, c, lines, offsets)
            continue
        raise FormError(f"{c.name}: missing from the answer")
    return found


def _single(text: str, c: Criterion, lines: list[str], offsets: list[int]) -> FormAnswer:
    """``Score: 4`` / ``Explanation: …`` for a rubric with one criterion."""
    score_line = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?score(?:\*\*)?\s*:\s*(?:\*\*)?(.*)$", re.I)
    hits = [(i, m) for i, line in enumerate(lines) if (m := score_line.match(line))]
    if not hits:
        raise FormError(f"{c.name}: missing from the answer")
    if len(hits) > 1:
        raise FormError("score given twice")
    i, match = hits[0]
    _no_range(c, match.group(1))
    tail = _SCORE_TAIL.match(match.group(1))
    if tail is None:
        raise FormError(f"{c.name}: no score after 'Score:'")
    explanation = tail.group(2).strip()
    rest = [
        re.sub(r"^\s*(?:[-*]\s*)?explanation\s*:\s*", "", ln, flags=re.I) for ln in lines[i + 1 :]
    ]
    if not explanation:
        explanation = " ".join(r.strip() for r in rest if r.strip())
    return _check(c, tail.group(1), explanation, offsets[i] + match.start(1) + tail.start(1))
