"""BERTScore: the missing-extra and uncached-model errors, batching with an injected scorer,
and (only where the extra and a cached model exist) the real scorer."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from voxbench.core.errors import PrerequisiteError
from voxbench.core.results import TaskScores
from voxbench.metrics import bertscore
from voxbench.metrics.registry import METRICS, ScoringContext, metric_setup
from voxbench.report.tasks import metric_notes

from .conftest import run_yaml


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VOXBENCH_BERTSCORE_MODEL", "VOXBENCH_BERTSCORE_LAYER",
                 "VOXBENCH_BERTSCORE_RESCALE"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    bertscore.make_scorer.cache_clear()


class OverlapScorers:
    """A scorer factory whose scorer is token-overlap F1, noting every call it gets."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []
        self.made: list[tuple[bertscore.Setup, str]] = []

    def __call__(self, setup: bertscore.Setup, language: str) -> bertscore.Scorer:
        self.made.append((setup, language))

        def score(predictions: list[str], references: list[str]) -> list[float]:
            self.calls.append((language, len(predictions)))
            out = []
            for p, r in zip(predictions, references, strict=True):
                ps, rs = set(p.split()), set(r.split())
                common = len(ps & rs)
                out.append(0.0 if not common else 2 * common / (len(ps) + len(rs)))
            return out

        return score


def _ctx(reference: str, language: str = "en") -> ScoringContext:
    return ScoringContext(reference=reference, language=language, target_language=language,
                          answer="text")  # fmt: skip


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bertscore, "missing_packages", lambda: ["torch", "bert_score"])
    with pytest.raises(PrerequisiteError) as caught:
        bertscore.check_available()
    message = str(caught.value)
    assert "pip install 'voxbench[bertscore]'" in message and "torch" in message
    with pytest.raises(PrerequisiteError, match=r"voxbench\[bertscore\]"):
        bertscore.make_scorer(bertscore.setup_from_env(), "en")


def test_uncached_model_says_how_to_fetch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(bertscore, "missing_packages", lambda: [])
    with pytest.raises(PrerequisiteError) as caught:
        bertscore.check_available()
    assert "huggingface-cli download bert-base-multilingual-cased" in str(caught.value)
    assert "never downloads" in str(caught.value)
    # A local folder is taken as it is.
    monkeypatch.setenv("VOXBENCH_BERTSCORE_MODEL", str(tmp_path))
    monkeypatch.setenv("VOXBENCH_BERTSCORE_LAYER", "4")
    assert bertscore.check_available().layer == 4


def test_a_run_using_bertscore_without_the_extra_fails_before_sending(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bertscore, "missing_packages", lambda: ["torch"])
    config = (
        "models: [{name: m, model: local/oracle}]\n"
        "tasks: [{name: tiny, metrics: [wer, bertscore]}]\ntasks_dirs: [mytasks]\n"
    )
    with pytest.raises(PrerequisiteError, match=r"voxbench\[bertscore\]"):
        run_yaml(config, tmp_path)
    assert not (tmp_path / "runs").exists()


def test_all_records_are_scored_in_one_batched_call(monkeypatch: pytest.MonkeyPatch) -> None:
    scorers = OverlapScorers()
    monkeypatch.setattr(bertscore, "make_scorer", scorers)
    metric = METRICS["bertscore"]
    pairs = [("a b c", "a b c"), ("a b", "c d"), ("x y", "x z"), ("q", "q")] * 25
    stats = [metric.score(p, _ctx(r, "en" if i % 2 else "fr")) for i, (p, r) in enumerate(pairs)]
    pooled = metric.pool(stats, np.random.default_rng(0))
    assert scorers.calls == [("", 100)]  # one call for the whole task, not one per record
    assert pooled["n"] == 100 and pooled["ci"] is not None
    assert pooled["value"] == pytest.approx(100 * (1 + 0 + 0.5 + 1) / 4, abs=0.01)
    assert pooled["model"] == "bert-base-multilingual-cased" and pooled["layer"] == 9
    assert pooled["rescaled_with_baseline"] is False
    assert "no baseline rescaling" in "\n".join(metric_notes(TaskScores.model_validate({"tasks": {"t": {"m": {
        "metrics": {"bertscore": pooled}}}}})))  # fmt: skip


def test_rescaling_scores_once_per_language(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXBENCH_BERTSCORE_RESCALE", "1")
    scorers = OverlapScorers()
    monkeypatch.setattr(bertscore, "make_scorer", scorers)
    metric = METRICS["bertscore"]
    stats = [metric.score("a", _ctx("a", lang)) for lang in ("en", "fr", "en-GB", "fr", "en")]
    pooled = metric.pool(stats, None)
    assert sorted(scorers.calls) == [("en", 3), ("fr", 2)]
    assert pooled["rescaled_with_baseline"] is True and pooled["value"] == 100.0
    assert metric_setup(["bertscore"])["bertscore"]["rescaled_with_baseline"] is True


def test_empty_task_pools_to_no_value() -> None:
    pooled = METRICS["bertscore"].pool([], None)
    assert pooled["value"] is None and pooled["n"] == 0


def test_bad_layer_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXBENCH_BERTSCORE_LAYER", "nine")
    with pytest.raises(PrerequisiteError, match="VOXBENCH_BERTSCORE_LAYER"):
        bertscore.setup_from_env()


def test_real_model_when_available() -> None:
    """Runs only where the extra is installed and the default model is cached locally."""
    if bertscore.missing_packages():
        pytest.skip("the bertscore extra is not installed")
    try:
        setup = bertscore.check_available()
    except PrerequisiteError as exc:
        pytest.skip(str(exc))
    assert importlib.util.find_spec("torch") is not None
    score = bertscore.make_scorer(setup, "en")
    same, other = score(["the cat sat on the mat", "hello"], ["the cat sat on the mat", "tax law"])
    assert same == pytest.approx(1.0, abs=1e-4) and other < same
