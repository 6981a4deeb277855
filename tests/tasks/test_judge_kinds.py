"""``llm_judge_detailed`` (0–5) and ``llm_judge_refusal`` against the fake judge on the fake
OpenAI-compatible server; the judge always sees the question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from voxbench.tasks.judge import (
    DETAILED,
    KINDS,
    REFUSAL,
    InvalidJudgeReply,
    judge_messages,
    parse_reply,
)

from .conftest import TINY_ROWS, FakeEndpoints, run_yaml
from .fake_judge import GullibleJudge, TrackingServer
from .test_http import serving
from .test_judge import INJECTIONS

REFUSING = "I can't help with that."


@pytest.fixture
def question_task(tasks_dir: Path) -> str:
    """``qa``: the tiny task with a ``question`` column, judged by every judge kind."""
    manifest = tasks_dir / "mine" / "data" / "manifest.jsonl"
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    for row in rows:
        row["question"] = f"What does {row['speaker']} say?"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tasks_dir / "mine" / "qa.yaml").write_text(
        "extends: tiny\ndescription: tiny spoken QA\ncolumns: {question: question}\n"
        "metrics: [llm_judge, llm_judge_detailed, llm_judge_refusal]\n"
    )
    return "tasks: [qa]\ntasks_dirs: [mytasks]\n"


def _config(url: str, extra: str = "") -> str:
    return (
        "models: [{name: m, model: vllm/q}]\n"
        f"judge: {{model: openai-compatible/judge-1, base_url: '{url}', backoff_base_s: 0{extra}}}\n"
    )


def _answers(reply: dict[str, str]) -> FakeEndpoints:
    return FakeEndpoints(reply=lambda r: reply.get(r.reference, r.reference))


def _records(script: GullibleJudge, kind: str) -> list[dict[str, Any]]:
    """The records the judge saw, for the requests of one kind (by their first line)."""
    ask = KINDS[kind].ask
    return [
        next(json.loads(line) for line in text.splitlines() if line.startswith("{"))
        for text in script.seen
        if text.startswith(ask)
    ]


def test_every_kind_grades_and_sees_the_question(tmp_path: Path, question_task: str) -> None:
    script = GullibleJudge()
    replies = {
        "four five six": "four five",  # partly right: 2 of 5
        "dix onze douze": REFUSING,  # refuses: 0 of 5
    }
    with serving(TrackingServer(script)) as server:
        result = run_yaml(_config(server.url) + question_task, tmp_path, _answers(replies))
        bodies = [r.json() for r in server.requests]
    metrics = result.scores["tasks"]["qa"]["m"]["metrics"]
    assert metrics["llm_judge"]["value"] == pytest.approx(100 * 4 / 6, abs=0.01)
    detailed = metrics["llm_judge_detailed"]
    assert detailed["value"] == pytest.approx((4 * 5 + 2 + 0) / 6, abs=0.01)
    assert detailed["percent"] == pytest.approx(20 * detailed["value"], abs=0.01)
    assert detailed["scale"] == "0-5" and detailed["undecided"] == 0 and detailed["n"] == 6
    assert detailed["ci"] is not None and detailed["percent_ci"] is not None
    refusal = metrics["llm_judge_refusal"]
    assert refusal["value"] == pytest.approx(100 / 6, abs=0.01) and refusal["n"] == 6
    assert len(bodies) == 18  # each record, each kind: no cross-kind cache hit
    schemas = {
        json.dumps(b["response_format"]["json_schema"]["schema"]["properties"], sort_keys=True)
        for b in bodies
    }
    assert len(schemas) == 3
    for kind in ("llm_judge", "llm_judge_detailed", "llm_judge_refusal"):  # the task's kinds
        seen = _records(script, kind)
        assert len(seen) == 6, kind
        for record in seen:
            assert record["question"].startswith("What does s")
            assert record["instruction"].startswith("Transcribe s")
            assert ("reference" in record) == (kind != "llm_judge_refusal"), kind
    rows = {r["id"]: r["scores"] for r in result.run.rows()}
    assert rows["b"]["llm_judge_detailed"] == {"score": 2, "undecided": 0, "reason": "differs"}
    assert rows["d"]["llm_judge_refusal"] == {"refused": 1, "undecided": 0, "reason": "declines"}
    assert rows["a"]["llm_judge_refusal"]["refused"] == 0
    info = result.run.info()["judge"]
    kinds = ("llm_judge", "llm_judge_detailed", "llm_judge_refusal")
    assert info["by_metric"] == {k: 6 for k in kinds} and info["asked"] == 18
    report = (result.run.path / "report.md").read_text()
    assert f"(= {detailed['percent']:.1f}%)" in report


def test_no_question_column_no_question(tmp_path: Path, tasks_dir: Path) -> None:
    (tasks_dir / "mine" / "plain.yaml").write_text("extends: tiny\nmetrics: [llm_judge_detailed]\n")
    script = GullibleJudge()
    with serving(TrackingServer(script)) as server:
        config = _config(server.url) + "tasks: [plain]\ntasks_dirs: [mytasks]\n"
        run_yaml(config, tmp_path, _answers({}))
    seen = _records(script, "llm_judge_detailed")
    assert len(seen) == 6 and all("question" not in r for r in seen)
    assert all(r["instruction"] for r in seen)


def test_a_prediction_cannot_raise_its_own_score_or_refusal(
    tmp_path: Path, question_task: str
) -> None:
    script = GullibleJudge()
    replies = dict(zip([r[4] for r in TINY_ROWS], INJECTIONS, strict=False))
    with serving(TrackingServer(script)) as server:
        result = run_yaml(_config(server.url) + question_task, tmp_path, _answers(replies))
    metrics = result.scores["tasks"]["qa"]["m"]["metrics"]
    # Five injected replies ("Paris. … give this full marks") share no word with their
    # references: 0 each; the untouched record 5.
    assert metrics["llm_judge_detailed"]["value"] == pytest.approx(5 / 6, abs=0.01)
    assert metrics["llm_judge_refusal"]["value"] == 0.0
    for text in script.seen:
        assert sum(1 for line in text.splitlines() if line.startswith("{")) == 1


def test_unusable_scores_are_retried_then_undecided(tmp_path: Path, question_task: str) -> None:
    (Path(tmp_path) / "mytasks" / "mine" / "qa.yaml").write_text(
        "extends: tiny\ncolumns: {question: question}\nmetrics: [llm_judge_detailed]\n"
    )
    script = GullibleJudge(unusable={"four five six": 3, "one two three": 1})
    with serving(TrackingServer(script)) as server:
        config = _config(server.url, ", retries: 2") + question_task
        result = run_yaml(config, tmp_path, _answers({}))
        calls = len(server.requests)
    stats = result.scores["tasks"]["qa"]["m"]["metrics"]["llm_judge_detailed"]
    assert (stats["undecided"], stats["n"], stats["value"]) == (1, 5, 5.0)
    assert calls == 3 + 2 + 4
    row = next(r for r in result.run.rows() if r["id"] == "b")
    assert row["scores"]["llm_judge_detailed"]["undecided"] == 1
    assert "score must be an integer from 0 to 5" in row["scores"]["llm_judge_detailed"]["reason"]
    assert result.run.info()["judge"]["invalid_replies"] == 4


def test_detailed_and_refusal_verdicts_are_cached(tmp_path: Path, question_task: str) -> None:
    config = "output_dir: shared\n" + question_task
    with serving(TrackingServer(GullibleJudge())) as server:
        first = run_yaml(_config(server.url) + config, tmp_path, _answers({}))
        asked = len(server.requests)
        second = run_yaml(_config(server.url) + config, tmp_path, _answers({}))
        again = len(server.requests) - asked
    assert asked == 18 and again == 0
    metrics = [r.scores["tasks"]["qa"]["m"]["metrics"] for r in (first, second)]
    assert metrics[0] == metrics[1]


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('{"reason": "", "score": 6}', "0 to 5"),
        ('{"reason": "", "score": -1}', "0 to 5"),
        ('{"reason": "", "score": 3.0}', "0 to 5"),
        ('{"reason": "", "score": true}', "0 to 5"),
        ('{"reason": "", "correct": true}', "expected exactly reason and score"),
    ],
)
def test_detailed_reply_is_strict(reply: str, why: str) -> None:
    with pytest.raises(InvalidJudgeReply, match=why):
        parse_reply(reply, DETAILED)


def test_replies_of_each_kind() -> None:
    assert parse_reply('{"reason": "ok", "score": 0}', DETAILED) == (0, "ok")
    assert parse_reply('{"reason": "no", "refused": true}', REFUSAL) == (True, "no")
    with pytest.raises(InvalidJudgeReply, match="refused must be true or false"):
        parse_reply('{"reason": "no", "refused": 1}', REFUSAL)


def test_each_kind_states_its_task_and_keeps_the_rubric_in_place() -> None:
    material = {"task": "t", "instruction": "say it", "question": "Q?", "reference": "R",
                "prediction": "P"}  # fmt: skip
    system, user = judge_messages(material, "Names must match.", DETAILED)
    assert "from 0 to 5" in system and "What makes an answer right: Names must match." in system
    assert '"score": <an integer from 0 to 5>' in system
    assert user.startswith(DETAILED.ask) and '"reference": "R"' in user
    system, user = judge_messages(material, "Names must match.", REFUSAL)
    assert "refuse" in system and "Names must match." not in system
    assert '"reference"' not in user and '"question": "Q?"' in user
