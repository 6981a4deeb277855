"""Normalise English text before comparing transcripts.

Both sides of a comparison go through the same steps, so "$90", "90 dollars" and
"ninety dollars" all become "ninety dollars", "8:30 a.m." becomes "eight thirty am", and
"Turn-Taking!" becomes "turn taking". Numbers are spelled out (not the reverse) because
spelling is unambiguous while parsing words into digits is not ("one" the pronoun).

Times are read the way they are said, however they are written: "9.30" and "1245" after
"at"/"from"/"until"..., or with am/pm ("115pm", "930am"), become "nine thirty", "twelve
forty five", "one fifteen pm"; a dash between small numbers or times is said "to" ("1-3pm"
→ "one to three pm"). A bare "9.30" or "1245" elsewhere stays a number. Compounds
("after-party", "afterparty", "after party") differ in spacing only, which no single-text
rule can undo; ``join_compounds`` lines two texts up word by word before they are compared.

WER uses ``normalize_english``: Whisper's English normaliser exactly (the field's reference,
which expands contractions and writes numbers as digits). ``normalize_english_spoken`` is
voxbench's named option (``wer_spoken``, the conversation's heard-vs-transcript WER): Whisper's
after the time rules that cannot touch a number (am/pm, colons) and a few spoken forms.
``normalize_text`` (numbers spelled out) stays the spoken form facts are checked in.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache, lru_cache

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand"))
_ORDINAL_WORDS = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}
_FILLERS = {"um", "uh", "uhm", "umm", "hmm", "mm", "mhm", "er", "ah", "eh"}
_SPOKEN_SYMBOLS = {"%": " percent ", "&": " and ", "+": " plus ", "@": " at ", "=": " equals "}
_CURRENCIES = {
    "$": ("dollars", "dollar", "cents"),
    "€": ("euros", "euro", "cents"),
    "£": ("pounds", "pound", "pence"),
}


def number_to_words(n: int) -> str:
    """An integer in English words: 1299 → "one thousand two hundred ninety nine"."""
    if n < 0:
        return "minus " + number_to_words(-n)
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f" {_ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {number_to_words(rest)}" if rest else "")
    for value, word in _SCALES:
        if n >= value:
            high, rest = divmod(n, value)
            return f"{number_to_words(high)} {word}" + (f" {number_to_words(rest)}" if rest else "")
    raise AssertionError("unreachable")


def _ordinal(n: int) -> str:
    words = number_to_words(n).split()
    last = words[-1]
    if last in _ORDINAL_WORDS:
        words[-1] = _ORDINAL_WORDS[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


def _decimal(text: str) -> str:
    whole, _, frac = text.partition(".")
    spoken = number_to_words(int(whole)) if whole else "zero"
    if frac:
        spoken += " point " + " ".join(_ONES[int(d)] for d in frac)
    return spoken


def _money(match: re.Match[str]) -> str:
    plural, singular, cents_word = _CURRENCIES[match.group(1)]
    amount = match.group(2).replace(",", "")
    whole, _, cents = amount.partition(".")
    units = int(whole or 0)
    spoken = f"{number_to_words(units)} {singular if units == 1 else plural}"
    if cents and int(cents):
        spoken += f" {number_to_words(int(cents.ljust(2, '0')[:2]))} {cents_word}"
    return f" {spoken} "


def _clock(match: re.Match[str]) -> str:
    return _clock_words(int(match.group(1)), int(match.group(2)))


_TIME_WORDS = r"(?:at|from|until|till|til|to|by|before|after|around|about|between|and|or)"
"""Words after which "9.30" or "1245" is a time, not a number."""
_RANGE_SIDE = r"\d{1,2}(?:[:.]\d{2})?"
_DASHES = "\u2013\u2014-"  # "-" last: a literal inside a character class


def _time_or_none(hour: str, minute: str) -> str | None:
    h, m = int(hour), int(minute)
    if h > 23 or m > 59:
        return None
    return _clock_words(h, m)


def _clock_words(hour: int, minute: int) -> str:
    if minute == 0:
        return f" {number_to_words(hour)} "  # "2:00" is said "two" (or "two o'clock")
    if minute < 10:
        return f" {number_to_words(hour)} oh {number_to_words(minute)} "
    return f" {number_to_words(hour)} {number_to_words(minute)} "


_AMPM_RANGE = re.compile(
    rf"(?<![\d.:{_DASHES}])({_RANGE_SIDE})(\s?[ap]m)?\s?[{_DASHES}]\s?"
    rf"(?=\d{{1,2}}(?:[:.]\d{{2}})?\s?[ap]m\b)"
)
"""A dashed range whose end says am/pm ("1-3pm", "9am-5pm", "9.30-11.00 am")."""
_CLOCK_RANGE = re.compile(
    rf"(?<![\d.:{_DASHES}])(\d{{1,2}}:\d{{2}})()\s?[{_DASHES}]\s?(?=\d{{1,2}}:\d{{2}}\b)"
)
"""A dashed range of clock times ("10:30–11:15")."""


def _spoken_times(t: str, *, bare: bool = True) -> str:
    """Times written with a dot or as bare digits, and dashed ranges, as they are said.

    ``bare=False`` (the WER normaliser ``normalize_english_spoken``) keeps only what cannot be
    a number: a time with am/pm ("9.30 am", "115pm", "1-3pm") or a colon ("10:30–11:15").
    "9.30" or "1245" after "at"/"before"/"from"… and "5-10" stay numbers there: "before 1900",
    "from 2000 to 2010", "at 1200 feet" and "around 2.45 percent" are numbers, not times."""
    if bare:
        # "1-3pm", "9am-5pm", "10:30–11:15", "ages 5-10": the dash is said "to" (not in dates,
        # phone numbers or decimals: a side is one or two digits, maybe with minutes).
        t = re.sub(
            rf"(?<![\d.:{_DASHES}])({_RANGE_SIDE})(\s?[ap]m)?\s?[{_DASHES}]\s?"
            rf"(?=({_RANGE_SIDE})(?![\d.:]?\d|\s?[{_DASHES}]\s?\d))",
            lambda m: f"{m.group(1)}{m.group(2) or ''} to ",
            t,
        )
    else:
        for pattern in (_AMPM_RANGE, _CLOCK_RANGE):
            t = pattern.sub(lambda m: f"{m.group(1)}{m.group(2) or ''} to ", t)

    def dotted(m: re.Match[str]) -> str:
        spoken = _time_or_none(m.group(2), m.group(3))
        return m.group(0) if spoken is None else m.group(1) + spoken

    # "9.30 am", "9.30 to 11.00 am", "at 9.30", "to 11.45"
    t = re.sub(r"()\b(\d{1,2})\.(\d{2})\b(?=\s?to \d{1,2}\.\d{2}\s?[ap]m\b)", dotted, t)
    t = re.sub(r"()\b(\d{1,2})\.(\d{2})\b(?=\s?[ap]m\b)", dotted, t)
    if bare:
        t = re.sub(rf"(\b{_TIME_WORDS}\s)(\d{{1,2}})\.(\d{{2}})\b(?!\.\d)", dotted, t)
    # "115pm", "1245 pm", "at 1245", "by 0930"
    t = re.sub(r"()\b(\d{1,2})(\d{2})\b(?=\s?[ap]m\b)", dotted, t)
    if bare:
        t = re.sub(rf"(\b{_TIME_WORDS}\s)(\d{{2}})(\d{{2}})\b(?![.,:]\d)", dotted, t)
    return t


def _times_said(text: str, *, bare: bool = True) -> str:
    """Lower-cased ``text`` with times, a.m./p.m., o'clock and dotted acronyms as they are said
    (``bare``: also "9.30" and "1245" after time words, see ``_spoken_times``)."""
    t = unicodedata.normalize("NFKC", text).lower()
    t = re.sub(r"(?<=\d)\s?([ap])\.?m\b\.?", r" \1m ", t)  # "5pm", "5 p.m." → "5 pm"
    t = _spoken_times(t, bare=bare)
    t = (
        t.replace("\u2019", "'")
        .replace("\u2018", "'")
        .replace("\u2014", " ")
        .replace("\u2013", " ")
    )
    t = re.sub(r"\bo'clock\b", " ", t)
    t = re.sub(r"\b([ap])\.?\s?m\.?(?=\W|$)", r" \1m ", t)  # a.m. / p.m. / am / pm
    t = re.sub(r"\b((?:[a-z]\.){2,})", lambda m: m.group(1).replace(".", ""), t)  # a.s.r. → asr
    return re.sub(r"\b(\d{1,2}):(\d{2})\b", _clock, t)


def normalize_text(text: str) -> str:
    """Lower-case words with numbers spelled out and punctuation removed."""
    t = _times_said(text)
    t = re.sub(r"([$€£])\s?(\d[\d,]*(?:\.\d+)?)", _money, t)
    t = re.sub(r"(?<=\d),(?=\d{3}\b)", "", t)  # thousands separators
    t = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", lambda m: f" {_ordinal(int(m.group(1)))} ", t)
    t = re.sub(r"\d+\.\d+|\d+", lambda m: f" {_decimal(m.group(0))} ", t)
    for symbol, spoken in _SPOKEN_SYMBOLS.items():
        t = t.replace(symbol, spoken)
    t = t.replace("'", "")  # i'm → im on both sides keeps contractions one word
    t = re.sub(r"[^\w\s]|_", " ", t)
    return " ".join(w for w in t.split() if w not in _FILLERS)


def join_compounds(words: list[str], other: list[str]) -> list[str]:
    """``words`` with each adjacent pair joined where ``other`` has the pair as one word.

    "after party" against a text that says "afterparty" becomes "afterparty"; against one
    that says "after dinner" it stays two words.
    """
    vocabulary = set(other)
    out: list[str] = []
    i = 0
    while i < len(words):
        if i + 1 < len(words) and words[i] + words[i + 1] in vocabulary:
            out.append(words[i] + words[i + 1])
            i += 2
        else:
            out.append(words[i])
            i += 1
    return out


# -- WER: Whisper's English normaliser, and voxbench's spoken-form option ------------------------

ENGLISH_WER_NORMALIZER = "whisper-english"
"""The name outputs give the default normaliser of English WER: Whisper's
``EnglishTextNormalizer`` (package ``whisper-normalizer``) exactly, as AU-Harness and the public
ASR leaderboards apply it."""
SPOKEN_ENGLISH_NORMALIZER = "whisper-english+voxbench"
"""The name of the option ``normalize_english_spoken``: Whisper's after voxbench's spoken
forms (metric ``wer_spoken``; the conversation's heard-vs-transcript WER)."""


@cache
def _whisper_english() -> Callable[[str], str]:
    # Imported on first use: ``regex`` and the number tables cost ~40 ms at import.
    from whisper_normalizer.english import (
        EnglishTextNormalizer,
    )

    return EnglishTextNormalizer()


@lru_cache(maxsize=1024)  # WER and CER of one record normalise the same two texts
def normalize_english(text: str) -> str:
    """English text as the field compares it for WER: Whisper's English normaliser and nothing
    else (contractions expanded, "ninety dollars" → "$90", British → American spelling,
    fillers and bracketed text out)."""
    return _whisper_english()(text)


@lru_cache(maxsize=1024)
def normalize_english_spoken(text: str) -> str:
    """Whisper's English normaliser after voxbench's spoken forms, for text a TTS speaks: each
    rule below (the README lists them with an example) makes a written form and its spoken
    form, which Whisper's normalises apart, compare equal; none touches a number that is not
    a time (what Whisper's gives for "before 1900", "at 1200 feet", "1.25 million" stays).

    - clock times and times with am/pm are said: "8:30 a.m." → "eight thirty am" (Whisper's
      leaves "8 30 a m" but makes "eight thirty am" "830 am"), "115pm", "9.30 am";
    - a dash between times is said "to" when the range has am/pm or colons ("1-3pm",
      "10:30–11:15"); "o'clock" is not a word ("five o'clock" → Whisper's "50 clock");
    - curly apostrophes are apostrophes ("don’t" → "do not", not "don t");
    - dotted acronyms are one word ("A.S.R." → "asr", not "a s r");
    - words in round brackets are kept (an agent's "(ID checked at the door)" is spoken by its
      TTS; Whisper's drops them as a non-speech note); "[laughter]" is still dropped;
    - "cannot" → "can not" (as Whisper's expands "can't"); "okay" → "ok"; "50 %" → "50%"."""
    t = _times_said(text, bare=False)
    t = re.sub(r"[()]", " ", t)
    t = re.sub(r"\bcannot\b", "can not", t)
    t = re.sub(r"\bokay\b", "ok", t)
    t = re.sub(r"(?<=\d)\s+%", "%", t)
    return _whisper_english()(t)
