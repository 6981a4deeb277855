"""The Ray executor on a local Ray (2 CPUs): the local executor's artifacts, a killed
worker's cell resumed without a turn recorded twice, one request limit for every worker."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

import voxbench
from voxbench.core.rundir import RunDirectory
from voxbench.providers.ratelimit import RateLimit
from voxbench.runner.config import build_config
from voxbench.scale.cells import Cell
from voxbench.scale.executors import LocalExecutor
from voxbench.scale.limits import Limits
from voxbench.scale.repeats import plan_group, run_group

ray = pytest.importorskip("ray")

FAKE_KEY = "sk-fake-ray-test-key"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory):
    """One local Ray for the module; workers inherit the fake key and a private cache."""
    import os

    saved = {k: os.environ.get(k) for k in ("OPENAI_API_KEY", "VOXBENCH_CACHE_DIR")}
    os.environ["OPENAI_API_KEY"] = FAKE_KEY
    os.environ["VOXBENCH_CACHE_DIR"] = str(tmp_path_factory.mktemp("ray-cache"))
    # Workers import test agents (tests.fullduplex.tone_session) by class path too.
    voxbench_src = str(Path(voxbench.__file__).resolve().parents[1])
    paths = [voxbench_src, str(REPO), os.environ.get("PYTHONPATH", "")]
    runtime_env = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}}
    ray.init(runtime_env=runtime_env, num_cpus=2, include_dashboard=False, log_to_driver=False)
    from voxbench.scale.ray_executor import RayExecutor

    yield RayExecutor()
    ray.shutdown()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _group(tmp_path: Path, name: str, repeats: int, **config: object):
    cfg = build_config({"benchmark": "smoke", "runs_dir": tmp_path, **config})
    path = tmp_path / name
    return path, plan_group(cfg, repeats, path, "test")


def _artifacts(run: Path) -> dict[str, object]:
    """What a run directory says, without its times and ids."""
    rd = RunDirectory(run)
    return {
        "files": sorted(p.name for p in run.iterdir() if p.name != RunDirectory.LOCK),
        "turns": [(r.turn, r.status, r.assistant_text, len(r.tool_calls)) for r in rd.turns()],
        "judged": sorted((j.turn, j.dimension, j.passed) for j in rd.judgments() or []),
        "status": rd.info().status,
        "seed": rd.info().seed,
    }


def test_ray_gives_the_local_executors_artifacts(local_ray, tmp_path):
    # The one Ray test in the fast set (`pytest -q`): a local Ray starts and runs cells
    # (~10 s); the rest of the module is marked slow.
    path_l, group_l = _group(tmp_path, "local", 2, target="local/baseline")
    path_r, group_r = _group(tmp_path, "ray", 2, target="local/baseline")
    done_l = run_group(path_l, group_l, LocalExecutor(), Limits())
    done_r = run_group(path_r, group_r, local_ray, Limits())
    assert done_l.status == done_r.status == "success"
    for name_l, name_r in zip(group_l.runs, group_r.runs, strict=True):
        assert _artifacts(path_l / name_l) == _artifacts(path_r / name_r)
    assert done_l.summary is not None and done_r.summary is not None
    assert done_l.summary.model_dump(exclude={"runs"}) == done_r.summary.model_dump(
        exclude={"runs"}
    )
    saved = json.loads((path_r / "repeats.json").read_text())
    assert saved["executor"] == "ray" and saved["status"] == "success"


@pytest.mark.slow
def test_runners_stay_warm_between_runs_and_hold_no_cpu(local_ray, tmp_path):
    # Warm: the second run's cells go to the runners the first one started, still alive
    # (starting a runner costs a process and voxbench's imports). No CPU held: a warm pool
    # must never keep a CPU-bound cell (a whole CPU each) from being scheduled.
    from voxbench.scale.ray_runners import warm_runners

    path, group = _group(tmp_path, "first", 1, target="local/baseline")
    assert run_group(path, group, local_ray, Limits()).status == "success"
    runners = warm_runners(ray)
    path, group = _group(tmp_path, "second", 1, target="local/baseline")
    assert run_group(path, group, local_ray, Limits()).status == "success"
    assert warm_runners(ray) is runners
    assert len(runners) == 2  # one per CPU of the cluster
    ray.get([r.__ray_ready__.remote() for r in runners], timeout=60)
    assert ray.available_resources().get("CPU") == 2


@pytest.mark.slow
def test_killed_worker_cell_resumes_without_duplicated_turns(local_ray, tmp_path):
    marker = tmp_path / "crashed-once"
    run = tmp_path / "crashing-run"
    config = build_config(
        {
            "benchmark": "smoke",
            "target": "voxbench.testing.crashing:CrashOnceOracle",
            "target_options": {"crash_at": 4, "marker": str(marker)},
        }
    )
    [result] = local_ray.run([Cell(config=config, path=run)], Limits())
    assert marker.exists(), "the worker never crashed: the test proves nothing"
    assert result.status == "success" and result.action == "resumed"
    rd = RunDirectory(run)
    turns = [r.turn for r in rd.turns()]
    assert len(turns) == len(set(turns)) == 10
    assert rd.info().resumed == 1
    card = rd.scorecard()
    assert card is not None and card.strict_pass.rate == 1.0


def _busiest(times: list[float], seconds: float) -> int:
    """The most of ``times`` within any closed window ``[t, t + seconds]``."""
    times, most, last = sorted(times), 0, 0
    for first, t in enumerate(times):
        while last < len(times) and times[last] <= t + seconds:
            last += 1
        most = max(most, last - first)
    return most


@pytest.mark.slow
def test_shared_limiter_holds_the_fake_endpoints_limit(local_ray, tmp_path, monkeypatch):
    from voxbench.benchmarks.loader import load_benchmark
    from voxbench.scale import ray_executor, ray_pacing
    from voxbench.testing.openai_http import FakeOpenAIServer
    from voxbench.testing.scripts import GoldenScript

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)  # the driver checks it before any run
    # The executor's pacer keeps its grants; they are read as each cell finishes (the actor
    # is killed when the run returns), so after the last cell they are all there.
    actors: list[object] = []

    def recording_pacer(ray_module, limits):
        actors.append(ray_pacing.start_pacer(ray_module, limits, record=True))
        return actors[-1]

    monkeypatch.setattr(ray_executor, "start_pacer", recording_pacer)
    grants: dict[str, list[float]] = {}

    def read_grants(cell, result):
        grants.clear()
        grants.update(ray.get(actors[-1].grants.remote()))

    server = FakeOpenAIServer(GoldenScript(load_benchmark("smoke")), api_key=FAKE_KEY)
    rps, burst = 8, 1
    limit = RateLimit(requests_per_second=rps, burst=burst)
    with server.in_thread():
        # The first request loads the SDK models the wire check uses: out of the measurement
        # (and unpaced: the driver has no pacer).
        httpx.post(
            f"{server.url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            headers={"Authorization": f"Bearer {FAKE_KEY}"},
        )
        server.arrivals.clear()
        path, group = _group(tmp_path, "paced", 4, target="openai/gpt-4o-mini", base_url=server.url)
        limits = Limits(max_concurrency=4, rate_limits={server.origin: limit})
        done = run_group(path, group, local_ray, limits, on_done=read_grants)
    assert done.status == "success", done.errors
    assert len(actors) == 1
    # One bucket: the 4 workers send one key to one endpoint.
    assert len(grants) == 1, list(grants)
    [granted] = grants.values()
    assert granted == sorted(granted)  # GCRA grants in the order asked
    arrivals = sorted(server.arrivals)
    assert len(arrivals) >= 40  # 4 runs × 10 turns, tool calls add more
    # The pacer's grants are exact whatever the load: 4 workers together get at most
    # 8 per second (+ burst 1) in any 1-s window, and N grants span (N - burst) intervals.
    first = granted[0]
    offsets = [round(t - first, 3) for t in granted]
    assert _busiest(granted, 1.0) <= rps + burst, offsets
    assert granted[-1] - first >= (len(granted) - burst) / rps - 1e-6, offsets
    # End to end: every request to the endpoint was granted, and none arrived before its
    # grant (the k-th arrival no earlier than the k-th grant; one machine, one monotonic
    # clock). How much later a worker sends is the loaded machine's business, so arrival
    # windows are not counted: scheduling delays bunch them.
    assert len(arrivals) == len(granted), (len(arrivals), len(granted))
    early = [(k, a - g) for k, (a, g) in enumerate(zip(arrivals, granted, strict=True)) if a < g]
    assert not early, early


@pytest.mark.slow
def test_returned_artifacts_are_written_by_the_driver(local_ray, tmp_path):
    from voxbench.scale.ray_executor import RayExecutor

    path_l, group_l = _group(tmp_path, "local", 1, target="local/oracle")
    path_r, group_r = _group(tmp_path, "returned", 1, target="local/oracle")
    run_group(path_l, group_l, LocalExecutor(), Limits())
    done = run_group(path_r, group_r, RayExecutor(artifacts="return"), Limits())
    assert done.status == "success"
    assert _artifacts(path_l / group_l.runs[0]) == _artifacts(path_r / group_r.runs[0])


@pytest.mark.slow
def test_matrix_command_on_ray(local_ray, tmp_path, monkeypatch, capsys):
    from tests.cli_invoke import invoke

    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "targets: [local/oracle, local/baseline]\nbenchmarks: [smoke]\nrepeats: 2\nruns_dir: out\n",
        encoding="utf-8",
    )
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan), "--executor", "ray")
    assert code == 0, err
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert board["executor"] == "ray" and board["cells"]["ran"] == 4
    assert [r["strict_mean"] for r in board["rows"]] == [1.0, 0.5]
    # Again on the local executor: the Ray runs are reused as they are.
    code, out, err = invoke(monkeypatch, capsys, "matrix", str(plan))
    assert code == 0, err
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert board["cells"]["reused"] == 4


@pytest.mark.slow
def test_fdb_run_on_ray_writes_what_the_local_run_writes(local_ray, tmp_path, monkeypatch, capsys):
    from tests.cli_invoke import invoke
    from tests.fullduplex.minicorpus import build_corpus

    corpus = tmp_path / "corpus"
    build_corpus(corpus)
    outputs = {}
    for executor in ("local", "ray"):
        out = tmp_path / f"out-{executor}"
        code, printed, err = invoke(
            monkeypatch, capsys, "fdb", "run", str(corpus / "v1_0"), "--target",
            "tests.fullduplex.tone_session:ToneSession", "--virtual", "--option", "delay=0.05",
            "--out", str(out), "--executor", executor,
        )  # fmt: skip
        assert code == 0, printed + err
        assert "completed 5" in printed
        outputs[executor] = {
            str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("output.wav"))
        }
    assert len(outputs["ray"]) == 5
    assert outputs["ray"] == outputs["local"]
    # Again on Ray: every sample is found done.
    code, printed, err = invoke(
        monkeypatch, capsys, "fdb", "run", str(corpus / "v1_0"), "--target",
        "tests.fullduplex.tone_session:ToneSession", "--virtual", "--option", "delay=0.05",
        "--out", str(tmp_path / "out-ray"), "--executor", "ray",
    )  # fmt: skip
    assert code == 0 and "already done 5" in printed
