"""Speaker-attributed transcripts: cpWER and WDER, per record.

A transcript is one turn per line, ``SPEAKER: words`` (``A: hello there`` / ``B: hi``); a line
without a label continues the turn above it. Labels are free names: the reference's ``spk1``
may be the prediction's ``A``, so both metrics search the best speaker mapping (Hungarian
assignment, ``scipy.optimize.linear_sum_assignment``). Words are normalised as WER does
(``metrics.registry.normalize_for``) one turn at a time.

- **cpWER** (concatenated minimum-permutation WER, CHiME-6): each speaker's words are
  concatenated in order; every (reference speaker, predicted speaker) pair gets its edit
  distance, speakers without a partner are matched to nobody (all their words deleted or
  inserted), and the pairing with the fewest errors is kept. cpWER = (S + D + I) / N over the
  reference's N words. Deletions count: a speaker left out is wrong (AU-Harness's
  ``(S + I) / N`` leaves them out, so a transcript of one speaker of two can score 0).
- **WDER** (word diarisation error rate): the two transcripts' words are aligned as one
  sequence (speakers aside), as DiarizationLM aligns them (``diarizationlm_alignment``); over the aligned pairs (correct words and substitutions, not
  insertions or deletions) the predicted speakers are mapped one-to-one onto the reference's
  to agree on the most words; WDER = words whose speaker is wrong under that mapping / aligned
  words.
- **speaker-count error**: |predicted speakers − reference speakers|, reported beside both.

A prediction that is no speaker-labelled transcript (its first words carry no label) is never
dropped: it is scored as attributing nothing (every reference word an error for cpWER and for
WDER) and counted as ``unparsable``. A reference that cannot be read is a data error: counted
as ``unparsable_references`` and left out of the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein

from voxbench.metrics.stats import Pooled, RecordStats

_LABEL = re.compile(r"^\s*([^\s:][^:]{0,31}?)\s*:\s*(.*)$")
"""``LABEL: text`` — a label of at most 32 characters and three words (so a sentence with a
colon in it is not taken for a label)."""
MAX_LABEL_WORDS = 3


class UnparsableTranscript(ValueError):
    """Text that is not ``SPEAKER: words`` lines."""


@dataclass(frozen=True)
class Turns:
    """A transcript's words, each with its speaker, in order."""

    words: list[str]
    speakers: list[str]

    @property
    def speaker_set(self) -> list[str]:
        """The speakers, in order of first word."""
        return list(dict.fromkeys(self.speakers))


def parse_transcript(text: str, normalize: Callable[[str], str]) -> Turns:
    """The speaker-labelled words of ``text``; ``UnparsableTranscript`` when its first
    words have no label."""
    words: list[str] = []
    speakers: list[str] = []
    current: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        found = _LABEL.match(line)
        if found and len(found.group(1).split()) <= MAX_LABEL_WORDS:
            current = found.group(1).strip().casefold()
            body = found.group(2)
        elif current is None:
            raise UnparsableTranscript(f"line {number} has no 'SPEAKER:' label: {line[:60]!r}")
        else:
            body = line
        for word in normalize(body).split():
            words.append(word)
            speakers.append(current)
    return Turns(words, speakers)


def _speaker_words(turns: Turns) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for word, speaker in zip(turns.words, turns.speakers, strict=True):
        out.setdefault(speaker, []).append(word)
    return out


def _edit_counts(ref: list[str], hyp: list[str]) -> tuple[int, int, int]:
    """(substitutions, deletions, insertions) of the minimal edit from ``ref`` to ``hyp``."""
    subs = dels = ins = 0
    for op in Levenshtein.editops(ref, hyp):
        if op.tag == "replace":
            subs += 1
        elif op.tag == "delete":
            dels += 1
        else:
            ins += 1
    return subs, dels, ins


def cpwer_counts(reference: Turns, prediction: Turns) -> RecordStats:
    """cpWER's counts: the best speaker pairing's S, D, I and the reference's N."""
    ref = _speaker_words(reference)
    hyp = _speaker_words(prediction)
    ref_names, hyp_names = list(ref), list(hyp)
    size = max(len(ref_names), len(hyp_names))
    # Square, padded with "nobody": a reference speaker paired with nobody is all deletions,
    # a predicted speaker paired with nobody all insertions.
    ref_side = [ref[n] for n in ref_names] + [[]] * (size - len(ref_names))
    hyp_side = [hyp[n] for n in hyp_names] + [[]] * (size - len(hyp_names))
    cost = np.array([[Levenshtein.distance(r, h) for h in hyp_side] for r in ref_side])
    subs = dels = ins = 0
    mapping: dict[str, str] = {}
    if size:
        # ~0.4 s to import: only when used; scipy ships no types (scipy-stubs is not installed)
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(cost)
        for r, c in zip(rows, cols, strict=True):
            s, d, i = _edit_counts(ref_side[r], hyp_side[c])
            subs, dels, ins = subs + s, dels + d, ins + i
            if r < len(ref_names) and c < len(hyp_names):
                mapping[hyp_names[c]] = ref_names[r]
    return {
        "substitutions": subs,
        "deletions": dels,
        "insertions": ins,
        "errors": subs + dels + ins,
        "units": len(reference.words),
        "mapping": mapping,
    }


def diarizationlm_alignment(ref: Sequence[str], hyp: Sequence[str]) -> list[tuple[int, int]]:
    """DiarizationLM's ``levenshtein_with_edits`` alignment, ties broken as it breaks them
    (insertion, then deletion, then match or substitution at each cell; backtracking from the
    end): (reference position, hypothesis position) pairs, -1 for an inserted or deleted word.
    Another minimum-cost alignment can pair other words and so change WDER."""
    codes: dict[str, int] = {}
    s1 = [codes.setdefault(w, len(codes)) for w in ref]
    s2 = [codes.setdefault(w, len(codes)) for w in hyp]
    n1, n2 = len(s1), len(s2)
    insertion, deletion, keep = 2, 3, 0
    costs = [[0] * (n2 + 1) for _ in range(n1 + 1)]
    back = [[keep] * (n2 + 1) for _ in range(n1 + 1)]
    for i in range(n1 + 1):
        costs[i][0] = i
    for j in range(n2):
        costs[0][j + 1] = j + 1
        for i in range(n1):
            ins = costs[i + 1][j] + 1
            dele = costs[i][j + 1] + 1
            sub = costs[i][j] + (s1[i] != s2[j])
            best = min(ins, dele, sub)
            costs[i + 1][j + 1] = best
            back[i + 1][j + 1] = insertion if best == ins else deletion if best == dele else keep
    # Row 0 and column 0 keep their pointer at "keep", as DiarizationLM's zero-filled array.
    align: list[tuple[int, int]] = []
    i, j = n1, n2
    while i > 0 or j > 0:
        op = back[i][j] if i >= 0 and j >= 0 else (deletion if j < 0 else insertion)
        if op == insertion:
            align.append((-1, j - 1))
            j -= 1
        elif op == deletion:
            align.append((i - 1, -1))
            i -= 1
        else:
            align.append((i - 1, j - 1))
            i -= 1
            j -= 1
    align.reverse()
    return align


def wder_counts(reference: Turns, prediction: Turns) -> RecordStats:
    """WDER's counts: aligned words, and those whose speaker is wrong under the best mapping."""
    pairs = [  # (reference speaker, predicted speaker) of aligned words
        (reference.speakers[i], prediction.speakers[j])
        for i, j in diarizationlm_alignment(reference.words, prediction.words)
        if i >= 0 and j >= 0
    ]
    ref_names = reference.speaker_set
    hyp_names = prediction.speaker_set
    mapping: dict[str, str] = {}
    agreed = 0
    if pairs:
        from scipy.optimize import linear_sum_assignment

        confusion = np.zeros((len(ref_names), len(hyp_names)), dtype=int)
        r_index = {n: i for i, n in enumerate(ref_names)}
        h_index = {n: i for i, n in enumerate(hyp_names)}
        for r, h in pairs:
            confusion[r_index[r], h_index[h]] += 1
        rows, cols = linear_sum_assignment(confusion, maximize=True)
        agreed = int(confusion[rows, cols].sum())
        mapping = {hyp_names[c]: ref_names[r] for r, c in zip(rows, cols, strict=True)}
    return {"errors": len(pairs) - agreed, "units": len(pairs), "mapping": mapping}


def score_record(
    kind: str, prediction: str, reference: str, normalize: Callable[[str], str], normalizer: str
) -> RecordStats:
    """One record's ``cpwer`` or ``wder`` statistics (``errors`` / ``units``, pooled as a
    ratio), with the speaker counts and whether either transcript was unreadable."""
    try:
        ref = parse_transcript(reference, normalize)
    except UnparsableTranscript as exc:
        return {"errors": 0, "units": 0, "unparsable_reference": 1, "reason": str(exc),
                "normalizer": normalizer}  # fmt: skip
    ref_speakers = len(ref.speaker_set)
    try:
        hyp = parse_transcript(prediction, normalize)
    except UnparsableTranscript as exc:
        # Nothing attributed: every reference word is an error, the record stays counted.
        return {
            "errors": len(ref.words),
            "units": len(ref.words),
            "unparsable": 1,
            "reason": str(exc),
            "speakers": [ref_speakers, 0],
            "normalizer": normalizer,
        }
    counts = cpwer_counts(ref, hyp) if kind == "cpwer" else wder_counts(ref, hyp)
    return {
        **counts,
        "unparsable": 0,
        "speakers": [ref_speakers, len(hyp.speaker_set)],
        "normalizer": normalizer,
    }


def summary(stats: list[RecordStats]) -> Pooled:
    """What the pooled value leaves out: unreadable transcripts and the speaker-count error
    (mean absolute difference, and % of records with the right count)."""
    scored = [s for s in stats if not s.get("unparsable_reference")]
    counts = [abs(s["speakers"][0] - s["speakers"][1]) for s in scored]
    return {
        "unparsable": sum(int(s.get("unparsable", 0)) for s in scored),
        "unparsable_references": len(stats) - len(scored),
        "speaker_count_error": round(float(np.mean(counts)), 3) if counts else None,
        "speaker_count_right": (
            round(100 * float(np.mean([c == 0 for c in counts])), 2) if counts else None
        ),
    }
