"""``instruction_following``: IFEval-style verifiable instructions, each checked by code.

A record lists instruction ids (``instruction_id_list``, e.g. ``punctuation:no_comma``) and
their arguments (``kwargs``, one mapping per id; ``None`` values are absent arguments, as
the Hub datasets store them). Each id has a check here. A reply follows an instruction
*strictly* when the check passes on the reply as written, *loosely* when it passes on any of
its variants: markdown asterisks removed, first line dropped, last line dropped, both dropped
(and each of those without asterisks). Scores, each with its 95% interval:

- prompt level: the share of records whose every instruction is followed;
- instruction level: the share of instructions followed, over all records.

An instruction id without a check here, or whose arguments are missing, is *unchecked*:
counted apart (per id) and never passed; a record holding one is left out of the prompt level.
``language:response_language`` and the English check of ``change_case:english_*`` need the
optional ``langdetect`` package (``pip install 'voxbench[ifeval]'``); without it they are
unchecked, and said so.
"""

from __future__ import annotations

import inspect
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from voxbench.metrics.stats import Pooled, RecordStats

Check = Callable[..., bool]

# -- helpers ------------------------------------------------------------------------------------


def _compare(count: int, relation: str, target: int) -> bool:
    """IFEval's two relations: ``less than`` and ``at least``."""
    if relation == "less than":
        return count < target
    if relation == "at least":
        return count >= target
    raise ValueError(f"relation {relation!r} is neither 'less than' nor 'at least'")


def count_words(text: str) -> int:
    """Words: runs of letters, digits and underscores."""
    return len(re.findall(r"\w+", text))


_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "inc",
        "ltd",
        "co",
        "no",
        "fig",
        "approx",
        "dept",
        "est",
    ]
)
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)")


def count_sentences(text: str) -> int:
    """Sentences: text ending in ``.``, ``!`` or ``?`` (not after a common abbreviation or
    inside a decimal), plus a last one without an end mark."""
    count, start = 0, 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()].split()
        if match.group(0).startswith(".") and before and before[-1].lower() in _ABBREVIATIONS:
            continue
        if re.search(r"\w", text[start : match.end()]):
            count += 1
        start = match.end()
    return count + (1 if re.search(r"\w", text[start:]) else 0)


def _paragraphs_by_divider(text: str) -> list[str] | None:
    """Paragraphs between ``***`` dividers; None when one in the middle is empty."""
    parts = re.split(r"\s?\*\*\*\s?", text)
    kept = []
    for i, part in enumerate(parts):
        if part.strip():
            kept.append(part)
        elif 0 < i < len(parts) - 1:
            return None
    return kept


def _detect_language(text: str) -> str | None:
    """The ISO code langdetect reads (seeded: deterministic); "" when it cannot tell."""
    try:
        # langdetect ships no type information (no py.typed, no stubs)
        from langdetect import DetectorFactory, detect
        from langdetect.lang_detect_exception import (
            LangDetectException,
        )
    except ImportError:
        return None
    DetectorFactory.seed = 0
    try:
        return str(detect(text))
    except LangDetectException:
        return ""


class Unchecked(Exception):
    """The instruction cannot be checked here (why: the message)."""


def _language_or_unchecked(text: str) -> str:
    found = _detect_language(text)
    if found is None:
        raise Unchecked("needs langdetect: pip install 'voxbench[ifeval]'")
    return found


# -- the checks, one per instruction id ----------------------------------------------------------


def no_comma(text: str) -> bool:
    return "," not in text


def number_words(text: str, num_words: int, relation: str) -> bool:
    return _compare(count_words(text), relation, int(num_words))


def number_sentences(text: str, num_sentences: int, relation: str) -> bool:
    return _compare(count_sentences(text), relation, int(num_sentences))


def number_paragraphs(text: str, num_paragraphs: int) -> bool:
    parts = _paragraphs_by_divider(text)
    return parts is not None and len(parts) == int(num_paragraphs)


def nth_paragraph_first_word(
    text: str, num_paragraphs: int, nth_paragraph: int, first_word: str
) -> bool:
    # The official check: paragraphs split on "\n\n" (blank ones not counted), the first
    # word with leading quotes out, cut at its first . , ? ! ' or " ("Don't" → "don").
    paragraphs = re.split(r"\n\n", text)
    count = sum(1 for p in paragraphs if p.strip())
    if int(nth_paragraph) > count:
        return False
    paragraph = paragraphs[int(nth_paragraph) - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    first = ""
    for letter in word:
        if letter in {".", ",", "?", "!", "'", '"'}:
            break
        first += letter.lower()
    return count == int(num_paragraphs) and first == first_word.lower()


def json_format(text: str) -> bool:
    body = text.strip()
    fenced = re.fullmatch(r"```(?:json|JSON|Json)?\s*(.*?)\s*```", body, re.DOTALL)
    try:
        json.loads(fenced.group(1) if fenced else body)
    except ValueError:
        return False
    return True


def number_bullet_lists(text: str, num_bullets: int) -> bool:
    stars = re.findall(r"^\s*\*[^*].*$", text, re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", text, re.MULTILINE)
    return len(stars) + len(dashes) == int(num_bullets)


def title(text: str) -> bool:
    return any(t.strip() for t in re.findall(r"<<([^\n]+)>>", text))


def number_highlighted_sections(text: str, num_highlights: int) -> bool:
    single = [h for h in re.findall(r"\*[^\n*]*\*", text) if h.strip("*").strip()]
    double = [h for h in re.findall(r"\*\*[^\n*]*\*\*", text) if h.strip("*").strip()]
    return len(single) + len(double) >= int(num_highlights)


def multiple_sections(text: str, section_spliter: str, num_sections: int) -> bool:
    parts = re.split(rf"\s?{re.escape(section_spliter.strip())}\s?\d+\s?", text)
    return len(parts) - 1 >= int(num_sections)


def constrained_response(text: str) -> bool:
    return any(
        option in text
        for option in ("My answer is yes.", "My answer is no.", "My answer is maybe.")
    )


def english_lowercase(text: str) -> bool:
    return text.islower() and _language_or_unchecked(text) in ("en", "")


def english_capital(text: str) -> bool:
    return text.isupper() and _language_or_unchecked(text) in ("en", "")


def capital_word_frequency(text: str, capital_frequency: int, capital_relation: str) -> bool:
    capitals = [w for w in _word_tokenize(text) if w.isupper()]
    return _compare(len(capitals), capital_relation, int(capital_frequency))


def end_checker(text: str, end_phrase: str) -> bool:
    return text.strip().strip('"').lower().endswith(end_phrase.strip().lower())


def quotation(text: str) -> bool:
    body = text.strip()
    return len(body) > 1 and body[0] == '"' and body[-1] == '"'


def _pattern(keyword: str) -> str:
    """A keyword as the official checks use it: a regular expression (escaped only when it is
    not a valid one, where the official checks would stop with an error)."""
    try:
        re.compile(keyword)
    except re.error:
        return re.escape(keyword)
    return keyword


def _word_tokenize(text: str) -> list[str]:
    """nltk's ``word_tokenize`` (what the official capital-word count uses; "STATE-OF-THE-ART"
    is one word), without its punkt sentence split when punkt is not installed (nothing is
    downloaded): the tokens differ only in where a sentence-final period goes."""
    try:
        from nltk import word_tokenize

        return list(word_tokenize(text))
    except LookupError:
        from nltk.tokenize import NLTKWordTokenizer

        return list(NLTKWordTokenizer().tokenize(text))


def existence(text: str, keywords: Sequence[str]) -> bool:
    return all(re.search(_pattern(k), text, re.IGNORECASE) for k in keywords)


def frequency(text: str, keyword: str, frequency: int, relation: str) -> bool:
    count = len(re.findall(_pattern(keyword), text, re.IGNORECASE))
    return _compare(count, relation, int(frequency))


def forbidden_words(text: str, forbidden_words: Sequence[str]) -> bool:
    return not any(
        re.search(r"\b" + _pattern(w) + r"\b", text, re.IGNORECASE) for w in forbidden_words
    )


def letter_frequency(text: str, letter: str, let_frequency: int, let_relation: str) -> bool:
    return _compare(text.lower().count(letter.lower()), let_relation, int(let_frequency))


def response_language(text: str, language: str) -> bool:
    found = _language_or_unchecked(text)
    return found in (language, "")  # the official check passes text langdetect cannot read


def postscript(text: str, postscript_marker: str) -> bool:
    marker = postscript_marker.strip().lower()
    if marker == "p.p.s":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "p.s.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + re.escape(marker) + r".*$"
    return bool(re.search(pattern, text.lower(), re.MULTILINE))


def number_placeholders(text: str, num_placeholders: int) -> bool:
    return len(re.findall(r"\[.*?\]", text)) >= int(num_placeholders)


def repeat_prompt(text: str, prompt_to_repeat: str) -> bool:
    return text.strip().lower().startswith(prompt_to_repeat.strip().lower())


def two_responses(text: str) -> bool:
    parts = [p.strip() for p in text.split("******")]
    nonempty = [p for p in parts if p]
    empties_inside = any(not p for p in parts[1:-1])
    return len(nonempty) == 2 and not empties_inside and nonempty[0] != nonempty[1]


CHECKS: dict[str, Check] = {
    "punctuation:no_comma": no_comma,
    "length_constraints:number_words": number_words,
    "length_constraints:number_sentences": number_sentences,
    "length_constraints:number_paragraphs": number_paragraphs,
    "length_constraints:nth_paragraph_first_word": nth_paragraph_first_word,
    "detectable_format:json_format": json_format,
    "detectable_format:number_bullet_lists": number_bullet_lists,
    "detectable_format:title": title,
    "detectable_format:number_highlighted_sections": number_highlighted_sections,
    "detectable_format:multiple_sections": multiple_sections,
    "detectable_format:constrained_response": constrained_response,
    "change_case:english_lowercase": english_lowercase,
    "change_case:english_capital": english_capital,
    "change_case:capital_word_frequency": capital_word_frequency,
    "startend:end_checker": end_checker,
    "startend:quotation": quotation,
    "keywords:existence": existence,
    "keywords:frequency": frequency,
    "keywords:forbidden_words": forbidden_words,
    "keywords:letter_frequency": letter_frequency,
    "language:response_language": response_language,
    "detectable_content:postscript": postscript,
    "detectable_content:number_placeholders": number_placeholders,
    "combination:repeat_prompt": repeat_prompt,
    "combination:two_responses": two_responses,
}
"""Instruction id → its check (the id's arguments are the check's keyword parameters)."""


# -- following an instruction ---------------------------------------------------------------------


def loose_variants(text: str) -> list[str]:
    """The reply and its loose variants: asterisks out, first/last line dropped."""
    lines = text.split("\n")
    cut = [text, "\n".join(lines[1:]), "\n".join(lines[:-1]), "\n".join(lines[1:-1])]
    return [v for c in cut for v in (c, c.replace("*", ""))]


def _arguments(check: Check, kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    wanted = list(inspect.signature(check).parameters)[1:]
    given = {k: v for k, v in (kwargs or {}).items() if v is not None}
    missing = [name for name in wanted if name not in given]
    if missing:
        raise Unchecked(f"no {', '.join(missing)} in its kwargs")
    return {name: given[name] for name in wanted}


def follows(instruction: str, kwargs: Mapping[str, Any] | None, text: str) -> tuple[bool, bool]:
    """(strictly, loosely) followed; ``Unchecked`` when it cannot be checked."""
    check = CHECKS.get(instruction)
    if check is None:
        raise Unchecked("no check for this instruction id")
    args = _arguments(check, kwargs)
    try:
        strict = bool(text.strip()) and check(text, **args)
        loose = strict or any(v.strip() and check(v, **args) for v in loose_variants(text))
    except ValueError as exc:  # an argument out of its range (a relation IFEval has not)
        raise Unchecked(str(exc)) from exc
    return strict, bool(loose)


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        value = json.loads(value)
    return list(value) if isinstance(value, list | tuple) else []


def score(prediction: str, ctx: Any) -> RecordStats:
    """Per instruction: strictly and loosely followed; unchecked ids apart, with why."""
    ids = [str(i) for i in _as_list(ctx.columns.get("instruction_id_list"))]
    all_kwargs = _as_list(ctx.columns.get("kwargs"))
    checked: list[str] = []
    strict: list[int] = []
    loose: list[int] = []
    unchecked: dict[str, str] = {}
    for index, instruction in enumerate(ids):
        kwargs = all_kwargs[index] if index < len(all_kwargs) else {}
        try:
            s, lo = follows(instruction, kwargs if isinstance(kwargs, Mapping) else {}, prediction)
        except Unchecked as why:
            unchecked[instruction] = str(why)
            continue
        checked.append(instruction)
        strict.append(int(s))
        loose.append(int(lo))
    whole = not unchecked and bool(checked)
    return {
        "ids": checked,
        "strict": strict,
        "loose": loose,
        "unchecked": unchecked,
        "strict_prompt": int(all(strict)) if whole else None,
        "loose_prompt": int(all(loose)) if whole else None,
    }


def pool(
    stats: Sequence[RecordStats],
    rng: np.random.Generator | None,
    *,
    rate_pool: Callable[..., Callable[..., Pooled]],
) -> Pooled:
    """Prompt-level strict accuracy as the value; loose and instruction levels beside it, each
    with its interval; per-instruction accuracy; unchecked instructions counted per id (the
    pools are passed in by ``metrics.registry``, which imports this module)."""
    whole = [s for s in stats if s["strict_prompt"] is not None]
    out = rate_pool("strict_prompt")(whole, rng)
    out["loose_prompt"] = rate_pool("loose_prompt")(whole, rng)
    for level in ("strict", "loose"):  # Σ followed / Σ instructions, clustered by prompt
        per_record = [{"followed": sum(s[level]), "instructions": len(s[level])} for s in stats]
        out[f"{level}_instruction"] = rate_pool("followed", "instructions")(per_record, rng)
    per_id: dict[str, list[int]] = {}
    for s in stats:
        for instruction, ok in zip(s["ids"], s["strict"], strict=True):
            per_id.setdefault(instruction, []).append(ok)
    out["instructions"] = {
        k: {"strict": round(100 * float(np.mean(v)), 2), "n": len(v)}
        for k, v in sorted(per_id.items())
    }
    unchecked = Counter(i for s in stats for i in s["unchecked"])
    out["prompts_unchecked"] = len(stats) - len(whole)
    out["instructions_unchecked"] = dict(sorted(unchecked.items()))
    return out
