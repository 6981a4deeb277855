"""The metrics and task families AU-Harness had and voxbench lacked (issue 30 item 8):
dialogue-state tracking (``joint_goal_accuracy``, ``slot_accuracy``), COMET (its code path on
a clearly labelled STUB of the ``comet`` package: the real model is weights a user brings),
the MT-Bench and CallHome judges (against the fake judge), and the new registry tasks run on
tiny local copies with their public columns."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voxbench.core.errors import PrerequisiteError
from voxbench.metrics import comet
from voxbench.metrics.registry import METRICS, ScoringContext
from voxbench.tasks.judge import CALLHOME, MT_BENCH, InvalidJudgeReply, parse_reply
from voxbench.tasks.spec import TaskRegistry

from .conftest import run_yaml
from .fake_judge import GullibleJudge, TrackingServer
from .test_http import serving


def _ctx(reference: str, **columns: Any) -> ScoringContext:
    return ScoringContext(
        reference=reference, language="en", target_language="en", answer="text", columns=columns
    )


def _pool(metric: str, predictions: list[str], references: list[str], **columns: Any) -> Any:
    stats = [
        METRICS[metric].score(p, _ctx(r, **columns))
        for p, r in zip(predictions, references, strict=True)
    ]
    return METRICS[metric].pool(stats, np.random.default_rng(0))


# -- dialogue-state tracking ---------------------------------------------------------------------

STATE = json.dumps({"restaurant-area": "centre", "restaurant-food": "Italian"})


def test_joint_goal_and_slot_accuracy() -> None:
    replies = [
        'Sure! {"restaurant-area": "centre", "restaurant_food": "italian."}',  # both, normalised
        'Okay. {"restaurant-area": "centre"}',  # one of two
        '{"restaurant-area": "centre", "restaurant-food": "italian", "hotel-stars": "4"}',  # extra
        "I can help with that.",  # no state
    ]
    references = [STATE] * 4
    joint = _pool("joint_goal_accuracy", replies, references)
    assert joint["value"] == 25.0 and joint["n"] == 4  # only the first equals the state
    slots = _pool("slot_accuracy", replies, references)
    assert slots["value"] == pytest.approx(100 * 5 / 8, abs=0.01)  # 2 + 1 + 2 + 0 of 8 pairs
    # An empty state is matched only by a reply that gives none.
    empty = _pool("joint_goal_accuracy", ["{}", '{"taxi-leave": "5"}'], ["{}", "{}"])
    assert empty["value"] == 50.0


# -- COMET on a STUB of the comet package -------------------------------------------------------


class StubCometModel:
    """STUB, not COMET: scores a segment 1.0 when the translation equals the reference, else
    0.25; it records each ``predict`` call so the batching can be checked."""

    calls: list[dict[str, Any]] = []

    def predict(self, samples: list[dict[str, str]], **kwargs: Any) -> Any:
        StubCometModel.calls.append({"samples": samples, **kwargs})
        scores = [1.0 if s["mt"] == s["ref"] else 0.25 for s in samples]
        return types.SimpleNamespace(scores=scores, system_score=sum(scores) / len(scores))


@pytest.fixture
def stub_comet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A STUB ``comet`` module (``load_from_checkpoint`` → ``StubCometModel``) and a local
    checkpoint folder, as a user who brings the weights has."""
    checkpoint = tmp_path / "my-comet" / "checkpoints" / "model.ckpt"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(b"stub checkpoint")
    loaded: list[str] = []
    module = types.ModuleType("comet")
    module.__spec__ = types.SimpleNamespace(name="comet")  # type: ignore[assignment]
    module.load_from_checkpoint = lambda path: loaded.append(path) or StubCometModel()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "comet", module)
    monkeypatch.setattr(comet.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setenv("VOXBENCH_COMET_MODEL", str(checkpoint.parent.parent))
    comet.make_scorer.cache_clear()
    StubCometModel.calls = []
    yield checkpoint
    comet.make_scorer.cache_clear()
    assert loaded == [str(checkpoint)] or not loaded


def test_comet_scores_a_task_in_one_batched_call(stub_comet: Path) -> None:
    pooled = _pool("comet", ["Hello world.", "Good night"], ["Hello world.", "Good morning"],
                   sentence="你好")  # fmt: skip
    assert pooled["value"] == pytest.approx(100 * (1.0 + 0.25) / 2)
    assert pooled["checkpoint"] == str(stub_comet) and pooled["no_source"] == 0
    (call,) = StubCometModel.calls  # every record of the task in one predict call
    assert call["samples"][0] == {"src": "你好", "mt": "Hello world.", "ref": "Hello world."}
    assert call["gpus"] == 0 and call["progress_bar"] is False


def test_comet_counts_records_without_a_source(stub_comet: Path) -> None:
    pooled = _pool("comet", ["a"], ["a"])
    assert pooled["no_source"] == 1 and pooled["value"] == 100.0


def test_comet_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comet.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(PrerequisiteError, match=r"pip install 'voxbench\[comet\]'"):
        comet.check_available()
    monkeypatch.setattr(comet.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setenv("VOXBENCH_COMET_MODEL", str(tmp_path))  # a folder without a checkpoint
    with pytest.raises(PrerequisiteError, match="checkpoints/model.ckpt"):
        comet.check_available()


# -- the MT-Bench and CallHome judges ------------------------------------------------------------


def test_the_new_judge_kinds_read_their_scales() -> None:
    assert parse_reply('{"reason": "fine", "rating": 8}', MT_BENCH) == (8, "fine")
    assert parse_reply('{"reason": "ok", "points": 0}', CALLHOME) == (0, "ok")
    for text, kind in (('{"reason": "", "rating": 0}', MT_BENCH),
                       ('{"reason": "", "points": 10}', CALLHOME),
                       ('{"reason": "", "rating": true}', MT_BENCH)):  # fmt: skip
        with pytest.raises(InvalidJudgeReply):
            parse_reply(text, kind)


def test_mt_bench_and_callhome_judges_grade_a_run(tmp_path: Path, tasks_dir: Path) -> None:
    (tasks_dir / "mine" / "judged.yaml").write_text(
        "extends: tiny\nmetrics: [mt_bench_llm_judge, llm_judge_callhome]\n"
    )
    judge = GullibleJudge()
    with serving(TrackingServer(judge)) as server:
        result = run_yaml(
            "models: [{name: oracle, model: local/oracle}]\ntasks: [judged]\n"
            "tasks_dirs: [mytasks]\n"
            f"judge: {{model: openai-compatible/judge-1, base_url: '{server.url}', "
            "backoff_base_s: 0}\n",
            tmp_path,
        )
    metrics = result.scores["tasks"]["judged"]["oracle"]["metrics"]
    rating, points = metrics["mt_bench_llm_judge"], metrics["llm_judge_callhome"]
    assert (rating["value"], rating["scale"], rating["percent"]) == (10.0, "0-10", 100.0)
    assert (points["value"], points["scale"], points["percent"]) == (9.0, "0-9", 100.0)
    assert rating["undecided"] == 0 and rating["n"] == len(judge.seen) // 2


# -- the new task families, on copies with their public columns ----------------------------------

AUDIOBENCH = {"instruction": ["What is heard?"] * 2, "answer": ["A dog barks.", "Rain falls."]}


@pytest.mark.parametrize(
    ("task", "rows", "options"),
    [
        ("mu_chomusic", {**AUDIOBENCH, "choices": [["A dog", "A cat"], ["Rain", "Sun"]]},
         {"audio_column": "context"}),
        ("audiocaps", AUDIOBENCH, {"audio_column": "context"}),
        ("clotho_aqa", AUDIOBENCH, {"audio_column": "context"}),
        ("asvspoof2017", {"instruction": ["Spoofed?"] * 2, "label": ["bonafide", "spoof"]}, {}),
        ("voicebench_mmsu_biology", {"prompt": ["Q1?", "Q2?"], "reference": ["A", "B"]},
         {"config": "mmsu", "split": "biology"}),
        ("voicebench_sd_qa_usa", {"prompt": ["Q1?", "Q2?"], "reference": ["Paris", "Oslo"]},
         {"config": "sd-qa", "split": "usa"}),
        ("big_bench_audio", {"transcript": ["Q?"] * 2, "official_answer": ["True", "False"]},
         {"split": "train"}),
        ("spokenwoz", {"context": ["User: hi"] * 2, "text": ["a cheap place"] * 2,
                       "agent_text": ["Sure."] * 2,
                       "slots": [{"restaurant-pricerange": "cheap"}, {}]}, {}),
    ],
)  # fmt: skip
def test_a_new_family_task_runs_on_its_public_columns(
    tmp_path: Path, task: str, rows: dict[str, list], options: dict[str, Any]
) -> None:
    pytest.importorskip("datasets")
    from .hub_fixture import write_hub_fixture

    spec = TaskRegistry().get(task).spec
    copy = write_hub_fixture(tmp_path / "copy", rows, **{"split": spec.dataset.split, **options})
    judge = GullibleJudge()
    with serving(TrackingServer(judge)) as server:
        result = run_yaml(
            "models: [{name: oracle, model: local/oracle}]\n"
            f"tasks: [{task}]\ndataset_dirs: {{{task}: {copy}}}\n"
            f"judge: {{model: openai-compatible/judge-1, base_url: '{server.url}', "
            "backoff_base_s: 0}\n",
            tmp_path,
        )
    metrics = result.scores["tasks"][task]["oracle"]["metrics"]
    assert set(metrics) == set(spec.metrics)
    for name, pooled in metrics.items():  # the oracle answers the reference: every metric best
        assert pooled.get("percent", pooled["value"]) == 100.0 and pooled["n"] == 2, name


def test_the_families_are_groups() -> None:
    groups = TaskRegistry().groups
    assert groups["music_understanding"] == ["mu_chomusic"]
    assert len(groups["scene_understanding"]) == 5
    assert len(groups["sqqa"]) == 1 + 1 + 12 + 11  # Big Bench Audio, OpenBookQA, MMSU, SD-QA
    assert groups["spoofing"] == ["asvspoof2017"]
    assert groups["spoken_dialogue"] == ["spokenwoz"]
