"""``tasks run --executor ray`` on a local Ray (2 CPUs) against the fake OpenAI-compatible
server: the local run's records and scores, and a run killed mid-way resumed on Ray without a
record answered twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.scale.test_ray_executor import local_ray  # noqa: F401 (the module's Ray)
from tests.tasks.conftest import TINY_TASK, write_tiny_dataset
from tests.tasks.test_http import SayScript, serving
from voxbench.tasks.config import parse_config
from voxbench.tasks.run import run_tasks
from voxbench.testing import FakeOpenAIServer

pytest.importorskip("ray")

pytestmark = pytest.mark.slow

ORDER_FREE = ("latency_s", "cached", "attempts")
"""Row fields that depend on timing and on the cache, not on the run's content."""


def _registry(tmp_path: Path) -> None:
    root = tmp_path / "mytasks"
    write_tiny_dataset(root / "mine" / "data")
    (root / "mine" / "tiny.yaml").write_text(TINY_TASK, encoding="utf-8")
    (root / "mine" / "say.yaml").write_text(
        "extends: tiny\nprompt: {user: 'say: {reference}', system: 'Speaker {speaker}.'}\n"
    )


def _config(url: str, output_dir: Path) -> str:
    return (
        f"models: [{{name: q, model: vllm/qwen2-audio, base_url: '{url}', retries: 0}},"
        f" {{name: r, model: vllm/other, base_url: '{url}', retries: 0}}]\n"
        f"tasks: [say]\ntasks_dirs: [mytasks]\noutput_dir: '{output_dir}'\n"
    )


def _content(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    out = {}
    for row in rows:
        key = (row["task"], row["model"], row["id"])
        assert key not in out, f"{key} recorded twice"
        out[key] = {k: v for k, v in row.items() if k not in ORDER_FREE}
    return out


def _timeless(value: Any) -> Any:
    """Scores without their latency figures (timing, not content)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if "latency" not in k}
    return value


def _run(tmp_path: Path, url: str, name: str, sharded: Any = None, resume: Path | None = None):
    text = _config(url, tmp_path / name)
    return run_tasks(
        None if resume else parse_config(text, file=None),
        text,
        base_dir=tmp_path,
        sharded=sharded,
        resume=resume,
    )


def test_ray_shards_give_the_local_runs_records_and_scores(local_ray, tmp_path):  # noqa: F811
    from voxbench.scale.task_shards import ray_shards

    _registry(tmp_path)
    with serving(FakeOpenAIServer(SayScript())) as server:
        local = _run(tmp_path, server.url, "local")
        on_ray = _run(tmp_path, server.url, "ray", sharded=ray_shards(local_ray, shards=2))
    assert on_ray.requests == local.requests == 12
    assert _content(on_ray.run.rows()) == _content(local.run.rows())
    assert _timeless(on_ray.run.scores()) == _timeless(local.run.scores())
    assert on_ray.run.info()["status"] == "finished"
    assert not (on_ray.run.path / "shards").exists()


def test_a_killed_ray_run_resumes_without_duplicates(local_ray, tmp_path):  # noqa: F811
    from voxbench.scale.task_shards import ray_shards

    _registry(tmp_path)
    with serving(FakeOpenAIServer(SayScript())) as server:
        full = _run(tmp_path, server.url, "ray", sharded=ray_shards(local_ray, shards=2))
        rows = full.run.rows()
        # As a kill leaves it: shard 0 had written three rows (the last torn), shard 1 none,
        # nothing merged, the run interrupted; and a cache that kept nothing.
        run = full.run.path
        shard_file = run / "shards" / "0-of-2.jsonl"
        shard_file.parent.mkdir()
        shard_file.write_text(
            "".join(json.dumps(r) + "\n" for r in rows[:2]) + json.dumps(rows[2])[:20]
        )
        (run / "records.jsonl").write_text("")
        (run / "scores.json").unlink()
        for name in ("cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"):
            (run.parent / name).unlink(missing_ok=True)
        info = json.loads((run / "run.json").read_text())
        (run / "run.json").write_text(json.dumps({**info, "status": "interrupted"}))
        before = len(server.requests)
        resumed = _run(tmp_path, server.url, "ray", sharded=ray_shards(local_ray), resume=run)
        redone = len(server.requests) - before
    assert resumed.requests == redone == len(rows) - 2
    assert _content(resumed.run.rows()) == _content(rows)
    assert _timeless(resumed.run.scores()) == _timeless(full.scores)
    assert resumed.run.info()["resumed"] == 1


def test_cli_tasks_run_on_ray(local_ray, tmp_path, monkeypatch, capsys):  # noqa: F811
    from tests.cli_invoke import invoke

    _registry(tmp_path)
    monkeypatch.chdir(tmp_path)
    with serving(FakeOpenAIServer(SayScript())) as server:
        (tmp_path / "eval.yaml").write_text(_config(server.url, tmp_path / "runs"))
        code, out, err = invoke(
            monkeypatch, capsys, "tasks", "run", "eval.yaml", "--executor", "ray"
        )
        assert code == 0, out + err
        assert len(server.requests) == 12
    assert "12 model requests" in out
    (run,) = (tmp_path / "runs").glob("*/records.jsonl")
    assert len(_content([json.loads(line) for line in run.read_text().splitlines()])) == 12


def test_rate_limits_hold_for_every_shard_together(local_ray, tmp_path):  # noqa: F811
    from voxbench.scale.task_shards import ray_shards

    _registry(tmp_path)
    server = FakeOpenAIServer(SayScript())
    with server.in_thread():
        text = _config(server.url, tmp_path / "runs") + (
            f"rate_limits: [{{endpoint: '{server.url}', requests_per_second: 8, burst: 1}}]\n"
        )
        result = run_tasks(
            parse_config(text, file=None),
            text,
            base_dir=tmp_path,
            sharded=ray_shards(local_ray, shards=2),
        )
    assert result.requests == len(server.arrivals) == 12
    # The fake counts requests per second: both shards together stay within 8/s (+ burst 1,
    # + 1 for a worker waking late from its reserved slot on a loaded machine).
    arrivals = [round(t - server.arrivals[0], 3) for t in server.arrivals]
    assert server.busiest_window(1.0) <= 8 + 1 + 1, arrivals
    assert arrivals[-1] >= (len(arrivals) - 1) / 8 - 0.1, arrivals


class KillingScript(SayScript):
    """Says what is asked; at the ``kill_at``-th request, SIGKILLs the Ray worker running a
    shard (its process title is ``ray::paced_shard``), as a lost node would."""

    def __init__(self, kill_at: int) -> None:
        self.kill_at, self.seen, self.killed = kill_at, 0, []

    def reply(self, conversation):
        import os
        import signal
        import time

        self.seen += 1
        if self.seen == self.kill_at:
            for proc in Path("/proc").iterdir():
                try:
                    title = (proc / "cmdline").read_bytes()
                except OSError:
                    continue
                if proc.name.isdigit() and title.startswith(b"ray::paced_shard"):
                    os.kill(int(proc.name), signal.SIGKILL)
                    self.killed.append(int(proc.name))
                    break
        time.sleep(0.05)  # the shards' records overlap in time
        return super().reply(conversation)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the worker through /proc")
def test_a_killed_shard_worker_is_retried_without_duplicates(local_ray, tmp_path):  # noqa: F811
    from voxbench.scale.task_shards import ray_shards

    _registry(tmp_path)
    script = KillingScript(kill_at=9)
    with serving(FakeOpenAIServer(script)) as server:
        text = _config(server.url, tmp_path / "runs").replace("retries: 0", "max_concurrency: 1")
        result = run_tasks(
            parse_config(text, file=None),
            text,
            base_dir=tmp_path,
            sharded=ray_shards(local_ray, shards=2),
        )
        on_ray = len(server.requests)
        local = _run(tmp_path, server.url, "local")
    # Rows written before the kill are not asked again: only the records without a row then
    # (per model of the shard: the one in flight, at most one more being scored) are asked
    # twice. 13 or 14 in practice.
    assert 12 <= on_ray <= 12 + 4
    assert script.killed, "no shard worker was found to kill"
    assert _content(result.run.rows()) == _content(local.run.rows())  # each record once
    assert _timeless(result.run.scores()) == _timeless(local.run.scores())
