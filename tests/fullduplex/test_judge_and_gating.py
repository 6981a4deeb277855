"""The LLM judge client (over an OpenAI-compatible endpoint) and baseline gating."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from voxbench.core.errors import ConfigError, PrerequisiteError, ProviderError
from voxbench.fullduplex.gating import compare, direction
from voxbench.fullduplex.judge import ChatJudge, parse_behavior, parse_rating, rate_relevance
from voxbench.fullduplex.sample_context import SampleScore
from voxbench.fullduplex.summary import read_summary, summarize, write_csv, write_json


def _completion(text: str) -> httpx.Response:
    return httpx.Response(
        200, json={"choices": [{"message": {"role": "assistant", "content": text}}]}
    )


def _judge(handler, monkeypatch: pytest.MonkeyPatch) -> tuple[ChatJudge, list[dict]]:
    sent: list[dict] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return handler(len(sent))

    judge = ChatJudge(
        "openai-compatible/grader", base_url="http://127.0.0.1:9/v1",
        transport=httpx.MockTransport(record), seed=7,
    )  # fmt: skip
    return judge, sent


def test_relevance_request_and_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, sent = _judge(
        lambda n: _completion('{"analysis": "on topic", "rating": 4}'), monkeypatch
    )
    rating = rate_relevance(judge, "books please", "what about films?", "Films are fun.")
    assert (rating.rating, rating.analysis, rating.seed) == (4, "on topic", 7)
    body = sent[0]
    assert body["model"] == "grader" and body["seed"] == 7 and body["temperature"] == 0.0
    assert "what about films?" in body["messages"][1]["content"]
    assert body["messages"][0]["role"] == "system"


def test_unparseable_answers_are_retried_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge, sent = _judge(lambda n: _completion("I cannot decide."), monkeypatch)
    with pytest.raises(ProviderError, match="no parseable answer"):
        rate_relevance(judge, "a", "b", "c")
    assert [b["seed"] for b in sent] == [7, 8, 9]


def test_transient_http_errors_are_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        1: httpx.Response(429, json={"error": {"message": "slow down"}}),
        2: _completion('{"rating": 2}'),
    }
    judge, sent = _judge(lambda n: answers[n], monkeypatch)
    assert rate_relevance(judge, "a", "b", "c").rating == 2
    assert len(sent) == 2


def test_a_hard_http_error_is_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    judge, _ = _judge(
        lambda n: httpx.Response(400, json={"error": {"message": "bad model"}}), monkeypatch
    )
    with pytest.raises(ProviderError, match="HTTP 400"):
        rate_relevance(judge, "a", "b", "c")


def test_judge_names_and_keys() -> None:
    with pytest.raises(PrerequisiteError, match="OPENAI_API_KEY"):
        ChatJudge("openai/gpt-4-turbo")
    with pytest.raises(ConfigError, match="unknown judge"):
        ChatJudge("nosuch/model")
    with pytest.raises(ConfigError, match="needs an endpoint"):
        ChatJudge("openai-compatible/x")


def test_answer_parsing() -> None:
    assert parse_rating('```json\n{"analysis": "x", "rating": 5}\n```') == (5, "x")
    assert parse_rating("Analysis: fine. I would rate the AI's response as 3")[0] == 3
    assert parse_rating('{"rating": 9}') is None
    assert parse_behavior('{"behavior": "Resume", "reason": "r"}') == ("resume", "r")
    assert parse_behavior('{"behavior": "C_RESPOND"}') is None


@pytest.mark.parametrize(
    ("category", "subset", "metric", "expected"),
    [
        ("pause_handling", "x", "tor", -1),
        ("smooth_turn_taking", "x", "tor", 1),
        ("user_interruption", "x", "tor", 1),
        ("smooth_turn_taking", "x", "latency", -1),
        ("backchannel", "x", "jsd", -1),
        ("backchannel", "x", "frequency", 1),
        ("behavior", "user_interruption", "respond", 1),
        ("behavior", "talking_to_other", "resume", 1),
        ("behavior", "talking_to_other", "respond", None),
    ],
)
def test_directions(category: str, subset: str, metric: str, expected: int | None) -> None:
    assert direction(category, subset, metric) == expected


def _summary(values: dict[tuple[str, str], float]) -> dict:
    scores = []
    for (category, metric), value in values.items():
        s = SampleScore(sample=category, subset="s", category=category, target="t")
        s.metrics[metric] = value
        scores.append(s)
    return summarize(scores, mode="fdb-v1")


BASE = {
    ("pause_handling", "tor"): 0.30,
    ("smooth_turn_taking", "tor"): 0.80,
    ("user_interruption", "tor"): 0.90,
    ("smooth_turn_taking", "latency"): 1.00,
}


@pytest.mark.parametrize(
    ("change", "regressed"),
    [
        ((("pause_handling", "tor"), 0.40), True),
        ((("pause_handling", "tor"), 0.10), False),
        ((("smooth_turn_taking", "tor"), 0.70), True),
        ((("smooth_turn_taking", "tor"), 0.95), False),
        ((("user_interruption", "tor"), 0.85), True),
        ((("smooth_turn_taking", "latency"), 1.05), False),  # within tolerance
        ((("smooth_turn_taking", "latency"), 1.30), True),
        ((("smooth_turn_taking", "latency"), 0.50), False),
    ],
)
def test_gating_is_direction_aware(change: tuple, regressed: bool) -> None:
    current = dict(BASE)
    current[change[0]] = change[1]
    results = compare(_summary(current), _summary(BASE), tolerance=0.02, latency_tolerance=0.1)
    flagged = {(r.category, r.metric) for r in results if r.regressed}
    assert flagged == ({change[0]} if regressed else set())
    assert len(results) == 4


def test_baseline_round_trips_through_json_and_csv(tmp_path: Path) -> None:
    summary = _summary(BASE)
    write_json(summary, tmp_path / "b.json")
    write_csv(summary, tmp_path / "b.csv")
    for name in ("b.json", "b.csv"):
        results = compare(summary, read_summary(tmp_path / name))
        assert len(results) == 4 and not any(r.regressed for r in results)


def test_baseline_of_another_mode_is_refused() -> None:
    other = dict(_summary(BASE), mode="voxbench")
    with pytest.raises(ConfigError, match="mode"):
        compare(_summary(BASE), other)
