"""A task run cut into shards (what ``--executor ray`` runs on each worker), in process:
disjoint shards, and a shard run again after its worker died redoes only what it lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tasks.test_http import SayScript, _say_task, serving
from voxbench.core.errors import ConfigError
from voxbench.core.taskrun import RECORDS
from voxbench.tasks.config import parse_config
from voxbench.tasks.engine.shards import run_shard, shard_of
from voxbench.tasks.run import run_tasks
from voxbench.testing import FakeOpenAIServer


def _text(url: str, output_dir: Path) -> str:
    return (
        f"models: [{{name: q, model: vllm/qwen2-audio, base_url: '{url}', retries: 0}},"
        f" {{name: r, model: vllm/other, base_url: '{url}', retries: 0}}]\n"
        f"tasks: [say]\ntasks_dirs: [mytasks]\noutput_dir: '{output_dir}'\n"
    )


def test_shards_are_disjoint_and_cover_every_key() -> None:
    keys = [("say", m, r) for m in ("q", "r") for r in "abcdef"]
    for count in (1, 2, 3, 5):
        owners = [shard_of(k, count) for k in keys]
        assert all(0 <= o < count for o in owners)
        assert owners == [shard_of(k, count) for k in keys]  # deterministic
    assert len({shard_of(k, 2) for k in keys}) == 2


def test_a_rerun_shard_redoes_only_its_missing_records(tmp_path: Path, tasks_dir: Path) -> None:
    _say_task(tasks_dir)
    with serving(FakeOpenAIServer(SayScript())) as server:
        text = _text(server.url, tmp_path / "runs")
        # A run whose answering is left to the shards below (nothing answered in process).
        created = run_tasks(
            parse_config(text, file=None),
            text,
            base_dir=tmp_path,
            sharded=lambda run: _answer_in_shards(run.path, server),
        )
    rows = created.run.rows()
    keys = [(r["task"], r["model"], r["id"]) for r in rows]
    assert len(keys) == len(set(keys)) == 12
    assert created.scores["tasks"]["say"]["q"]["metrics"]["wer"]["value"] == 0.0
    assert created.requests == 12
    assert not (created.run.path / "shards").exists()  # merged


def test_a_sharded_run_reports_each_record_as_its_shard_writes_it(
    tmp_path: Path, tasks_dir: Path
) -> None:
    _say_task(tasks_dir)
    seen: list[tuple[str, str, str]] = []
    with serving(FakeOpenAIServer(SayScript())) as server:
        text = _text(server.url, tmp_path / "runs")

        def in_two_shards(run):
            from voxbench.tasks.run import Answered

            return Answered(sum(run_shard(run.path, i, 2).requests for i in range(2)))

        created = run_tasks(
            parse_config(text, file=None),
            text,
            base_dir=tmp_path,
            progress=lambda job, row: seen.append((job.task.name, job.model.name, row["id"])),
            sharded=in_two_shards,
        )
    keys = [(r["task"], r["model"], r["id"]) for r in created.run.rows()]
    assert sorted(seen) == sorted(keys) and len(keys) == 12


def _answer_in_shards(run_path: Path, server: FakeOpenAIServer):
    from voxbench.core.taskrun import TaskRunDirectory
    from voxbench.tasks.run import Answered

    run = TaskRunDirectory.open(run_path)
    first = run_shard(run_path, 0, 2)
    shard0 = run.shard_rows(0, 2)
    assert shard0 and all(shard_of((r["task"], r["model"], r["id"]), 2) == 0 for r in shard0)
    assert first.requests == len(shard0)
    # The worker of shard 0 "died" after two rows: its file keeps them, the cache forgets all.
    kept = shard0[:2]
    run.shard_file(0, 2).write_text(
        "".join(json.dumps(r) + "\n" for r in kept) + '{"torn', encoding="utf-8"
    )
    (run_path.parent / "cache.sqlite").unlink()
    before = len(server.requests)
    again = run_shard(run_path, 0, 2)
    assert again.requests == len(shard0) - 2 == len(server.requests) - before
    redone = run.shard_rows(0, 2)
    assert sorted(r["id"] + r["model"] for r in redone) == sorted(
        r["id"] + r["model"] for r in shard0
    )
    second = run_shard(run_path, 1, 2)
    assert not (run_path / RECORDS).exists()  # the rows wait in the shard files
    return Answered(len(shard0) + second.requests)


def test_rate_limits_pace_a_local_run(tmp_path: Path, tasks_dir: Path) -> None:
    _say_task(tasks_dir)
    server = FakeOpenAIServer(SayScript())
    with server.in_thread():
        text = _text(server.url, tmp_path / "runs") + (
            f"rate_limits: [{{endpoint: '{server.url}', requests_per_second: 10, burst: 2}}]\n"
        )
        result = run_tasks(parse_config(text, file=None), text, base_dir=tmp_path)
    assert result.requests == len(server.arrivals) == 12
    arrivals = [t - server.arrivals[0] for t in server.arrivals]
    assert server.busiest_window(1.0) <= 10 + 2 + 1
    assert arrivals[-1] >= (len(arrivals) - 2) / 10 - 0.1


def test_rate_limits_are_checked(tmp_path: Path) -> None:
    text = (
        "models: [{name: q, model: vllm/q, base_url: 'http://x/v1'}]\ntasks: [say]\n"
        "rate_limits: [{endpoint: 'http://x', requests_per_second: 0}]\n"
    )
    with pytest.raises(ConfigError, match=r"rate_limits\[0\]\.requests_per_second"):
        parse_config(text, file="eval.yaml")
