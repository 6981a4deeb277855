"""Per metric: pairs compared with the reference implementation users compare with, and the
mismatches (issue 26). Figures, not assertions — the differential tests under ``tests/tasks/``
assert the same comparisons; this prints them in one table.

    python bench/metric_parity.py [--markdown]

References must be installed to be compared (nothing is downloaded); a metric whose reference
is missing here is listed as "not installed". The seeded generators are the tests' own.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _version(package: str) -> str:
    if package.startswith("port:"):
        return f"ported from {package[5:]}"
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _count(cases: list[Any], same: Callable[[Any], bool]) -> tuple[int, int]:
    return len(cases), sum(1 for c in cases if not same(c))


def rows() -> list[dict[str, Any]]:
    """One row per metric: reference, its version here, pairs compared, mismatches."""
    sys.path.insert(0, str(ROOT))
    import jiwer
    import numpy as np
    from tests.tasks import (
        test_bfcl_parity as bfcl,
    )
    from tests.tasks import (
        test_ifeval_official_parity as ife,
    )
    from tests.tasks import (
        test_meteor_nltk_parity as met,
    )
    from tests.tasks import (
        test_sql_spider_parity as spider,
    )
    from tests.tasks import (
        test_wder_diarizationlm_parity as dlm,
    )
    from tests.tasks import (
        test_wer_reference_parity as werp,
    )
    from whisper_normalizer.english import EnglishTextNormalizer

    from voxbench.audio.textnorm import normalize_english_spoken
    from voxbench.core.stats import wilson_interval
    from voxbench.metrics import ifeval, meteor, sql
    from voxbench.metrics.answers import basic_normalize
    from voxbench.metrics.diarisation import Turns, wder_counts
    from voxbench.metrics.registry import METRICS, ScoringContext

    whisper = EnglishTextNormalizer()
    out: list[dict[str, Any]] = []

    def add(metric: str, reference: str, package: str, n: int, bad: int) -> None:
        out.append({"metric": metric, "reference": reference,
                    "version": _version(package), "pairs": n, "mismatches": bad})  # fmt: skip

    def ctx(ref: str, **kw: Any) -> ScoringContext:
        return ScoringContext(reference=ref, language="en", target_language="en",
                              answer=kw.pop("answer", "text"), **kw)  # fmt: skip

    def jiwer_errors(ref: str, hyp: str) -> tuple[int, int]:
        r, h = whisper(ref), whisper(hyp)
        if not r.split():
            return len(h.split()), 0
        o = jiwer.process_words(r, h if h.split() else "")
        return o.substitutions + o.deletions + o.insertions, len(r.split())

    pairs = werp.PAIRS
    add("wer (en)", "jiwer on whisper-normalizer's EnglishTextNormalizer", "jiwer",
        *_count(pairs, lambda p: (lambda s: (s["errors"], s["units"]))(
            METRICS["wer"].score(p[1], ctx(p[0]))) == jiwer_errors(*p)))  # fmt: skip

    def jiwer_cer(p: tuple[str, str]) -> bool:
        r, h = whisper(p[0]), whisper(p[1])
        s = METRICS["cer"].score(p[1], ctx(p[0]))
        if not r:
            return s["units"] == 0
        return (s["errors"], s["units"]) == (
            round(jiwer.cer(r, h) * len(r)) if h else len(r), len(r))  # fmt: skip

    add("cer (en)", "jiwer.cer on whisper-normalizer's output", "jiwer", *_count(pairs, jiwer_cer))
    texts = [t for p in pairs for t in p]

    def normaliser_same(t: str) -> bool:
        return werp.normalize_english(t) == whisper(t)

    add("English normaliser (wer, cer)", "whisper-normalizer EnglishTextNormalizer",
        "whisper-normalizer", *_count(texts, normaliser_same))  # fmt: skip
    rng = random.Random(1900)
    numbers = [werp._number_text(rng) for _ in range(400)]
    add(
        "wer_spoken on numbers that are no times",
        "whisper-normalizer EnglishTextNormalizer",
        "whisper-normalizer",
        *_count(numbers, lambda t: normalize_english_spoken(t) == whisper(t)),
    )

    import sacrebleu

    refs, hyps = [p[0] for p in pairs[:300]], [p[1] for p in pairs[:300]]
    for kind, theirs in (("bleu", sacrebleu.corpus_bleu(hyps, [refs]).score),
                         ("chrf", sacrebleu.corpus_chrf(hyps, [refs]).score),
                         ("ter", sacrebleu.corpus_ter(hyps, [refs]).score)):  # fmt: skip
        stats = [METRICS[kind].score(h, ctx(r)) for r, h in zip(refs, hyps, strict=True)]
        ours = METRICS[kind].pool(stats, None)["value"]
        add(f"{kind} (one corpus of 300 pairs, 13a)", f"sacrebleu corpus_{kind}", "sacrebleu", 1,
            int(abs(ours - round(theirs, 2)) > 0.005))  # fmt: skip

    from scipy.stats import binomtest

    counts = [(k, n) for n in (1, 2, 5, 10, 20, 50, 100) for k in range(n + 1)]

    def wilson_same(c: tuple[int, int]) -> bool:
        ref = binomtest(c[0], c[1]).proportion_ci(method="wilson")
        ours = wilson_interval(*c)
        return ours is not None and max(abs(ours[0] - ref.low), abs(ours[1] - ref.high)) < 5e-5

    add(
        "Wilson interval of every yes/no metric",
        "scipy binomtest(...).proportion_ci('wilson') (= statsmodels proportion_confint wilson)",
        "scipy",
        *_count(counts, wilson_same),
    )

    rng = random.Random(26)
    calls = [bfcl._case(rng) for _ in range(400)]

    def bfcl_same(c: Any) -> bool:
        func, possible, output = c
        c2 = ctx(json.dumps([{"f": possible}]), answer="function_call",
                 tool_schemas={"f": func["parameters"]})  # fmt: skip
        ours = METRICS["function_call_match"].score(
            json.dumps([{"name": "f", "arguments": output}]), c2)["correct"]  # fmt: skip
        return ours == int(bfcl.bfcl_simple_function_checker(func, {"f": output}, possible))

    add("function_call_match", "BFCL ast_checker simple_function_checker (ported rules)",
        "port:gorilla BFCL", *_count(calls, bfcl_same))  # fmt: skip

    mpairs = met._pairs(5, 400)

    def nosyn_same(p: tuple[str, str]) -> bool:
        ours = METRICS["meteor_nosyn"].score(p[1], ctx(p[0]))["score"]
        theirs = met.meteor_score([basic_normalize(p[0]).split()], basic_normalize(p[1]).split(),
                                  wordnet=met.NoWordNet())  # fmt: skip
        return abs(ours - theirs) < 1e-6

    add("meteor_nosyn", "nltk meteor_score, no WordNet", "nltk", *_count(mpairs, nosyn_same))
    wordnet = meteor.wordnet_reader()
    if wordnet is None:
        add("meteor", "nltk meteor_score with WordNet (no local WordNet here)", "nltk", 0, 0)
    else:
        add("meteor", "nltk meteor_score with WordNet", "nltk", *_count(
            met._pairs(6, 400), lambda p: abs(METRICS["meteor"].score(p[1], ctx(p[0]))["score"]
            - met.meteor_score([basic_normalize(p[0]).split()], basic_normalize(p[1]).split(),
                               wordnet=wordnet)) < 1e-6))  # fmt: skip

    rng = random.Random(6)
    replies = [(ife._reply(rng), rng.randint(1, 3), rng.randint(1, 3),
                rng.choice(["don", "twas", "then", "isn", "wait", "o", "Then"]))
               for _ in range(300)]  # fmt: skip
    n1, b1 = _count(replies, lambda c: ifeval.nth_paragraph_first_word(*c)
                    == ife.official_first_word(*c))  # fmt: skip
    rng = random.Random(7)
    kw = ["colou?r", "a.b", "state-of", "ended", "\\bso\\b", "and|well"]
    kcases = [(ife._reply(rng), rng.sample(kw, rng.randint(1, 3))) for _ in range(300)]
    n2, b2 = _count(kcases, lambda c: ifeval.existence(*c) == ife.official_existence(*c)
                    and ifeval.forbidden_words(*c) == ife.official_forbidden(*c))  # fmt: skip
    add("instruction_following (first word, keywords)", "google-research IFEval "
        "instructions.py (ported checks)", "port:google-research", n1 + n2, b1 + b2)  # fmt: skip

    rng = random.Random(7)
    results = []
    for _ in range(2000):
        gold = spider._result(rng)
        pred = spider._variant(rng, gold) if rng.random() < 0.8 else spider._result(rng)
        order = rng.random() < 0.3
        if not (gold and pred and len(pred[0]) != len(gold[0])):
            results.append((gold, pred, order))

    def sql_same(c: Any) -> bool:
        return sql.results_match(c[0], c[1], ordered=c[2]) == spider.spider_result_eq(*c)

    add(
        "sql_execution_match (result comparison)",
        "Spider test-suite exec_eval result_eq (ported), keep_distinct=False",
        "port:test-suite-sql-eval",
        *_count(results, sql_same),
    )

    rng = random.Random(236)
    vocab = ["yes", "no", "the", "a", "ok", "so", "hmm", "right", "we", "go"]
    transcripts = []
    for _ in range(300):
        n = rng.randint(1, 25)
        ref = [rng.choice(vocab) for _ in range(n)]
        rs = [rng.randint(1, 3) for _ in range(n)]
        hyp = [w if rng.random() > 0.2 else rng.choice(vocab) for w in ref if rng.random() > 0.1]
        hs = [rng.randint(1, 3) for _ in hyp]
        if hyp:
            transcripts.append((ref, rs, hyp, hs))

    def wder_same(c: Any) -> bool:
        ref, rs, hyp, hs = c
        ours = wder_counts(Turns(ref, [str(s) for s in rs]), Turns(hyp, [str(s) for s in hs]))
        return (ours["errors"], ours["units"]) == dlm.dlm_wder(ref, rs, hyp, hs)

    add("wder", "DiarizationLM 0.1.5 levenshtein_with_edits + linear_sum_assignment (its code)",
        "port:diarizationlm 0.1.5", *_count(transcripts, wder_same))  # fmt: skip
    for metric, reference, package in (
        ("accuracy, macro_f1", "scikit-learn accuracy_score, f1_score(average='macro')",
         "scikit-learn"),
        ("cpwer", "meeteval cpWER", "meeteval"),
    ):  # fmt: skip
        add(metric, reference + " (not compared by this script)", package, 0, 0)
    del np
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    table = rows()
    if args.markdown:
        print("| metric | reference | version here | pairs | mismatches |\n|---|---|---|---|---|")
        for r in table:
            print(f"| {r['metric']} | {r['reference']} | {r['version']} | {r['pairs']} | "
                  f"{r['mismatches']} |")  # fmt: skip
        return
    for r in table:
        print(f"{r['metric'][:44]:44} {r['pairs']:>5} pairs {r['mismatches']:>4} mismatches  "
              f"{r['reference']} [{r['version']}]")  # fmt: skip


if __name__ == "__main__":
    main()
