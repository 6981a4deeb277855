"""METEOR. The metrics ``meteor`` and ``meteor_nosyn`` are nltk's ``meteor_score`` exactly
(``nltk_meteor``, at the end: with a local WordNet found by ``wordnet_reader``, or without the
synonym stage). Above it, voxbench's own staged alignment (fewest chunks among the most
matches), kept as a library function: no metric reports it any more.

For one prediction and one reference (token lists), words are aligned in stages, each stage
only among the words still unaligned:

1. **exact** — the same word;
2. **stem** — the same Porter stem (nltk's ``PorterStemmer``; English only);
3. **synonym** — WordNet synonyms (English only), *only* when a WordNet is already installed
   as nltk data on this machine (``nltk.data.find("corpora/wordnet")``). Nothing is ever
   downloaded: without a local WordNet this stage is skipped, and the pooled result says
   ``"stages": "exact+stem"`` ("METEOR without synonyms" in the report), with it
   ``"exact+stem+synonym"``. Scores with and without synonyms are not comparable.

Within a stage the alignment with the most matches is kept, and among those the one with the
fewest chunks (runs of matched words adjacent, in the same order, in both texts): every
choice of which repeated words pair up is tried while there are at most ``MAX_CHOICES``,
otherwise repeated words pair up in order. With ``m`` matches, P = m / |prediction|,
R = m / |reference|::

    F = P·R / (α·P + (1 − α)·R)        penalty = γ · (chunks / m)^β        METEOR = F · (1 − penalty)

with the standard α = 0.9, β = 3, γ = 0.5 (Lavie & Agarwal 2007). No match scores 0; two empty
texts score 1. A corpus's METEOR is the mean of its sentence scores (``metrics.registry`` gives
the bootstrap interval).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from voxbench.metrics.stats import RecordStats

ALPHA = 0.9
BETA = 3.0
GAMMA = 0.5
MAX_CHOICES = 4096
"""Alignments compared within one stage, at most (then repeated words pair up in order)."""
STEM_LANGUAGES = frozenset({"en"})
"""Languages the Porter stemmer (and WordNet) is for."""

Synonyms = Callable[[str], frozenset[str]]
"""A word → the words it is a synonym of (itself included)."""
Match = tuple[int, int]
"""(prediction position, reference position)."""


@functools.cache
def _stemmer() -> Any:
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


def porter_stem(word: str) -> str:
    """nltk's Porter stem of ``word``."""
    return _stemmer().stem(word)


@functools.cache
def local_wordnet() -> Synonyms | None:
    """Synonyms from a WordNet installed as nltk data on this machine, or None (never
    downloaded)."""
    try:
        import nltk
    except ImportError:
        return None
    for resource in ("corpora/wordnet", "corpora/wordnet.zip"):
        try:
            nltk.data.find(resource)
            break
        except LookupError:
            continue
    else:
        return None
    from nltk.corpus import wordnet

    @functools.cache
    def synonyms(word: str) -> frozenset[str]:
        names = {lemma.name().casefold() for s in wordnet.synsets(word) for lemma in s.lemmas()}
        return frozenset({word, *names})

    return synonyms


def stages_for(language: str, synonyms: Synonyms | None) -> tuple[str, ...]:
    """The matching stages used for a language."""
    if language.split("-")[0].casefold() not in STEM_LANGUAGES:
        return ("exact",)
    return ("exact", "stem", "synonym") if synonyms is not None else ("exact", "stem")


def chunk_count(matches: Sequence[Match]) -> int:
    """Runs of matches adjacent, in the same order, in both texts."""
    ordered = sorted(matches)
    return sum(
        1
        for i, (h, r) in enumerate(ordered)
        if i == 0 or (h, r) != (ordered[i - 1][0] + 1, ordered[i - 1][1] + 1)
    )


def _keyed_groups(
    keys_h: dict[int, str], keys_r: dict[int, str]
) -> list[tuple[list[int], list[int]]]:
    """Per key found on both sides: its prediction and reference positions."""
    by_key: dict[str, tuple[list[int], list[int]]] = {}
    for pos, key in sorted(keys_h.items()):
        by_key.setdefault(key, ([], []))[0].append(pos)
    for pos, key in sorted(keys_r.items()):
        if key in by_key:
            by_key[key][1].append(pos)
    return [(hs, rs) for hs, rs in by_key.values() if rs]


def _ways(hs: list[int], rs: list[int]) -> int:
    return math.comb(max(len(hs), len(rs)), min(len(hs), len(rs)))


def _pairings(hs: list[int], rs: list[int]) -> list[list[Match]]:
    """Every way of pairing as many of the words as possible, each way in order."""
    if len(hs) <= len(rs):
        return [list(zip(hs, pick, strict=True)) for pick in itertools.combinations(rs, len(hs))]
    return [list(zip(pick, rs, strict=True)) for pick in itertools.combinations(hs, len(rs))]


def _best_keyed(fixed: list[Match], keys_h: dict[int, str], keys_r: dict[int, str]) -> list[Match]:
    """The stage's matches (most, then fewest chunks with ``fixed``) for key equality."""
    groups = _keyed_groups(keys_h, keys_r)
    if not groups:
        return []
    if math.prod(_ways(hs, rs) for hs, rs in groups) <= MAX_CHOICES:
        best = min(
            itertools.product(*(_pairings(hs, rs) for hs, rs in groups)),
            key=lambda combo: chunk_count(fixed + [m for way in combo for m in way]),
        )
        return [m for way in best for m in way]
    # Too many to try together: each key in turn picks its best pairing given those before.
    chosen: list[Match] = []
    for hs, rs in groups:
        if _ways(hs, rs) > MAX_CHOICES:
            chosen += list(zip(hs, rs, strict=False))  # in order, first occurrences
            continue
        best_way = min(_pairings(hs, rs), key=lambda way: chunk_count(fixed + chosen + way))
        chosen += best_way
    return chosen


def _synonym_matches(
    fixed: list[Match], hyp: dict[int, str], ref: dict[int, str], synonyms: Synonyms
) -> list[Match]:
    """Synonym pairs, left to right: each prediction word takes the free reference synonym
    that continues a chunk, or else the first one."""
    taken: set[int] = set()
    out: list[Match] = []
    for h, word in sorted(hyp.items()):
        related = synonyms(word)
        free = [r for r, other in sorted(ref.items()) if r not in taken and other in related]
        if not free:
            continue
        near = {r + 1 for hh, r in fixed + out if hh == h - 1}
        r = next((x for x in free if x in near), free[0])
        taken.add(r)
        out.append((h, r))
    return out


def align(
    prediction: Sequence[str], reference: Sequence[str], stages: Sequence[str],
    synonyms: Synonyms | None = None,
) -> dict[str, list[Match]]:  # fmt: skip
    """Each stage's matches."""
    done: list[Match] = []
    out: dict[str, list[Match]] = {}
    for stage in stages:
        used_h = {h for h, _ in done}
        used_r = {r for _, r in done}
        free_h = {i: w for i, w in enumerate(prediction) if i not in used_h}
        free_r = {i: w for i, w in enumerate(reference) if i not in used_r}
        if stage == "exact":
            found = _best_keyed(done, free_h, free_r)
        elif stage == "stem":
            found = _best_keyed(
                done,
                {i: porter_stem(w) for i, w in free_h.items()},
                {i: porter_stem(w) for i, w in free_r.items()},
            )
        elif stage == "synonym" and synonyms is not None:
            found = _synonym_matches(done, free_h, free_r, synonyms)
        else:
            raise ValueError(f"unknown METEOR stage {stage!r}")
        out[stage] = found
        done += found
    return out


def sentence_meteor(
    prediction: Sequence[str], reference: Sequence[str], stages: Sequence[str] = ("exact", "stem"),
    synonyms: Synonyms | None = None,
) -> RecordStats:  # fmt: skip
    """One sentence's METEOR (0–1) and how it was reached."""
    if not prediction and not reference:
        return {"score": 1.0, "matches": 0, "chunks": 0, "stages": "+".join(stages)}
    by_stage = align(prediction, reference, stages, synonyms)
    matches = [m for found in by_stage.values() for m in found]
    m = len(matches)
    out = {
        "matches": m,
        "by_stage": {stage: len(found) for stage, found in by_stage.items()},
        "stages": "+".join(stages),
    }
    if m == 0:
        return {"score": 0.0, "chunks": 0, **out}
    precision = m / len(prediction)
    recall = m / len(reference)
    fmean = precision * recall / (ALPHA * precision + (1 - ALPHA) * recall)
    chunks = chunk_count(matches)
    penalty = GAMMA * (chunks / m) ** BETA
    return {"score": fmean * (1 - penalty), "chunks": chunks, **out}


# -- nltk's METEOR: what the metric ``meteor`` reports ------------------------------------------

WORDNET_ENV = "VOXBENCH_WORDNET"
"""A WordNet folder (WNDB files: ``data.noun``, ``index.noun``, ``lexnames``…) to read synonyms
from, e.g. Debian's ``/usr/share/wordnet`` or an NLTK data dir's ``corpora/wordnet``."""
SYSTEM_WORDNET_DIRS = ("/usr/share/wordnet",)
"""Where a system WordNet is looked for when nltk has none (Debian's ``wordnet-base``)."""


class _NoWordNet:
    """A WordNet with no synsets: nltk's METEOR without its synonym stage."""

    def synsets(self, word: str, *args: Any, **kwargs: Any) -> list[Any]:
        return []


@functools.cache
def wordnet_reader() -> Any | None:
    """A WordNet nltk can read, found on this machine (``$VOXBENCH_WORDNET``, nltk's data
    path, then ``SYSTEM_WORDNET_DIRS``), or None. Nothing is ever downloaded."""
    import os

    try:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        return None
    named = os.environ.get(WORDNET_ENV)
    if named:
        return WordNetCorpusReader(named, None)
    if local_wordnet() is not None:
        from nltk.corpus import wordnet

        return wordnet
    for folder in SYSTEM_WORDNET_DIRS:
        if os.path.isfile(os.path.join(folder, "data.noun")):
            try:
                return WordNetCorpusReader(folder, None)
            except (OSError, LookupError):  # a folder nltk cannot read: no synonyms
                continue
    return None


def nltk_meteor(prediction: Sequence[str], reference: Sequence[str], wordnet: Any | None) -> float:
    """nltk's ``meteor_score`` of one tokenised prediction against one reference (its greedy
    exact → Porter stem → WordNet synonym alignment, α = 0.9, β = 3, γ = 0.5; no match and
    two empty texts score 0); ``wordnet=None``: no synonym stage."""
    from nltk.translate.meteor_score import meteor_score

    return float(meteor_score([list(reference)], list(prediction), wordnet=wordnet or _NoWordNet()))
