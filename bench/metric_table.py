"""Every metric of the built-in suite (and any tasks given) with its 95% CI and n.

Runs the suite ``voxbench tasks run`` runs without a config, offline (``HF_HUB_OFFLINE=1``),
with ``local/oracle`` — every metric
at its best, a check of the whole pipeline — and, with ``--whisper``, ``local/whisper-tiny.en``
on the CPU, into a temporary run directory, then prints one line per (task, model, metric):
the value on the 0–100 scale, its 95% interval (Wilson for yes/no rates, bootstrap
otherwise), n scored, and the records that errored, came back empty or were left undecided;
then the aggregates. ``--markdown`` prints the same as a markdown table (for a closing
note). Figures, not assertions.

    python bench/metric_table.py [--whisper] [--tasks-dir DIR --task NAME ...] [--num-samples N]
                                 [--markdown]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from voxbench.tasks.config import DEFAULT_CONFIG_TEXT, parse_config
from voxbench.tasks.run import run_tasks


def config_text(
    *, whisper: bool, num_samples: int | None, output_dir: Path, extra_tasks: list[str]
) -> str:
    """The eval.yaml this script runs: the built-in suite's (``voxbench tasks run`` without a
    config), its oracle, local Whisper only when asked, plus ``extra_tasks``."""
    config = yaml.safe_load(DEFAULT_CONFIG_TEXT)
    config["models"] = [m for m in config["models"] if whisper or m["model"] == "local/oracle"]
    config["tasks"] = [*config["tasks"], *extra_tasks]
    config["output_dir"] = str(output_dir)
    if num_samples:
        config["filters"] = {"num_samples": num_samples}
    return yaml.safe_dump(config, sort_keys=False)


def metric_rows(scores: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (task, model, metric) of a run's ``scores.json``."""
    rows = []
    for task, by_model in scores["tasks"].items():
        for model, entry in by_model.items():
            for metric, stats in entry["metrics"].items():
                rows.append(
                    {
                        "task": task,
                        "model": model,
                        "metric": metric,
                        "better": "higher" if stats["higher_is_better"] else "lower",
                        "value": stats.get("value"),
                        "ci": stats.get("ci"),
                        "n": stats.get("n", 0),
                        "errors": entry.get("errors", 0),
                        "empties": entry.get("empties", 0),
                        "undecided": stats.get("undecided", 0),
                    }
                )
    return rows


def _value(row: dict[str, Any]) -> str:
    return "–" if row["value"] is None else f"{row['value']:.2f}"


def _ci(row: dict[str, Any]) -> str:
    return "–" if not row["ci"] else f"[{row['ci'][0]:.2f}, {row['ci'][1]:.2f}]"


def print_rows(rows: list[dict[str, Any]], aggregates: dict[str, Any], markdown: bool) -> None:
    header = ["task", "model", "metric", "better", "value", "95% CI", "n", "err/empty/undec."]
    table = [
        [
            r["task"],
            r["model"],
            r["metric"],
            r["better"],
            _value(r),
            _ci(r),
            str(r["n"]),
            f"{r['errors']}/{r['empties']}/{r['undecided']}",
        ]
        for r in rows
    ]
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for line in table:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(h), *(len(line[i]) for line in table)) for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        for line in table:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))
    for name, agg in aggregates.items():
        for model, found in agg["models"].items():
            value = found.get("value")
            shown = "–" if value is None else f"{value:.2f}"
            tasks = found.get("tasks")  # a count, or the tasks with their part
            count = len(tasks) if isinstance(tasks, dict | list) else tasks
            print(f"aggregate {name} ({agg['metric']}) · {model}: {shown} over {count} tasks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--whisper", action="store_true", help="also local/whisper-tiny.en (CPU)")
    parser.add_argument("--tasks-dir", type=Path, action="append", default=[])
    parser.add_argument(
        "--task", action="append", default=[], help="also this task or group (e.g. fixtures)"
    )
    parser.add_argument("--num-samples", type=int, default=None, help="records per task")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        text = config_text(
            whisper=args.whisper,
            num_samples=args.num_samples,
            output_dir=Path(tmp) / "runs",
            extra_tasks=args.task,
        )
        started = time.perf_counter()
        result = run_tasks(
            parse_config(text, file="(metric table)"),
            text,
            base_dir=Path.cwd(),
            tasks_dirs=[d.resolve() for d in args.tasks_dir],
        )
        seconds = time.perf_counter() - started
        rows = metric_rows(result.scores)
        print_rows(rows, result.scores.get("aggregates", {}), args.markdown)
        tasks = len({r["task"] for r in rows})
        print(f"{len(rows)} metric values over {tasks} tasks in {seconds:.1f} s")


if __name__ == "__main__":
    main()
