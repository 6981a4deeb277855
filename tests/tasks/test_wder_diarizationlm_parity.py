"""``wder`` against DiarizationLM's ``compute_utterance_metrics`` (issue 26 item 7): its
``levenshtein_with_edits`` (diarizationlm 0.1.5, ``levenshtein.py``) copied as written, less
numba, and its WDER (aligned words, the speaker mapping by ``linear_sum_assignment``), compared
on seeded generated transcripts whose alignments have many ties."""

from __future__ import annotations

import random

import numpy as np
from scipy import optimize

from voxbench.metrics.diarisation import Turns, wder_counts

_CORRECT, _SUBSTITUTION, _INSERTION, _DELETION = 0, 1, 2, 3


def levenshtein_with_edits(ref: str, hyp: str) -> tuple[int, list[tuple[int, int]]]:
    align = []
    s1 = ref.split()
    s2 = hyp.split()
    n1 = len(s1)
    n2 = len(s2)
    costs = np.zeros((n1 + 1, n2 + 1), dtype=np.int32)
    backptr = np.zeros((n1 + 1, n2 + 1), dtype=np.int32)
    for i in range(n1 + 1):
        costs[i][0] = i
    for j in range(n2):
        costs[0][j + 1] = j + 1
        for i in range(n1):
            ins = costs[i + 1][j] + 1
            del_ = costs[i][j + 1] + 1
            sub = costs[i][j] + (s1[i] != s2[j])
            costs[i + 1][j + 1] = min(ins, del_, sub)
            if costs[i + 1][j + 1] == ins:
                backptr[i + 1][j + 1] = _INSERTION
            elif costs[i + 1][j + 1] == del_:
                backptr[i + 1][j + 1] = _DELETION
            elif s1[i] == s2[j]:
                backptr[i + 1][j + 1] = _CORRECT
            else:
                backptr[i + 1][j + 1] = _SUBSTITUTION
    i = n1
    j = n2
    while i > 0 or j > 0:
        ed_op = _CORRECT
        if i >= 0 and j >= 0:
            ed_op = backptr[i][j]
        if i >= 0 and j < 0:
            ed_op = _DELETION
        if i < 0 and j >= 0:
            ed_op = _INSERTION
        if ed_op == _INSERTION:
            align.append((-1, j - 1))
            j -= 1
        elif ed_op == _DELETION:
            align.append((i - 1, -1))
            i -= 1
        else:
            align.append((i - 1, j - 1))
            i -= 1
            j -= 1
    align.reverse()
    return int(costs[n1][n2]), align


def dlm_wder(ref: list[str], ref_spk: list[int], hyp: list[str], hyp_spk: list[int]):
    _, align = levenshtein_with_edits(" ".join(ref), " ".join(hyp))
    pairs = [(ref_spk[i], hyp_spk[j]) for i, j in align if i != -1 and j != -1]
    if not pairs:
        return 0, 0
    max_spk = max(max(r for r, _ in pairs), max(h for _, h in pairs))
    cost = np.zeros((max_spk, max_spk), dtype=int)
    for r, h in pairs:
        cost[r - 1, h - 1] += 1
    rows, cols = optimize.linear_sum_assignment(cost, maximize=True)
    correct = int(cost[rows, cols].sum())
    return len(pairs) - correct, len(pairs)


def test_wder_equals_diarizationlm_on_generated_transcripts() -> None:
    rng = random.Random(236)
    vocab = ["yes", "no", "the", "a", "ok", "so", "hmm", "right", "we", "go"]  # many ties
    differ = []
    for _ in range(300):
        n = rng.randint(1, 25)
        ref = [rng.choice(vocab) for _ in range(n)]
        ref_spk = [rng.randint(1, 3) for _ in range(n)]
        hyp, hyp_spk = [], []
        for w, spk in zip(ref, ref_spk, strict=True):
            roll = rng.random()
            if roll < 0.1:
                continue
            hyp.append(rng.choice(vocab) if roll < 0.25 else w)
            hyp_spk.append(spk if rng.random() < 0.8 else rng.randint(1, 3))
            if rng.random() < 0.1:
                hyp.append(rng.choice(vocab))
                hyp_spk.append(rng.randint(1, 3))
        if not hyp:
            continue
        ours = wder_counts(
            Turns(ref, [str(s) for s in ref_spk]), Turns(hyp, [str(s) for s in hyp_spk])
        )
        theirs = dlm_wder(ref, ref_spk, hyp, hyp_spk)
        if (ours["errors"], ours["units"]) != theirs:
            differ.append((ref, ref_spk, hyp, hyp_spk, ours, theirs))
    assert differ == []
