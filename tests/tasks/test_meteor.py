"""METEOR: hand-computed sentences, nltk's METEOR on cases where both align alike, pooling."""

from __future__ import annotations

import numpy as np
import pytest

from voxbench.core.results import TaskScores
from voxbench.metrics import meteor
from voxbench.metrics.registry import METRICS, ScoringContext, metric_setup
from voxbench.report.tasks import metric_notes


def _w(text: str) -> list[str]:
    return text.split()


def _f(p: float, r: float) -> float:
    return p * r / (0.9 * p + 0.1 * r)


@pytest.fixture(autouse=True)
def no_wordnet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever nltk data this machine has, these cases run without synonyms."""
    monkeypatch.setattr(meteor, "local_wordnet", lambda: None)


def test_identical_sentence_is_one_chunk() -> None:
    words = _w("the cat sat on the mat")
    got = meteor.sentence_meteor(words, words)
    # m = 6, P = R = 1, one chunk: penalty 0.5 · (1/6)^3.
    assert got["matches"] == 6 and got["chunks"] == 1
    assert got["score"] == pytest.approx(1 - 0.5 / 216)


def test_hand_computed_with_a_repeated_word() -> None:
    hyp = _w("the cat sat on the mat")
    ref = _w("the cat is sitting on a mat")
    got = meteor.sentence_meteor(hyp, ref)
    # the–the, cat–cat, on–on, mat–mat: the first "the" pairs with the reference's, which
    # keeps "the cat" one chunk: chunks {the cat}, {on}, {mat} = 3.
    assert (got["matches"], got["chunks"]) == (4, 3)
    expected = _f(4 / 6, 4 / 7) * (1 - 0.5 * (3 / 4) ** 3)
    assert got["score"] == pytest.approx(expected)
    assert round(got["score"], 6) == 0.457428


def test_stem_stage_matches_what_exact_leaves() -> None:
    hyp = _w("running dogs jumped")
    ref = _w("the dog runs and jumps")
    got = meteor.sentence_meteor(hyp, ref)
    # run/run, dog/dog, jump/jump by stem; crossing order: 3 chunks.
    assert got["by_stage"] == {"exact": 0, "stem": 3}
    assert got["score"] == pytest.approx(_f(1, 3 / 5) * (1 - 0.5 * 1.0))
    exact_only = meteor.sentence_meteor(hyp, ref, stages=("exact",))
    assert exact_only["score"] == 0.0


def test_reversed_order_is_fragmented() -> None:
    got = meteor.sentence_meteor(list("abcd"), list("dcba"))
    assert got["chunks"] == 4
    assert got["score"] == pytest.approx(1 * (1 - 0.5))


def test_no_match_and_empty_texts() -> None:
    assert meteor.sentence_meteor(["a"], ["b"])["score"] == 0.0
    assert meteor.sentence_meteor([], ["b"])["score"] == 0.0
    assert meteor.sentence_meteor([], [])["score"] == 1.0


def test_synonym_stage_uses_the_given_lookup() -> None:
    table = {"big": frozenset({"big", "large"})}
    synonyms = lambda w: table.get(w, frozenset({w}))  # noqa: E731
    hyp, ref = _w("a big house"), _w("a large house")
    got = meteor.sentence_meteor(hyp, ref, ("exact", "stem", "synonym"), synonyms)
    assert got["by_stage"] == {"exact": 2, "stem": 0, "synonym": 1}
    assert got["chunks"] == 1 and got["stages"] == "exact+stem+synonym"
    assert meteor.sentence_meteor(hyp, ref)["matches"] == 2


def test_many_repeats_fall_back_without_blowing_up() -> None:
    hyp = ("the a " * 30).split()
    ref = ("a the " * 40).split()
    got = meteor.sentence_meteor(hyp, ref)
    assert got["matches"] == 60 and 0 < got["score"] < 1


def test_stages_by_language() -> None:
    assert meteor.stages_for("en-US", None) == ("exact", "stem")
    assert meteor.stages_for("en", lambda w: frozenset({w})) == ("exact", "stem", "synonym")
    assert meteor.stages_for("fr", None) == ("exact",)


def test_agrees_with_nltk_where_alignments_coincide() -> None:
    """nltk's METEOR with WordNet switched off (an empty lookup, offline), on sentences
    without repeated words (where its greedy alignment and ours are the same)."""
    nltk_meteor = pytest.importorskip("nltk.translate.meteor_score")

    class NoWordNet:
        def synsets(self, word: str) -> list[object]:
            return []

    cases = [
        ("running dogs jumped", "the dog runs and jumps"),
        ("a b c d", "d c b a"),
        ("he quickly opened doors", "she opened the door quickly"),
        ("cats are playing outside today", "the cat plays outside"),
        ("nothing in common", "totally different words"),
    ]
    for hyp, ref in cases:
        ours = meteor.sentence_meteor(hyp.split(), ref.split())["score"]
        theirs = nltk_meteor.single_meteor_score(ref.split(), hyp.split(), wordnet=NoWordNet())
        assert ours == pytest.approx(theirs, abs=1e-9), (hyp, ref)


def test_nltk_greedy_alignment_is_more_fragmented_on_repeats() -> None:
    """Where a word repeats, nltk pairs from the end (4 chunks); METEOR's rule is the fewest
    chunks (3): we follow the rule."""
    nltk_meteor = pytest.importorskip("nltk.translate.meteor_score")

    class NoWordNet:
        def synsets(self, word: str) -> list[object]:
            return []

    hyp, ref = _w("the cat sat on the mat"), _w("the cat is sitting on a mat")
    theirs = nltk_meteor.single_meteor_score(ref, hyp, wordnet=NoWordNet())
    assert theirs == pytest.approx(_f(4 / 6, 4 / 7) * (1 - 0.5 * 1.0))
    assert meteor.sentence_meteor(hyp, ref)["score"] > theirs


def test_metric_normalises_pools_and_names_its_stages() -> None:
    metric = METRICS["meteor"]
    ctx = ScoringContext(reference="The cat sat.", language="en", target_language="en",
                         answer="text")  # fmt: skip
    perfect = metric.score("the CAT sat!", ctx)
    assert perfect["score"] == pytest.approx(1 - 0.5 / 27, abs=1e-6)
    none = metric.score("dog", ctx)
    pooled = metric.pool([perfect, none], np.random.default_rng(0))
    assert pooled["value"] == pytest.approx(100 * perfect["score"] / 2, abs=0.01)
    assert pooled["n"] == 2 and pooled["ci"] is not None
    assert pooled["stages"] == "exact+stem" and pooled["synonyms"] is False
    french = metric.score("le chat", ScoringContext("les chats", "fr", "fr", "text"))
    assert french["stages"] == "exact+stem" and french["score"] > 0  # nltk stems "chats"
    assert metric_setup(["meteor"])["meteor"]["synonyms"].startswith("none (no local WordNet")
    scores = {"tasks": {"t": {"m": {"metrics": {"meteor": pooled}}}}}
    assert "METEOR without synonyms" in "\n".join(metric_notes(TaskScores.model_validate(scores)))


def test_no_wordnet_download_is_attempted(monkeypatch: pytest.MonkeyPatch) -> None:
    nltk = pytest.importorskip("nltk")
    monkeypatch.undo()  # the real lookup
    meteor.local_wordnet.cache_clear()
    called: list[str] = []
    monkeypatch.setattr(nltk, "download", lambda *a, **k: called.append("download"))
    monkeypatch.setattr(nltk.data, "path", [])  # nothing installed anywhere
    try:
        assert meteor.local_wordnet() is None
    finally:
        meteor.local_wordnet.cache_clear()
    assert called == []


def test_a_run_names_its_meteor_stages(tmp_path, tasks_dir) -> None:
    from .conftest import TINY_ROWS, run_yaml

    config = (
        "models: [{name: m, model: local/oracle}]\n"
        "tasks: [{name: tiny, metrics: [meteor]}]\ntasks_dirs: [mytasks]\n"
    )
    result = run_yaml(config, tmp_path)
    pooled = result.scores["tasks"]["tiny"]["m"]["metrics"]["meteor"]
    # The oracle says each reference: one chunk of m words each, penalty 0.5 / m³.
    expected = [1 - 0.5 / len(ref.split()) ** 3 for *_, ref in TINY_ROWS]
    assert pooled["value"] == pytest.approx(100 * sum(expected) / len(expected), abs=0.01)
    # nltk's meteor_score stems every language (as AU-Harness, which calls it, does).
    assert pooled["stages"] == "exact+stem" and pooled["synonyms"] is False
    assert pooled["variant"] == "meteor_nosyn"
    setup = result.run.info()["metric_setup"]["meteor"]
    assert setup["implementation"] == "nltk meteor_score"
    assert setup["synonyms"].startswith("none")
    report = (result.run.path / "report.md").read_text()
    assert "METEOR without synonyms (no local WordNet)" in report
