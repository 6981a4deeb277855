"""The fixed costs of a ``voxbench tasks run`` outside its request phase, this tree against
another (``--baseline``): building the plan, appending the rows to ``records.jsonl``, the
scores with their bootstrap intervals, ``records.csv`` / ``scores.json`` / ``report.md``.

One real run (``run_tasks`` on ``bench/tasks_throughput.py``'s fake endpoint, N records of
its ``parquet-wav`` shape) gives a run directory; then, in alternating child processes (one
per tree and round, so neither gets a warmer cache), each tree rebuilds that run's plan, and
scores and writes its rows into a directory of its own. It prints each phase's time in ms
(the first call in a process, as a CLI run makes it, and the best of ``--repeat``) per tree,
new ÷ old, and whether the two trees wrote the same bytes. On a busy machine compare the
ratios, measured in one run; figures, not assertions.

    git worktree add /tmp/old <commit> && \\
    python bench/tasks_fixed_costs.py --baseline /tmp/old/src [--records 6000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).resolve().parent
OUTPUTS = ("records.jsonl", "records.csv", "scores.json", "report.md")
PHASES = ("build_plan", "append", "compute_scores", "write_outputs")
T = TypeVar("T")
BATCH = 64
"""Rows per ``append`` call (the engine writes what is ready, a few dozen at a time)."""


def _real_run(root: Path, records: int) -> Path:
    """One ``run_tasks`` against the fake endpoint: the run directory it wrote."""
    sys.path.insert(0, str(HERE))
    import tasks_throughput as tt  # type: ignore[import-not-found]

    from voxbench.tasks.config import parse_config
    from voxbench.tasks.run import run_tasks

    dataset, _ = tt._make_dataset(root / "data", records, "parquet-wav")
    server = subprocess.Popen(
        [sys.executable, tt.__file__, "--serve", "0.05"], stdout=subprocess.PIPE, text=True
    )
    try:
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"  # type: ignore[union-attr]
        tasks = root / "tasks" / "bench"
        tasks.mkdir(parents=True)
        (tasks / "bench_asr.yaml").write_text(
            f"dataset: {dataset}\nprompt: {{user: 'Transcribe clip {{id}}.'}}\nmetrics: [wer]\n"
        )
        text = (
            f"models: [{{name: q, model: openai-compatible/q, base_url: '{url}', "
            f"max_concurrency: 256, retries: 0}}]\ntasks: [bench_asr]\n"
            f"tasks_dirs: ['{root / 'tasks'}']\noutput_dir: '{root / 'runs'}'\n"
        )
        return run_tasks(parse_config(text, file=None), text).run.path
    finally:
        server.terminate()
        server.wait()


def _phases(run_dir: Path, out_dir: Path, repeat: int) -> dict[str, list[float]]:
    """This process's tree (``PYTHONPATH``): each phase's seconds, ``repeat`` times; the
    outputs of the last round left in ``out_dir``."""
    from voxbench.core.results import TaskRunInfo, TaskScores
    from voxbench.core.taskrun import TaskRunDirectory
    from voxbench.report.tasks import markdown_report
    from voxbench.tasks.plan import build_plan
    from voxbench.tasks.run import config_of_run
    from voxbench.tasks.scores import compute_scores

    source = TaskRunDirectory.open(run_dir)
    info = source.info()
    rows = source.rows()
    config, _, _, base_dir, tasks_dirs = config_of_run(info, run_dir)
    times: dict[str, list[float]] = {phase: [] for phase in PHASES}

    def timed(phase: str, call: Callable[[], T]) -> T:
        started = time.perf_counter()
        result = call()
        times[phase].append(time.perf_counter() - started)
        return result

    for i in range(repeat):
        target = out_dir / str(i)
        target.mkdir(parents=True)
        (target / "run.json").write_text(json.dumps(info))
        run = TaskRunDirectory.open(target)
        plan = timed(
            "build_plan", lambda: build_plan(config, base_dir=base_dir, tasks_dirs=tasks_dirs)
        )
        run.open_records()
        timed("append", lambda: _append(run, rows))  # noqa: B023
        run.close_records()
        scores = timed("compute_scores", lambda: compute_scores(plan, rows))  # noqa: B023
        report = markdown_report(
            TaskRunInfo.model_validate(info), TaskScores.model_validate(scores)
        )
        timed("write_outputs", lambda: run.write_outputs(rows, scores, report))  # noqa: B023
    return times


def _append(run: Any, rows: list[dict[str, Any]]) -> None:
    """The rows appended in batches of ``BATCH``, as the engine appends them."""
    for start in range(0, len(rows), BATCH):
        run.append(rows[start : start + BATCH])


def _child(tree: str, run_dir: Path, out_dir: Path, repeat: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": tree}
    command = [sys.executable, __file__, "--child", str(run_dir), str(out_dir), str(repeat)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="the other tree's src folder (required)")
    parser.add_argument("--records", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3, help="child processes per tree")
    parser.add_argument("--repeat", type=int, default=5, help="calls of each phase per child")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_dir, out_dir, repeat = args.child
        print(json.dumps(_phases(Path(run_dir), Path(out_dir), int(repeat))))
        return
    if not args.baseline:
        parser.error("--baseline is required")
    trees = {"old": str(Path(args.baseline).resolve()), "new": str(HERE.parent / "src")}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run_dir = _real_run(root, args.records)
        firsts: dict[str, dict[str, list[float]]] = {t: {p: [] for p in PHASES} for t in trees}
        bests: dict[str, dict[str, list[float]]] = {t: {p: [] for p in PHASES} for t in trees}
        for r in range(args.rounds):
            for name, tree in trees.items():
                times = _child(tree, run_dir, root / name / str(r), args.repeat)
                for phase, seconds in times.items():
                    firsts[name][phase].append(seconds[0])
                    bests[name][phase].append(min(seconds))
        print(f"N={args.records}, {args.rounds} rounds x {args.repeat} calls; ms (min over rounds)")
        print(f"{'phase':<16} {'old 1st':>8} {'new 1st':>8} {'new/old':>8}"
              f" {'old best':>8} {'new best':>8} {'new/old':>8}")  # fmt: skip
        for phase in PHASES:
            of, nf = min(firsts["old"][phase]) * 1000, min(firsts["new"][phase]) * 1000
            ob, nb = min(bests["old"][phase]) * 1000, min(bests["new"][phase]) * 1000
            print(f"{phase:<16} {of:>8.1f} {nf:>8.1f} {nf / of:>8.2f}"
                  f" {ob:>8.1f} {nb:>8.1f} {nb / ob:>8.2f}")  # fmt: skip
        old_out, new_out = root / "old" / "0" / "0", root / "new" / "0" / "0"
        for name in OUTPUTS:
            same = filecmp.cmp(old_out / name, new_out / name, shallow=False)
            print(f"{name}: {'identical' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
