"""Task metrics: per-record statistics, pooled into a value with a 95% interval.

Each metric turns (prediction, record) into a small dict of statistics (``score``) and pools
a list of them into a value on a 0–100 scale (``pool``). Pooling is corpus-style where the
literature is (WER = Σ errors / Σ reference words, BLEU from summed n-gram counts). The 95%
interval depends on what the value is, and every pooled result names it (``interval``):

- a **yes/no rate** (accuracy, exact match, function-call match, SQL execution match, refusal,
  the LLM judge's verdicts, IFEval) gets the Wilson score interval the conversation scorecards
  report (``core.stats``); where one record yields several outcomes (each scored turn of a
  conversation record, each instruction of an IFEval prompt) the outcomes are clustered by
  record and the interval rests on the effective number of trials (``wilson-clustered``, as
  repeat groups do). A percentile bootstrap collapses there: 10/10 gives [100, 100];
- anything else (error rates, BLEU/chrF/TER, METEOR, F1, judge scores) gets a 95% percentile
  bootstrap over records (``BOOTSTRAP_SAMPLES`` draws, seeded), and none at all when every
  record has the same statistic: resampling cannot show variation that was not observed.

Records that failed (an error after retries) are never scored: the caller counts them apart.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein

from voxbench.audio.textnorm import (
    ENGLISH_WER_NORMALIZER,
    SPOKEN_ENGLISH_NORMALIZER,
    normalize_english,
    normalize_english_spoken,
)
from voxbench.core.errors import ConfigError
from voxbench.core.stats import pooled_rate_interval, wilson_interval
from voxbench.metrics import bertscore, comet, diarisation, ifeval, meteor, numeric, refusal, sql
from voxbench.metrics.answers import basic_normalize, extract_calls, extract_choice, extract_label
from voxbench.metrics.slots import dialogue_state_stats, micro_f1, slot_stats
from voxbench.metrics.stats import Pooled, RecordStats

BOOTSTRAP_SAMPLES = 1000
NO_SPACE_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "my", "km", "yue", "bo"})
"""Languages written without spaces between words: their WER is computed on characters."""


WILSON = "wilson"
"""The interval of a yes/no rate over independent records (``core.stats.wilson_interval``)."""
WILSON_CLUSTERED = "wilson-clustered"
"""A yes/no rate over outcomes grouped by record: Wilson over the effective number of trials."""
BOOTSTRAP = "bootstrap"
"""A 95% percentile bootstrap over records (``BOOTSTRAP_SAMPLES`` draws, seeded)."""
NO_INTERVAL = "none"
"""No interval: nothing to resample (every record the same, or bootstrapping not asked)."""


INTERVAL_METHODS = {
    WILSON: "95% Wilson score interval of the rate (clustered by record where one record "
    "gives several outcomes: wilson-clustered)",
    BOOTSTRAP: f"95% percentile bootstrap over records ({BOOTSTRAP_SAMPLES} draws, seeded; "
    "none when every record scores the same)",
}
"""How each kind of metric gets its interval (``metric_setup`` writes it into run.json)."""


@dataclass(frozen=True)
class ScoringContext:
    """What a metric knows about a record besides the prediction."""

    reference: str
    language: str
    target_language: str
    answer: str
    labels: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    tool_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Tool name → its JSON-schema ``parameters`` (function-call match compares by type)."""
    columns: Mapping[str, Any] = field(default_factory=dict)
    """The record's columns (read-only: a metric never changes them), e.g. IFEval's
    ``instruction_id_list`` and ``kwargs``."""
    database: str | None = None
    """The SQLite file the record's SQL runs on (``sql_execution_match``), resolved by the plan."""
    query_timeout_s: float = 10.0
    """How long one of the record's SQL queries may run (the task's ``sql.timeout_s``)."""
    label_map: dict[str, str] = field(default_factory=dict)
    """Other spellings of the labels → the label (a reply naming one names its label)."""


@dataclass(frozen=True)
class Metric:
    """A named metric: how to score one record and how to pool many."""

    name: str
    description: str
    higher_is_better: bool
    score: Callable[[str, ScoringContext], RecordStats]
    pool: Callable[[Sequence[RecordStats], np.random.Generator | None], Pooled]
    judged: bool = False
    """Scored by the LLM judge (``tasks.judge``), not by ``score``: ``score`` then only says
    the record was not judged (it is left undecided)."""
    hears_audio: bool = False
    """Judged by the audio judge on the model's spoken answer (``tasks.audio_judge_metric``)."""
    hear: Callable[[Any], RecordStats] | None = None
    """Scores the spoken answer (an ``Audio``, or None when the answer had none) on this
    machine, without a judge: ``audio_quality`` (DNSMOS). Only with ``hears_audio``."""
    columns: tuple[str, ...] = ()
    """Record columns the metric reads (``ScoringContext.columns``): the plan checks every
    selected record has them, so a wrong column is an error before any request."""
    interval: str = BOOTSTRAP
    """How the pooled value's 95% interval is made: ``WILSON`` for a yes/no rate,
    ``BOOTSTRAP`` otherwise (the pooled result names what it used: ``interval``)."""
    prerequisite: Callable[[], Any] | None = None
    """Checks, before a run that uses the metric sends anything, that what it needs is there
    (an optional extra, a local model); raises a ``PrerequisiteError`` saying what to do."""


# -- text normalisation ----------------------------------------------------------------------


BASIC_NORMALIZER = "basic"
"""Other languages: lower-case, punctuation and symbols out, accents and marks kept (Whisper's
basic normaliser drops combining marks, which splits words of Indic scripts)."""


def _english(language: str) -> bool:
    return language.split("-")[0] == "en"


def normalizer_for(language: str, *, spoken: bool = False) -> str:
    """The name of the normaliser WER/CER use for ``language`` (reported beside the value);
    ``spoken``: ``wer_spoken``'s (voxbench's spoken forms before Whisper's, English only)."""
    if not _english(language):
        return BASIC_NORMALIZER
    return SPOKEN_ENGLISH_NORMALIZER if spoken else ENGLISH_WER_NORMALIZER


def normalize_for(text: str, language: str, *, spoken: bool = False) -> str:
    """English: Whisper's English normaliser exactly (``spoken``: after voxbench's spoken
    forms, ``audio.textnorm.normalize_english_spoken``); others: basic."""
    if not _english(language):
        return basic_normalize(text)
    return normalize_english_spoken(text) if spoken else normalize_english(text)


def _units(text: str, language: str, chars: bool, spoken: bool = False) -> list[str]:
    norm = normalize_for(text, language, spoken=spoken)
    if language.split("-")[0] in NO_SPACE_LANGUAGES:
        # Characters for WER and CER alike; a space is no unit where the script writes none
        # (a spaced 我想 预订 scored CER 29% against the same characters unspaced).
        return list(norm.replace(" ", ""))
    return list(norm) if chars else norm.split()


_HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Hiragana, katakana and the CJK ideograph blocks."""
_MIXED_UNIT = re.compile(f"[{_HAN_KANA}]|[^\\s{_HAN_KANA}]+")
"""A unit of the mixed error rate: one Han or kana character, or a run of anything else."""


def mixed_units(text: str) -> list[str]:
    """Code-switched text as MER counts it: each Chinese/Japanese character alone, every
    other word whole (``我想book一个table`` → 我 想 book 一 个 table)."""
    return _MIXED_UNIT.findall(basic_normalize(text))


def _edit_counts(ref: list[str], hyp: list[str], normalizer: str) -> RecordStats:
    return {"errors": Levenshtein.distance(ref, hyp), "units": len(ref), "normalizer": normalizer}


def _mixed_edit_stats(prediction: str, ctx: ScoringContext) -> RecordStats:
    return _edit_counts(mixed_units(ctx.reference), mixed_units(prediction), "mixed")


def _edit_stats(
    prediction: str, ctx: ScoringContext, chars: bool, spoken: bool = False
) -> RecordStats:
    return _edit_counts(
        _units(ctx.reference, ctx.language, chars, spoken),
        _units(prediction, ctx.language, chars, spoken),
        normalizer_for(ctx.language, spoken=spoken),
    )


def _ratio_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    errors = np.array([s["errors"] for s in stats], dtype=float)
    units = np.array([s["units"] for s in stats], dtype=float)
    pooled = _with_interval(_error_rate(errors, units), len(stats), rng)
    names = sorted({s["normalizer"] for s in stats if s.get("normalizer")})
    return {**pooled, "normalizer": ", ".join(names)} if names else pooled


_COUNT_BITS = 32
"""Bits of a packed record's low half (its units; the errors sit above them)."""


def _error_rate(errors: np.ndarray, units: np.ndarray) -> Callable[[np.ndarray], Any]:
    """100 × Σ errors / Σ units (at least 1) over the records an index array picks.

    The bootstrap sums 1,000 draws of n records: where the counts are whole numbers whose
    sums fit in 32 bits, each record's pair is packed into one int64 (errors above, units
    below) so a draw gathers (``_gathered``) and sums one array, not two (with the gather
    in place, ~45% less time at n=6000). Whole numbers add exactly as floats or as
    integers: the rates are the same floats."""
    if not _packable(errors, units):

        def rate(idx: np.ndarray) -> np.ndarray:
            total = units[idx].sum(axis=-1)
            return 100 * errors[idx].sum(axis=-1) / np.maximum(total, 1)

        return rate
    packed = (errors.astype(np.int64) << _COUNT_BITS) | units.astype(np.int64)
    low = (1 << _COUNT_BITS) - 1

    def packed_rate(idx: np.ndarray) -> np.ndarray:
        total = _gathered(packed, idx).sum(axis=-1)
        summed_errors = (total >> _COUNT_BITS).astype(float)
        return 100 * summed_errors / np.maximum((total & low).astype(float), 1)

    return packed_rate


def _gathered(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``values[idx]`` for 8-byte ``values`` (int64, float64), written over the int64 index
    array itself: a bootstrap block's draws are used once, and not filling a second array
    as large (16 MB a block at n=6000) saves about a third of each draw's gather. The same
    shape and layout as ``values[idx]``, so its sums add in the same order."""
    if values.dtype.itemsize != idx.dtype.itemsize:  # no room in place: a new array
        return values[idx]
    out = idx if values.dtype == idx.dtype else idx.view(values.dtype)
    # Each index is read before its own slot is written ("clip": they are all in range).
    return np.take(values, idx, out=out, mode="clip")


def _mean_of(values: np.ndarray, scale: float = 1.0) -> Callable[[np.ndarray], Any]:
    """``scale`` × the mean of the float ``values`` an index array picks."""
    return lambda idx: scale * _gathered(values, idx).mean(axis=-1)


def _packable(errors: np.ndarray, units: np.ndarray) -> bool:
    """Whether every count is a whole number ≥ 0 and any n of them sum below 2³¹ (errors,
    kept clear of the sign bit) and 2³² (units, kept out of the errors' bits)."""
    n = len(errors)
    if n == 0:
        return False
    both = np.concatenate([errors, units])
    whole = bool(np.all(both >= 0) and np.all(np.floor(both) == both))
    return whole and n * errors.max() < 2**31 and n * units.max() < 2**_COUNT_BITS


def _mean_pool(key: str) -> Callable[..., Pooled]:
    """The mean of a graded ``key`` (%) with its bootstrap interval (not for yes/no values:
    ``_rate_pool``)."""

    def pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
        values = np.array([float(s[key]) for s in stats])
        return _with_interval(_mean_of(values, 100), len(stats), rng)

    return pool


def _rate_pool(key: str, trials: str | None = None) -> Callable[..., Pooled]:
    """A yes/no rate (%) with its Wilson interval: ``key`` counts the passes of a record (0/1,
    or out of ``trials`` outcomes). A record's outcomes — and records that share a
    ``cluster`` (the scored turns of one conversation record) — are clustered; with one
    outcome per cluster it is the plain Wilson interval of passes out of n."""

    def pool(stats: Sequence[RecordStats], rng: np.random.Generator | None = None) -> Pooled:
        if not stats:
            return {"value": None, "ci": None, "n": 0, "interval": WILSON}
        cells: list[tuple[Any, Any, bool]] = []
        for i, s in enumerate(stats):
            passed, total = int(s[key]), int(s[trials]) if trials else 1
            cluster = s.get("cluster", i)
            cells += [(cluster, (i, j), j < passed) for j in range(total)]
        if not cells:
            return {"value": None, "ci": None, "n": len(stats), "interval": WILSON}
        out: Pooled
        if len({c for c, _, _ in cells}) == len(cells):
            passed = sum(y for _, _, y in cells)
            rate, ci = passed / len(cells), wilson_interval(passed, len(cells))
            out = {"interval": WILSON}
        else:
            rate_or_none, ci, n_eff = pooled_rate_interval(cells)
            rate = float(rate_or_none or 0.0)
            out = {"interval": WILSON_CLUSTERED, "effective_n": round(float(n_eff or 0.0), 2)}
        return {
            "value": round(100 * rate, 2),
            "ci": None if ci is None else [round(100 * ci[0], 2), round(100 * ci[1], 2)],
            "n": len(stats),
            **out,
        }

    return pool


def _with_interval(
    statistic: Callable[[np.ndarray], Any], n: int, rng: np.random.Generator | None
) -> Pooled:
    """The statistic on every record, and its 95% percentile-bootstrap interval (none when
    every draw gives the same value: the records show no variation to resample). Each index
    array is made for one call of ``statistic``, which may overwrite it."""
    if n == 0:
        return {"value": None, "ci": None, "n": 0, "interval": BOOTSTRAP}
    value = float(statistic(np.arange(n)))
    ci = None
    kind = NO_INTERVAL
    if rng is not None:
        # Draws in blocks: a 10 000-record task would need 80 MB of indices at once.
        block = max(1, min(BOOTSTRAP_SAMPLES, 2_000_000 // n))
        samples = np.concatenate(
            [
                np.asarray(statistic(rng.integers(0, n, size=(size, n))), dtype=float)
                for size in _blocks(BOOTSTRAP_SAMPLES, block)
            ]
        )
        if np.ptp(samples) > 0:
            lo, hi = np.percentile(samples, [2.5, 97.5])
            ci = [round(float(lo), 2), round(float(hi), 2)]
            kind = BOOTSTRAP
    return {"value": round(value, 2), "ci": ci, "n": n, "interval": kind}


def _blocks(total: int, size: int) -> list[int]:
    return [min(size, total - start) for start in range(0, total, size)]


def _rowwise(func: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], Any]:
    """A statistic over one index vector, applied to each row of a matrix of draws."""

    def apply(idx: np.ndarray) -> Any:
        if idx.ndim == 1:
            return func(idx)
        return np.array([func(row) for row in idx])

    return apply


# -- classification ---------------------------------------------------------------------------


def _answer_of(prediction: str, ctx: ScoringContext) -> str | None:
    if ctx.answer == "choice":
        return extract_choice(prediction, list(ctx.choices))
    if ctx.answer == "label":
        return extract_label(prediction, list(ctx.labels) or [ctx.reference], ctx.label_map)
    return basic_normalize(prediction)


def _reference_answer(ctx: ScoringContext) -> str:
    if ctx.answer == "choice":
        return ctx.reference.strip().upper()
    if ctx.answer == "label":
        return ctx.reference
    return basic_normalize(ctx.reference)


def _accuracy(prediction: str, ctx: ScoringContext) -> RecordStats:
    answer = _answer_of(prediction, ctx)
    reference = _reference_answer(ctx)
    return {"correct": int(answer == reference), "answer": answer, "label": reference}


def _exact_match(prediction: str, ctx: ScoringContext) -> RecordStats:
    return {"correct": int(basic_normalize(prediction) == basic_normalize(ctx.reference))}


def _macro_f1_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    refs = [s["label"] for s in stats]
    preds = [s["answer"] for s in stats]
    classes = sorted({*refs, *(p for p in preds if p is not None)})
    index = {c: i for i, c in enumerate(classes)}
    ref_idx = np.array([index[r] for r in refs])
    pred_idx = np.array([index[p] if p is not None else -1 for p in preds])

    def f1(idx: np.ndarray) -> float:
        r, p = ref_idx[idx], pred_idx[idx]
        scores = []
        for c in range(len(classes)):
            tp = int(np.sum((r == c) & (p == c)))
            fp = int(np.sum((r != c) & (p == c)))
            fn = int(np.sum((r == c) & (p != c)))
            if tp + fp + fn:
                scores.append(2 * tp / (2 * tp + fp + fn))
        return 100 * float(np.mean(scores)) if scores else 0.0

    return _with_interval(_rowwise(f1), len(stats), rng)


# -- function calls ---------------------------------------------------------------------------


_BFCL_TYPES: dict[str, type] = {
    "string": str, "integer": int, "int": int, "float": float, "number": float, "double": float,
    "boolean": bool, "bool": bool, "array": list, "tuple": list, "list": list, "dict": dict,
    "object": dict,
}  # fmt: skip
"""A parameter's declared type (BFCL's names and JSON schema's) → the Python type BFCL checks."""


def bfcl_standardize(text: str) -> str:
    """BFCL's ``standardize_string``: spaces and ``,./-_*^`` out, lower-cased, ``'`` → ``"``
    ("Team Lunch" = "TeamLunch", "centimeters." = "centimeters")."""
    return re.sub(r"[ \,\.\/\-\_\*\^]", "", text).lower().replace("'", '"')


def _declared_type(schema: dict[str, Any] | None, expected: Any) -> type | None:
    declared = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(declared, str) and declared in _BFCL_TYPES:
        return _BFCL_TYPES[declared]
    if expected is None or isinstance(expected, _PossibleObject):
        return dict if isinstance(expected, _PossibleObject) else None
    return type(expected)  # no schema: the reference value's own type


def _standardized(value: Any) -> Any:
    if isinstance(value, str):
        return bfcl_standardize(value)
    if isinstance(value, list):
        return [bfcl_standardize(v) if isinstance(v, str) else v for v in value]
    return value


def values_equal(expected: Any, got: Any, schema: dict[str, Any] | None = None) -> bool:
    """One argument value against one accepted value, by BFCL's AST checker: the value must
    have the declared type exactly (``5.0`` or ``"42"`` is no integer; an integer is a float,
    as Python converts it; an array's items their declared type), strings compare after
    ``bfcl_standardize``, arrays in order (a set where the schema says ``uniqueItems``, a JSON
    schema rule BFCL's data never uses), objects key by key."""
    schema = schema if isinstance(schema, dict) else {}
    kind = _declared_type(schema, expected)
    if kind is float and type(got) is int:
        got = float(got)
    if kind is not None and type(got) is not kind:
        # BFCL's "variable": a reference written in another type than the declared one
        # (a variable name for a number) accepts a value of the reference's type.
        if type(expected) is kind or type(got) is not type(expected):
            return False
        return got == expected
    if isinstance(got, dict) and isinstance(expected, dict):
        props = schema.get("properties", {})
        return set(expected) == set(got) and all(
            values_equal(v, got[k], props.get(k)) for k, v in expected.items()
        )
    if isinstance(got, list):
        if not isinstance(expected, list) or len(got) != len(expected):
            return False
        items = schema.get("items") if isinstance(schema.get("items"), dict) else None
        item_kind = _declared_type(items, None)
        if item_kind is not None and any(type(g) is not item_kind for g in got):
            return False  # BFCL's nested type check: ["3", "1"] is no list of integers
        if schema.get("uniqueItems"):
            remaining = list(got)
            for e in expected:
                hit = next((g for g in remaining if values_equal(e, g, items)), _MISSING)
                if hit is _MISSING:
                    return False
                remaining.remove(hit)
            return True
        if item_kind is dict or any(isinstance(g, dict | list) for g in got):
            return all(values_equal(e, g, items) for e, g in zip(expected, got, strict=True))
        return bool(_standardized(got) == _standardized(expected))
    if isinstance(got, str):
        return isinstance(expected, str) and bfcl_standardize(got) == bfcl_standardize(expected)
    if type(expected) is bool or type(got) is bool:
        return type(got) is type(expected) and got == expected
    return bool(got == expected)


_MISSING = object()


def _call_name(name: str) -> str:
    # BFCL's dotted names ("math.factorial") reach models that refuse dots as "math_factorial".
    return name.replace(".", "_")


def expected_calls(reference: str) -> list[dict[str, Any]]:
    """The reference's calls as ``{"name", "arguments": {arg: (accepted values, optional)}}``.

    Either voxbench's ``[{"name": ..., "arguments": {...}}]`` (each value the one accepted)
    or BFCL's possible answers ``[{"func": {"arg": [value, other value, ""]}}]`` (any listed
    value accepted; ``""`` listed: the argument may be left out). Empty (``[]`` or blank):
    no call is expected (BFCL's irrelevance set).
    """
    data = json.loads(reference) if reference.strip() else []
    if isinstance(data, dict):
        data = [data]
    calls = []
    for item in data:
        if isinstance(item.get("name"), str) and set(item) <= {"name", "arguments"}:
            args = {k: ([v], False) for k, v in item.get("arguments", {}).items()}
            calls.append({"name": item["name"], "arguments": args})
            continue
        ((name, params),) = item.items()
        calls.append({"name": name, "arguments": _possible_arguments(params)})
    return calls


class _PossibleObject(dict[str, tuple[list[Any], bool]]):
    """A dict argument in BFCL's possible answers: its keys' accepted values, as for arguments."""


def _possible_arguments(params: dict[str, Any]) -> dict[str, tuple[list[Any], bool]]:
    out = {}
    for arg, accepted in params.items():
        accepted = accepted if isinstance(accepted, list) else [accepted]
        values = [_PossibleObject(_possible_arguments(a)) if isinstance(a, dict) else a
                  for a in accepted if a != ""]  # fmt: skip
        out[arg] = (values, "" in accepted)
    return out


def _arg_ok(accepted: tuple[list[Any], bool], given: Any, schema: Any) -> bool:
    return any(_value_ok(a, given, schema) for a in accepted[0])


def _value_ok(accepted: Any, given: Any, schema: Any) -> bool:
    if not isinstance(accepted, _PossibleObject):
        return values_equal(accepted, given, schema)
    # BFCL's dict_checker: each key's value, strings standardised, among its accepted values
    # by equality (no type check inside a dict: 2.0 = 2); a key left out must be optional.
    return (
        isinstance(given, dict)
        and set(given) <= set(accepted)
        and all(
            _standardized(given[k]) in [_standardized(v) for v in a[0]] if k in given else a[1]
            for k, a in accepted.items()
        )
    )


def _call_matches(call: dict[str, Any], got: dict[str, Any], params: dict[str, Any]) -> bool:
    args = call["arguments"]
    return set(got["arguments"]) <= set(args) and all(
        _arg_ok(a, got["arguments"][k], params.get(k)) if k in got["arguments"] else a[1]
        for k, a in args.items()
    )


def _function_calls(prediction: str, ctx: ScoringContext) -> RecordStats:
    expected = expected_calls(ctx.reference)
    got = extract_calls(prediction)
    if not expected:  # irrelevance: right when the reply calls nothing
        return {"correct": int(not got), "parsed": 1, "name": int(not got), "fields": {}}
    if got is None:
        unparsed = {f"{c['name']}.{a}": 0 for c in expected for a in c["arguments"]}
        return {"correct": 0, "parsed": 0, "name": 0, "fields": unparsed}
    remaining = list(got)
    fields: dict[str, int] = {}
    names_ok = len(got) == len(expected)
    all_ok = names_ok
    schemas = {_call_name(k): v for k, v in ctx.tool_schemas.items()}
    for call in expected:
        params = schemas.get(_call_name(call["name"]), {}).get("properties", {})
        named = [g for g in remaining if _call_name(g["name"]) == _call_name(call["name"])]
        # Parallel calls of one function: pair with a call whose arguments match, if any.
        match = next((g for g in named if _call_matches(call, g, params)), None)
        match = match or (named[0] if named else None)
        args = call["arguments"]
        if match is None:
            names_ok = all_ok = False
            fields.update({f"{call['name']}.{a}": 0 for a in args})
            continue
        remaining.remove(match)
        for arg, accepted in args.items():
            given = match["arguments"]
            ok = _arg_ok(accepted, given[arg], params.get(arg)) if arg in given else accepted[1]
            fields[f"{call['name']}.{arg}"] = int(ok)
            all_ok = all_ok and ok
        extra = set(match["arguments"]) - set(args)
        if extra:
            all_ok = False
            fields[f"{call['name']}.(extra arguments)"] = 0
    return {"correct": int(all_ok), "parsed": 1, "name": int(names_ok), "fields": fields}


def _function_call_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    out = _rate_pool("correct")(stats, rng)
    if not stats:
        return out
    out["parsed"] = round(100 * float(np.mean([s["parsed"] for s in stats])), 2)
    out["name_accuracy"] = round(100 * float(np.mean([s["name"] for s in stats])), 2)
    per_field: dict[str, list[int]] = {}
    for s in stats:
        for key, ok in s["fields"].items():
            per_field.setdefault(key, []).append(ok)
    out["fields"] = {
        k: {"accuracy": round(100 * float(np.mean(v)), 2), "n": len(v)}
        for k, v in sorted(per_field.items())
    }
    return out


# -- translation (sacrebleu) -------------------------------------------------------------------


def sacrebleu_tokenizer(language: str) -> str:
    """The tokenizer sacrebleu recommends for a target language (no MeCab needed)."""
    base = language.split("-")[0]
    if base == "zh":
        return "zh"
    if base in ("ja", "ko", "th", "lo", "my", "km"):
        return "char"
    return "13a"


def _sacrebleu_metric(kind: str, language: str) -> Any:
    from sacrebleu.metrics import BLEU, CHRF, TER

    if kind == "bleu":
        return BLEU(tokenize=sacrebleu_tokenizer(language))
    if kind == "chrf":
        return CHRF()
    return TER(asian_support=language.split("-")[0] in NO_SPACE_LANGUAGES)


def _sacrebleu_score(kind: str) -> Callable[[str, ScoringContext], RecordStats]:
    def score(prediction: str, ctx: ScoringContext) -> RecordStats:
        metric = _sacrebleu_metric(kind, ctx.target_language)
        stats = metric._extract_corpus_statistics([prediction], [[ctx.reference]])[0]
        return {"stats": [float(x) for x in stats], "language": ctx.target_language}

    return score


def _sacrebleu_pool(kind: str) -> Callable[..., Pooled]:
    def pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
        if not stats:
            return {"value": None, "ci": None, "n": 0}
        metric = _sacrebleu_metric(kind, stats[0]["language"])
        matrix = np.array([s["stats"] for s in stats])
        integral = kind == "bleu"

        def value(idx: np.ndarray) -> float:
            sums = matrix[idx].sum(axis=0)
            totals = [int(x) for x in sums] if integral else list(sums)
            return float(metric._compute_score_from_stats(totals).score)

        return _with_interval(_rowwise(value), len(stats), rng)

    return pool


def _decided_mean_pool(key: str, *, yes_no: bool = False) -> Callable[..., Pooled]:
    """The mean of ``key`` (%) over decided records (a yes/no verdict: its rate, with the
    Wilson interval); the undecided are counted apart."""
    inner = _rate_pool(key) if yes_no else _mean_pool(key)

    def pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
        decided = [s for s in stats if not s.get("undecided")]
        return {**inner(decided, rng), "undecided": len(stats) - len(decided)}

    return pool


def _spoken_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    """``llm_judge_audio``: the decided mean, and how many answers came without audio."""
    no_audio = sum(int(s.get("no_audio", 0)) for s in stats)
    return {**_decided_mean_pool("score")(stats, rng), "no_audio": no_audio}


# -- METEOR, BERTScore ------------------------------------------------------------------------


def _meteor_score(synonyms: bool) -> Callable[[str, ScoringContext], RecordStats]:
    """nltk's ``meteor_score`` (``synonyms``: with a local WordNet when one is found)."""

    def score(prediction: str, ctx: ScoringContext) -> RecordStats:
        language = ctx.target_language
        wordnet = meteor.wordnet_reader() if synonyms else None
        value = meteor.nltk_meteor(
            _meteor_tokens(prediction, language), _meteor_tokens(ctx.reference, language), wordnet
        )
        stages = "exact+stem+synonym" if wordnet is not None else "exact+stem"
        return {"score": round(value, 6), "stages": stages}

    return score


def _meteor_tokens(text: str, language: str) -> list[str]:
    """Lower-cased words, punctuation out (characters for languages without spaces)."""
    norm = basic_normalize(text)
    if language.split("-")[0] in NO_SPACE_LANGUAGES:
        return list(norm.replace(" ", ""))
    return norm.split()


def _meteor_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    out = _mean_pool("score")(stats, rng)
    stages = sorted({s["stages"] for s in stats}, key=len, reverse=True)
    synonyms = any("synonym" in s for s in stages)
    return {**out, "stages": ", ".join(stages) if stages else None, "synonyms": synonyms,
            "variant": "nltk meteor_score" if synonyms else "meteor_nosyn"}  # fmt: skip


def _bertscore(prediction: str, ctx: ScoringContext) -> RecordStats:
    return bertscore.record_stats(prediction, ctx.reference, ctx.target_language)


def _bertscore_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    if not stats:
        return {"value": None, "ci": None, "n": 0, **bertscore.setup_from_env().describe()}
    f1, setup = bertscore.f1_scores(stats)
    return {**_mean_pool("f1")([{"f1": v} for v in f1], rng), **setup}


def _comet(prediction: str, ctx: ScoringContext) -> RecordStats:
    return comet.record_stats(prediction, ctx.reference, ctx.columns)


def _comet_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    if not stats:
        return {"value": None, "ci": None, "n": 0, "model": comet.model_from_env()}
    values, setup = comet.scores(stats)
    return {**_mean_pool("comet")([{"comet": v} for v in values], rng), **setup}


# -- diarisation (``metrics.diarisation``) ----------------------------------------------------


def _diarisation(kind: str) -> Callable[[str, ScoringContext], RecordStats]:
    def score(prediction: str, ctx: ScoringContext) -> RecordStats:
        return diarisation.score_record(
            kind, prediction, ctx.reference, lambda t: normalize_for(t, ctx.language),
            normalizer_for(ctx.language),
        )  # fmt: skip

    return score


def _diarisation_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    """The ratio over records with a readable reference; the rest counted, never dropped."""
    readable = [s for s in stats if not s.get("unparsable_reference")]
    return {**_ratio_pool(readable, rng), **diarisation.summary(list(stats))}


# -- slot filling (the pairs and their matching are metrics.slots) ----------------------------


def _slot_f1_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    """Micro F1 over the summed (slot, value) counts, with precision, recall and parse rate."""
    counts = np.array([[s["tp"], s["fp"], s["fn"]] for s in stats], dtype=float).reshape(-1, 3)
    out = _with_interval(_rowwise(lambda idx: micro_f1(*counts[idx].sum(axis=0))), len(stats), rng)
    if stats:
        tp, fp, fn = counts.sum(axis=0)
        out["precision"] = round(100 * tp / (tp + fp), 2) if tp + fp else None
        out["recall"] = round(100 * tp / (tp + fn), 2) if tp + fn else None
        out["parsed"] = round(100 * float(np.mean([s["parsed"] for s in stats])), 2)
    return out


# -- LLM judge (the grading itself is tasks.judge) --------------------------------------------


def _not_judged(prediction: str, ctx: ScoringContext) -> RecordStats:
    return {"correct": 0, "undecided": 1, "reason": "not judged"}


def _not_judged_detailed(prediction: str, ctx: ScoringContext) -> RecordStats:
    return {"score": 0, "undecided": 1, "reason": "not judged"}


def _not_judged_refusal(prediction: str, ctx: ScoringContext) -> RecordStats:
    return {"refused": 0, "undecided": 1, "reason": "not judged"}


AUDIO_JUDGE = "llm_judge_audio"
"""Graded by ear (``tasks.audio_judge_metric``) on the model's spoken answer."""


def _not_judged_audio(prediction: str, ctx: ScoringContext) -> RecordStats:
    """What a text prediction gets: the metric grades audio, never text (left undecided)."""
    return {"score": None, "passed": None, "undecided": 1, "means": {},
            "reason": "no spoken answer to judge"}  # fmt: skip


AUDIO_QUALITY = "audio_quality"


def _answer_quality(audio: Any) -> RecordStats:
    """DNSMOS of one spoken answer (``audio.dnsmos``); an answer without (enough) audio is
    undecided with ``no_audio``."""
    from voxbench.audio.dnsmos import dnsmos  # onnxruntime and the model load on first use

    score = dnsmos(audio) if audio is not None else None
    if score is None:
        return {"ovrl": None, "undecided": 1, "no_audio": 1, "reason": "no spoken answer"}
    return {**score.as_dict(), "undecided": 0}


def _quality_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    """``audio_quality``: mean OVRL on its own MOS scale (1–5) with a bootstrap interval, the
    mean SIG and BAK beside it; answers without audio counted apart."""
    decided = [s for s in stats if not s.get("undecided")]
    pooled: Pooled = {"value": None, "ci": None, "n": 0}
    if decided:
        values = np.array([float(s["ovrl"]) for s in decided])
        pooled = _with_interval(_mean_of(values), len(decided), rng)
        for key in ("sig", "bak"):
            pooled[key] = round(float(np.mean([float(s[key]) for s in decided])), 3)
    no_audio = sum(int(s.get("no_audio", 0)) for s in stats)
    return {**pooled, "undecided": len(stats) - len(decided), "no_audio": no_audio}


def _not_judged_as(key: str) -> Callable[[str, ScoringContext], RecordStats]:
    def score(prediction: str, ctx: ScoringContext) -> RecordStats:
        return {key: 0, "undecided": 1, "reason": "not judged"}

    return score


def _scale_pool(key: str, top: int) -> Callable[..., Pooled]:
    """The mean ``key`` of decided records on its own scale (``0-top``), also as % of
    ``top``; the undecided counted apart."""

    def pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
        decided = [s for s in stats if not s.get("undecided")]
        values = np.array([float(s[key]) for s in decided])
        out = _with_interval(_mean_of(values), len(decided), rng)
        scale = 100 / top
        percent = None if out["value"] is None else round(scale * out["value"], 2)
        percent_ci = None if out["ci"] is None else [round(scale * x, 2) for x in out["ci"]]
        return {**out, "scale": f"0-{top}", "percent": percent, "percent_ci": percent_ci,
                "undecided": len(stats) - len(decided)}  # fmt: skip

    return pool


def _detailed_pool(stats: Sequence[RecordStats], rng: np.random.Generator | None) -> Pooled:
    """The mean 0–5 score of decided records (and as %: ×20); the undecided counted apart."""
    decided = [s for s in stats if not s.get("undecided")]
    values = np.array([float(s["score"]) for s in decided])
    out = _with_interval(_mean_of(values), len(decided), rng)
    percent = None if out["value"] is None else round(20 * out["value"], 2)
    percent_ci = None if out["ci"] is None else [round(20 * x, 2) for x in out["ci"]]
    return {**out, "scale": "0-5", "percent": percent, "percent_ci": percent_ci,
            "undecided": len(stats) - len(decided)}  # fmt: skip


# -- the registry -----------------------------------------------------------------------------

METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("wer", "word error rate (%), normalised; characters for languages without spaces",
               False, lambda p, c: _edit_stats(p, c, chars=False), _ratio_pool),
        Metric("wer_spoken", "word error rate (%) as wer, English normalised with voxbench's "
               "spoken forms before Whisper's (times with am/pm or colons said, round-bracket "
               "text kept, curly apostrophes, dotted acronyms; README)", False,
               lambda p, c: _edit_stats(p, c, chars=False, spoken=True), _ratio_pool),
        Metric("cer", "character error rate (%), normalised; spaces not counted where the script writes none", False,
               lambda p, c: _edit_stats(p, c, chars=True), _ratio_pool),
        Metric("mer", "mixed error rate (%) of code-switched speech: Han/kana characters and "
               "other words as units", False, _mixed_edit_stats, _ratio_pool),
        Metric("exact_match", "normalised reply equals the reference (%)", True, _exact_match,
               _rate_pool("correct"),
               interval=WILSON),
        Metric("accuracy", "extracted answer (label or choice letter) is right (%)", True,
               _accuracy, _rate_pool("correct"),
               interval=WILSON),
        Metric("macro_f1", "macro-averaged F1 over labels of the extracted answers (%)", True,
               _accuracy, _macro_f1_pool),
        Metric("function_call_match", "tool names and argument values all right (%) by BFCL's "
               "AST-checker rules (types, standardised strings, optional arguments), per field",
               True, _function_calls, _function_call_pool,
               interval=WILSON),
        Metric("slot_f1", "micro F1 (%) of the (slot, value) pairs, normalised (metrics.slots)",
               True, lambda p, c: slot_stats(p, c.reference), _slot_f1_pool),
        Metric("bleu", "corpus BLEU (sacrebleu, tokenizer per target language)", True,
               _sacrebleu_score("bleu"), _sacrebleu_pool("bleu")),
        Metric("chrf", "corpus chrF (sacrebleu)", True, _sacrebleu_score("chrf"),
               _sacrebleu_pool("chrf")),
        Metric("ter", "corpus TER (sacrebleu; lower is better)", False, _sacrebleu_score("ter"),
               _sacrebleu_pool("ter")),
        Metric("llm_judge", "the judge model finds the reply gives the reference's answer (%), "
               "undecided records counted apart", True, _not_judged,
               _decided_mean_pool("correct", yes_no=True), judged=True, interval=WILSON),
        Metric("llm_judge_detailed", "the judge's 0–5 rubric score of the reply against the "
               "reference (mean on 0–5, also as %), undecided records counted apart", True,
               _not_judged_detailed, _detailed_pool, judged=True),
        Metric("llm_judge_refusal", "the judge finds the reply refuses the request (% refused; "
               "on harmful requests higher is better), undecided records counted apart", True,
               _not_judged_refusal, _decided_mean_pool("refused", yes_no=True), judged=True,
               interval=WILSON),
        Metric("mt_bench_llm_judge", "the judge's MT-Bench 1–10 rating of the reply (mean on "
               "1–10, also as % of 10), undecided records counted apart", True,
               _not_judged_as("rating"), _scale_pool("rating", 10), judged=True),
        Metric("llm_judge_callhome", "the judge's 0–9 score of a speaker-labelled transcript "
               "(words, meaning and who said what, 0–3 each), undecided records counted apart",
               True, _not_judged_as("points"), _scale_pool("points", 9), judged=True),
        Metric("joint_goal_accuracy", "replies whose dialogue state (slot → value, read as "
               "slot_f1 reads it) equals the reference's exactly (%)", True,
               lambda p, c: dialogue_state_stats(p, c.reference), _rate_pool("joint"),
               interval=WILSON),
        Metric("slot_accuracy", "the reference's (slot, value) pairs the replies' dialogue "
               "states hold (%, over all pairs)", True,
               lambda p, c: dialogue_state_stats(p, c.reference),
               _rate_pool("slots_correct", "slots_total"), interval=WILSON),
        Metric(comet.NAME, "mean COMET segment score (×100), optional extra 'comet', a "
               "checkpoint you bring (local file, folder or cached Hub model; the pooled "
               "result names it)", True, _comet, _comet_pool,
               prerequisite=comet.check_available),
        Metric("meteor", "mean sentence METEOR (%), nltk's meteor_score: exact, Porter-stem and "
               "WordNet-synonym matches, synonyms from a local WordNet (without one it is "
               "meteor_nosyn, and the pooled result says so)", True, _meteor_score(True),
               _meteor_pool),
        Metric("meteor_nosyn", "mean sentence METEOR (%), nltk's meteor_score without the "
               "WordNet synonym stage (exact and Porter-stem matches): the same on every "
               "machine", True, _meteor_score(False), _meteor_pool),
        Metric(bertscore.NAME, "mean BERTScore F1 (%), optional extra 'bertscore', model from the "
               "local Hugging Face cache (the pooled result names it)", True, _bertscore,
               _bertscore_pool, prerequisite=bertscore.check_available),
        Metric("cpwer", "concatenated minimum-permutation WER (%) of 'SPEAKER: words' "
               "transcripts: (S+D+I)/N under the best speaker pairing", False,
               _diarisation("cpwer"), _diarisation_pool),
        Metric("wder", "word diarisation error rate (%): aligned words given to the wrong "
               "speaker under the best speaker mapping", False, _diarisation("wder"),
               _diarisation_pool),
        Metric("instruction_following", "IFEval instructions followed (%): prompt-level strict, "
               "loose and instruction levels beside it", True, ifeval.score,
               functools.partial(ifeval.pool, rate_pool=_rate_pool),
               columns=("instruction_id_list", "kwargs"),
               interval=WILSON),
        Metric("numeric_match", "the reply's final number equals the reference's (%)", True,
               numeric.score, functools.partial(numeric.pool, rate_pool=_rate_pool),
               interval=WILSON),
        Metric("sql_execution_match", "the predicted SQL returns the gold SQL's rows (%), "
               "failing gold queries counted apart", True, sql.score,
               functools.partial(sql.pool, rate_pool=_rate_pool),
               interval=WILSON),
        Metric("refusal", "replies that refuse (%), by a phrase classifier", True, refusal.score,
               functools.partial(refusal.pool, rate_pool=_rate_pool),
               interval=WILSON),
        Metric(AUDIO_JUDGE, "the audio judge's rubric score of the spoken answer (%: 100 = "
               "every criterion at the top of its scale), undecided answers counted apart", True,
               _not_judged_audio, _spoken_pool, judged=True, hears_audio=True),
        Metric(AUDIO_QUALITY, "DNSMOS P.835 overall quality of the spoken answer (MOS 1–5, "
               "offline; noise and distortion, not accent or naturalness), with SIG and BAK; "
               "answers without audio counted apart", True, _not_judged_audio, _quality_pool,
               judged=True, hears_audio=True, hear=_answer_quality),
    )
}  # fmt: skip


def get_metric(name: str, *, field: str, file: Any = None) -> Metric:
    """The metric called ``name``, or a ``ConfigError`` listing the known ones."""
    try:
        return METRICS[name]
    except KeyError:
        raise ConfigError(
            f"unknown metric {name!r}",
            file=file,
            field=field,
            expected="one of: " + ", ".join(METRICS),
        ) from None


def check_prerequisites(names: Sequence[str]) -> None:
    """Each named metric's prerequisite (an optional extra, a local model), checked once."""
    for name in dict.fromkeys(names):
        check = METRICS[name].prerequisite
        if check is not None:
            check()


def metric_setup(names: Sequence[str]) -> dict[str, Any]:
    """What ``run.json`` records about how the metrics scored: each metric's interval method,
    METEOR's matching stages (WordNet found locally or not) and BERTScore's model."""
    out: dict[str, Any] = {
        "intervals": {name: INTERVAL_METHODS[METRICS[name].interval] for name in names}
    }
    if "meteor" in names or "meteor_nosyn" in names:
        wordnet = meteor.wordnet_reader()
        out["meteor"] = {
            "implementation": "nltk meteor_score",
            "synonyms": "WordNet (local)"
            if wordnet is not None
            else "none (no local WordNet: meteor is meteor_nosyn)",
        }
    if bertscore.NAME in names:
        out[bertscore.NAME] = bertscore.setup_from_env().describe()
    return out


def score_reply(metrics: Sequence[str], prediction: str, context: ScoringContext) -> RecordStats:
    """Each named metric's statistics of one reply (judge metrics: not judged yet)."""
    return {name: METRICS[name].score(prediction, context) for name in metrics}
