"""The engine against fake endpoints: exact concurrency, work stealing, retries, errors, cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxbench.core.taskrun import TaskRunDirectory

from .conftest import FakeEndpoints, run_yaml

TINY = "tasks: [tiny]\ntasks_dirs: [mytasks]\n"


def test_each_endpoint_has_exactly_its_concurrency_in_flight(
    tmp_path: Path, tasks_dir: Path
) -> None:
    text = (
        "models: [{name: m, model: vllm/q, endpoints: ["
        "{base_url: 'http://a', max_concurrency: 3}, {base_url: 'http://b', max_concurrency: 2}]}]\n"
        "tasks: [mine]\ntasks_dirs: [mytasks]\n"
    )
    # Four tasks on the same clips with different prompts: 24 distinct requests.
    for i in range(3):
        (tasks_dir / "mine" / f"tiny{i}.yaml").write_text(
            f"extends: tiny\nprompt: {{user: v{i}}}\n"
        )
    fakes = FakeEndpoints(default_latency=0.02)
    result = run_yaml(text, tmp_path, fakes)
    assert fakes.peak == {"http://a": 3, "http://b": 2}
    assert len(fakes.calls) == 24 and result.requests == 24


def test_a_slow_endpoint_gets_less_work(tmp_path: Path, tasks_dir: Path) -> None:
    for i in range(4):
        (tasks_dir / "mine" / f"tiny{i}.yaml").write_text(
            f"extends: tiny\nprompt: {{user: v{i}}}\n"
        )
    text = (
        "models: [{name: m, model: vllm/q, endpoints: ["
        "{base_url: 'http://fast', max_concurrency: 2}, {base_url: 'http://slow', max_concurrency: 2}]}]\n"
        "tasks: [mine]\ntasks_dirs: [mytasks]\n"
    )
    fakes = FakeEndpoints(latency={"http://fast": 0.005, "http://slow": 0.1})
    run_yaml(text, tmp_path, fakes)
    served = {
        url: sum(1 for c in fakes.calls if c["base_url"] == url)
        for url in ("http://fast", "http://slow")
    }
    assert served["http://fast"] > 3 * served["http://slow"]
    assert sum(served.values()) == 30


def test_retries_then_success_and_errors_are_not_scored(tmp_path: Path, tasks_dir: Path) -> None:
    text = "models: [{name: m, model: vllm/q, retries: 2, backoff_base_s: 0}]\n" + TINY
    fakes = FakeEndpoints(fail_first=2, fatal={"sept huit neuf"})
    result = run_yaml(text, tmp_path, fakes)
    entry = result.scores["tasks"]["tiny"]["m"]
    assert entry["errors"] == 1 and entry["answered"] == 5
    assert entry["error_categories"] == {"bad_request": 1}
    assert entry["metrics"]["wer"]["n"] == 5 and entry["metrics"]["wer"]["value"] == 0.0
    rows = {r["id"]: r for r in result.run.rows()}
    assert rows["c"]["prediction"] is None and rows["c"]["error"]["status"] == 400
    assert rows["a"]["attempts"] == 3  # two 503s, then the reply
    assert rows["c"]["attempts"] == 1 and rows["c"]["scores"] == {}


def test_retries_exhausted_is_an_error(tmp_path: Path, tasks_dir: Path) -> None:
    text = "models: [{name: m, model: vllm/q, retries: 1, backoff_base_s: 0}]\n" + TINY
    result = run_yaml(text, tmp_path, FakeEndpoints(fail_first=2))
    entry = result.scores["tasks"]["tiny"]["m"]
    assert entry["errors"] == 6 and entry["metrics"]["wer"] == {
        "value": None,
        "ci": None,
        "n": 0,
        "interval": "bootstrap",
        "higher_is_better": False,
    }


def test_empty_replies_are_scored_and_counted(tmp_path: Path, tasks_dir: Path) -> None:
    fakes = FakeEndpoints(reply=lambda r: "" if r.reference.startswith("one") else r.reference)
    result = run_yaml("models: [{name: m, model: vllm/q}]\n" + TINY, tmp_path, fakes)
    entry = result.scores["tasks"]["tiny"]["m"]
    assert entry["empties"] == 1 and entry["metrics"]["wer"]["n"] == 6
    assert entry["metrics"]["wer"]["value"] > 0


def test_changed_metric_rerun_makes_no_request(tmp_path: Path, tasks_dir: Path) -> None:
    base = "models: [{name: m, model: vllm/q}]\ntasks_dirs: [mytasks]\n"
    first = run_yaml(base + "tasks: [tiny]\n", tmp_path, FakeEndpoints())
    assert first.requests == 6
    fakes = FakeEndpoints()
    second = run_yaml(
        base + "tasks: [{name: tiny, metrics: [cer, exact_match]}]\n", tmp_path, fakes
    )
    assert second.requests == 0 and fakes.calls == []
    assert set(second.scores["tasks"]["tiny"]["m"]["metrics"]) == {"cer", "exact_match"}
    assert all(r["cached"] for r in second.run.rows())


def test_outputs_are_written(tmp_path: Path, tasks_dir: Path) -> None:
    result = run_yaml("models: [{name: m, model: vllm/q}]\n" + TINY, tmp_path, FakeEndpoints())
    path = result.run.path
    assert path.parent == tmp_path / "runs" / "tasks"
    for name in ("run.json", "records.jsonl", "records.csv", "scores.json", "report.md"):
        assert (path / name).is_file(), name
    info = json.loads((path / "run.json").read_text())
    assert info["status"] == "finished" and info["tasks"]["tiny"]["records"] == 6
    assert info["tasks"]["tiny"]["fingerprint"].startswith("sha256:")
    assert "sacrebleu" in info["versions"]
    csv_lines = (path / "records.csv").read_text().splitlines()
    assert csv_lines[0].startswith("task,model,id") and len(csv_lines) == 7
    assert "| tiny | wer ↓ |" in (path / "report.md").read_text()


def test_resume_after_kill_redoes_nothing(tmp_path: Path, tasks_dir: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "killme.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent.parent.parent)!r})\n"
        "from tests.tasks.conftest import FakeEndpoints, run_yaml\n"
        "from pathlib import Path\n"
        "text = 'models: [{name: m, model: vllm/q, max_concurrency: 1}]\\ntasks: [tiny]\\ntasks_dirs: [mytasks]\\n'\n"
        "run_yaml(text, Path(sys.argv[1]), FakeEndpoints(default_latency=0.3))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen([sys.executable, str(script), str(tmp_path)], cwd=tmp_path, env=env)
    records = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list((tmp_path / "runs" / "tasks").glob("*/records.jsonl"))
        if found and len(found[0].read_text().splitlines()) >= 2:
            records = found[0]
            break
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert records is not None, "the run never wrote a record"
    done = len(TaskRunDirectory(records.parent).rows())
    assert 2 <= done < 6
    fakes = FakeEndpoints()
    from voxbench.tasks.run import run_tasks

    result = run_tasks(None, "", resume=records.parent, endpoint_factory=fakes.factory)
    assert result.requests == 6 - done
    assert sorted(c["reference"] for c in fakes.calls) == sorted(
        r["reference"] for r in result.run.rows()[done:]
    )
    assert result.scores["tasks"]["tiny"]["m"]["answered"] == 6
    assert result.run.info()["resumed"] == 1


def test_resume_retries_only_failed_records(tmp_path: Path, tasks_dir: Path) -> None:
    text = "models: [{name: m, model: vllm/q, retries: 0}]\n" + TINY
    first = run_yaml(text, tmp_path, FakeEndpoints(fatal={"one two three"}))
    assert first.scores["tasks"]["tiny"]["m"]["errors"] == 1
    from voxbench.tasks.run import run_tasks

    fakes = FakeEndpoints()
    again = run_tasks(None, "", resume=first.run.path, endpoint_factory=fakes.factory)
    assert [c["reference"] for c in fakes.calls] == ["one two three"]
    assert again.scores["tasks"]["tiny"]["m"]["errors"] == 0


def test_timeout_is_a_retryable_error(tmp_path: Path, tasks_dir: Path) -> None:
    text = (
        "models: [{name: m, model: vllm/q, timeout_s: 0.01, retries: 1, backoff_base_s: 0}]\n"
        + TINY
    )
    fakes = FakeEndpoints(default_latency=0.5)
    result = run_yaml(text, tmp_path, fakes)
    assert result.scores["tasks"]["tiny"]["m"]["error_categories"] == {"timeout": 6}
    assert len(fakes.calls) == 12


@pytest.mark.parametrize(
    "long_audio,expected,prediction",
    [
        ("policy: truncate", [1.0], "dix onze douze"),
        # Tones hold no speech: every cut is in silence, chunks do not overlap and their
        # replies are joined whole (the fake says the full reference for each).
        ("policy: chunk", [1.0, 1.0], "dix onze douze dix onze douze"),
        # Hard cuts overlap: the repeated overlap is said once.
        ("policy: chunk, silence_window: 0", [1.0, 1.0, 0.4], "dix onze douze"),
    ],
)
def test_long_audio_policies(
    tmp_path: Path, tasks_dir: Path, long_audio: str, expected: list[float], prediction: str
) -> None:
    (tasks_dir / "mine" / "long.yaml").write_text(
        f"extends: tiny\nlong_audio: {{{long_audio}, max_seconds: 1.0, overlap_seconds: 0.2}}\n"
    )
    text = "models: [{name: m, model: vllm/q}]\ntasks: [long]\ntasks_dirs: [mytasks]\nfilters: {where: {id: d}}\n"
    fakes = FakeEndpoints()
    result = run_yaml(text, tmp_path, fakes)
    assert [round(c["seconds"], 2) for c in fakes.calls] == expected  # the 2 s clip
    row = result.run.rows()[0]
    assert row["prediction"] == prediction
    ends = [p["cut"] for p in row["pieces"]]
    assert (
        ends == {1: ["truncated"], 2: ["silence", "end"], 3: ["hard", "hard", "end"]}[len(expected)]
    )


def test_wide_endpoints_are_spread_over_small_keep_alive_clients(
    tmp_path: Path, tasks_dir: Path
) -> None:
    from voxbench.tasks.config import EndpointConfig
    from voxbench.tasks.engine.work_queue import client_shards

    shards = client_shards(EndpointConfig(base_url="http://a", max_concurrency=20))
    assert [s.max_concurrency for s in shards] == [8, 8, 4]
    for i in range(3):
        (tasks_dir / "mine" / f"tiny{i}.yaml").write_text(
            f"extends: tiny\nprompt: {{user: v{i}}}\n"
        )
    text = (
        "models: [{name: m, model: vllm/q, base_url: 'http://a', max_concurrency: 20}]\n"
        "tasks: [mine]\ntasks_dirs: [mytasks]\n"
    )
    # Each answer takes long enough for all 20 requests to be sent before the first returns,
    # even on a busy host (at 50 ms a loaded machine peaked at 18).
    fakes = FakeEndpoints(default_latency=0.5)
    run_yaml(text, tmp_path, fakes)
    assert fakes.peak == {"http://a": 20}  # still exactly max_concurrency in flight


def test_secrets_from_the_environment_are_not_written(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TASK_TEST_KEY", "sk-task-secret-0123456789")
    text = "models: [{name: m, model: vllm/q, api_key: '${TASK_TEST_KEY}'}]\n" + TINY
    fakes = FakeEndpoints()
    result = run_yaml(text, tmp_path, fakes)
    assert {c["api_key"] for c in fakes.calls} == {"sk-task-secret-0123456789"}
    for path in result.run.path.iterdir():
        assert "sk-task-secret" not in path.read_text(errors="replace"), path.name


def test_identical_requests_in_flight_are_asked_once(tmp_path: Path, tasks_dir: Path) -> None:
    # Two tasks send the same clips to a transcription model (no prompt in the request).
    (tasks_dir / "mine" / "tiny_again.yaml").write_text("extends: tiny\nmetrics: [cer]\n")
    text = (
        "models: [{name: m, model: openai/whisper-1, api: transcription, max_concurrency: 12}]\n"
        "tasks: [tiny, tiny_again]\ntasks_dirs: [mytasks]\n"
    )
    fakes = FakeEndpoints(default_latency=0.05)
    result = run_yaml(text, tmp_path, fakes)
    assert len(fakes.calls) == 6 and result.requests == 6
    rows = result.run.rows()
    assert len(rows) == 12 and sum(r["cached"] for r in rows) == 6
    assert result.scores["tasks"]["tiny_again"]["m"]["metrics"]["cer"]["value"] == 0.0


def test_a_rerun_against_another_server_asks_it(tmp_path: Path, tasks_dir: Path) -> None:
    """The cache keys on the servers: same model, same clips, another base_url → requests."""
    model = "models: [{{name: m, model: vllm/q, base_url: '{url}'}}]\n"
    first = run_yaml(model.format(url="http://a/v1") + TINY, tmp_path, FakeEndpoints())
    assert first.requests == 6 and first.cached == 0
    fakes = FakeEndpoints()
    second = run_yaml(model.format(url="http://b/v1") + TINY, tmp_path, fakes)
    assert second.requests == 6 and {c["base_url"] for c in fakes.calls} == {"http://b/v1"}
    # The same server again (a trailing slash is the same URL): all from the cache.
    third = run_yaml(model.format(url="http://b/v1/") + TINY, tmp_path, FakeEndpoints())
    assert third.requests == 0 and third.cached == 6
    assert third.run.run_info().inference.cached == 6  # type: ignore[union-attr]


def test_no_cache_asks_again_and_refreshes_the_cache(tmp_path: Path, tasks_dir: Path) -> None:
    text = "models: [{name: m, model: vllm/q}]\n" + TINY
    run_yaml(text, tmp_path, FakeEndpoints())
    fakes = FakeEndpoints(reply=lambda r: "new " + r.reference)
    again = run_yaml(text, tmp_path, fakes, use_cache=False)
    assert again.requests == 6 and again.cached == 0 and len(fakes.calls) == 6
    assert not any(r["cached"] for r in again.run.rows())
    assert again.run.info()["no_cache"] is True
    cached = run_yaml(text, tmp_path, FakeEndpoints())
    assert cached.requests == 0 and {r["prediction"][:4] for r in cached.run.rows()} == {"new "}
    assert "no_cache" not in cached.run.info()


def test_run_json_records_the_inference_phase(tmp_path: Path, tasks_dir: Path) -> None:
    text = "models: [{name: m, model: vllm/q, retries: 2, backoff_base_s: 0, max_concurrency: 3}]\n"
    fakes = FakeEndpoints(fail_first=1, default_latency=0.02)
    result = run_yaml(text + TINY, tmp_path, fakes)
    phase = result.run.run_info().inference
    assert phase is not None
    assert (phase.records, phase.requests, phase.retries, phase.cached) == (6, 12, 6, 0)
    assert phase.max_in_flight == 3 == max(fakes.peak.values())
    assert phase.first_request and phase.last_answer and phase.first_request < phase.last_answer
    assert phase.seconds is not None and phase.seconds >= 0.04  # two rounds of 20 ms at least
    assert phase.requests_per_s == round(12 / phase.seconds, 2)


def test_outputs_come_from_the_rows_records_jsonl_holds(tmp_path: Path, tasks_dir: Path) -> None:
    """A local run scores the rows it wrote without reading records.jsonl back: scores.json
    and records.csv are what the rows read back from it give (a fresh and a resumed run)."""
    from voxbench.tasks.run import run_tasks
    from voxbench.tasks.scores import compute_scores

    text = "models: [{name: m, model: vllm/q, retries: 0}]\n" + TINY
    result = run_yaml(text, tmp_path, FakeEndpoints(fatal={"one two three"}))
    for resumed in (False, True):
        if resumed:
            fakes = FakeEndpoints()
            result = run_tasks(None, "", resume=result.run.path, endpoint_factory=fakes.factory)
        run = result.run
        rows = run.rows()
        assert len(rows) == 6 + resumed  # resumed: the failed row, then its retry
        assert result.scores == compute_scores(result.plan, rows) == run.scores()
        written = {p: (run.path / p).read_bytes() for p in ("records.csv", "scores.json")}
        run.write_outputs(rows, result.scores, (run.path / "report.md").read_text())
        assert {p: (run.path / p).read_bytes() for p in written} == written


def test_the_collector_is_tuned_for_the_requests_and_restored_after(
    tmp_path: Path, tasks_dir: Path
) -> None:
    import gc

    from voxbench.tasks.engine.work_queue import YOUNG_GENERATION

    before = gc.get_threshold()
    seen: list[tuple[tuple[int, int, int], int]] = []

    def reply(request: object) -> str:
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return str(request.reference)  # type: ignore[attr-defined]

    text = "models: [{name: m, model: vllm/q}]\n" + TINY
    result = run_yaml(text, tmp_path, FakeEndpoints(reply=reply))
    assert result.scores["tasks"]["tiny"]["m"]["metrics"]["wer"]["value"] == 0.0
    assert seen and all(t[0] == max(before[0], YOUNG_GENERATION) for t, _ in seen)
    assert all(t[1:] == before[1:] and frozen > 0 for t, frozen in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
