"""Word error rate between a reference and a hypothesis, after normalisation.

English text is normalised with Whisper's English normaliser after voxbench's spoken forms
(``normalize_english_spoken``, named ``SPOKEN_ENGLISH_NORMALIZER`` in outputs): what an agent's
TTS says ("8:30 a.m.", "(ID checked)") against what ASR heard, so "I'm" against "I am" and
"8:30 a.m." against "eight thirty am" are no error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import jiwer

from voxbench.audio.textnorm import join_compounds, normalize_english_spoken


@dataclass(frozen=True)
class WordErrors:
    """Edit counts behind a word error rate."""

    substitutions: int
    deletions: int
    insertions: int
    reference_words: int

    @property
    def rate(self) -> float:
        """(S + D + I) / N; with an empty reference, 0 if the hypothesis is empty too, else 1."""
        errors = self.substitutions + self.deletions + self.insertions
        if self.reference_words == 0:
            return 1.0 if errors else 0.0
        return errors / self.reference_words


def word_errors(
    references: str | Sequence[str], hypotheses: str | Sequence[str], normalize: bool = True
) -> WordErrors:
    """Substitutions, deletions and insertions summed over paired texts."""
    refs = [references] if isinstance(references, str) else list(references)
    hyps = [hypotheses] if isinstance(hypotheses, str) else list(hypotheses)
    if len(refs) != len(hyps):
        raise ValueError(f"{len(refs)} references but {len(hyps)} hypotheses")
    if normalize:
        refs = [normalize_english_spoken(r) for r in refs]
        hyps = [normalize_english_spoken(h) for h in hyps]
    s = d = i = n = 0
    for ref, hyp in zip(refs, hyps, strict=True):
        ref_words, hyp_words = ref.split(), hyp.split()
        if normalize:  # "after party" against "afterparty" is one word spaced two ways
            ref_words = join_compounds(ref_words, hyp_words)
            hyp_words = join_compounds(hyp_words, ref_words)
            ref, hyp = " ".join(ref_words), " ".join(hyp_words)
        n += len(ref_words)
        if not ref_words or not hyp_words:  # jiwer refuses empty strings
            d += len(ref_words)
            i += len(hyp_words)
            continue
        out = jiwer.process_words(ref, hyp)
        s, d, i = s + out.substitutions, d + out.deletions, i + out.insertions
    return WordErrors(s, d, i, n)


def word_error_rate(
    reference: str | Sequence[str], hypothesis: str | Sequence[str], normalize: bool = True
) -> float:
    """WER of ``hypothesis`` against ``reference`` (lists are pooled: total errors / total words)."""
    return word_errors(reference, hypothesis, normalize).rate
