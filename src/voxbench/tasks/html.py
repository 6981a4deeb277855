"""A task run's ``report.html``: the tasks × models table and the worst records with players.

It reads the run's own files (``run.json``, ``records.jsonl``, ``scores.json``) and draws
with the report room's page and players. A record's clip is linked (or embedded) when it is a
file on this machine; a clip read from a Hugging Face dataset has no file to play.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voxbench.core.rundir import write_text_atomic
from voxbench.core.taskrun import REPORT_HTML, SCORES, TaskRunDirectory
from voxbench.report.audio_links import AudioLinks
from voxbench.report.page import render_page
from voxbench.tasks.report import table_rows
from voxbench.tasks.scores import latest_rows

WORST = 5
"""Records shown per task and model."""


def badness(row: dict[str, Any]) -> float:
    """How wrong a record is, 0 (right) to 2 (no answer at all), to rank the worst first:
    an error 2, an empty reply 1.5, else the worst of its per-record scores (a wrong answer 1,
    an error rate capped at 1)."""
    if row.get("error"):
        return 2.0
    if not row.get("prediction"):
        return 1.5
    worst = 0.0
    for stats in (row.get("scores") or {}).values():
        if "correct" in stats:
            worst = max(worst, 1.0 - float(stats["correct"]))
        elif "units" in stats:
            worst = max(worst, min(stats["errors"] / max(stats["units"], 1), 1.0))
    return worst


def _clip(row: dict[str, Any], info: dict[str, Any]) -> Path:
    path = Path(str(row.get("audio", "")))
    if not path.is_absolute() and info.get("base_dir"):
        beside = Path(info["base_dir"]) / path
        if beside.is_file():
            return beside
    return path


def _scores_text(scores: dict[str, Any]) -> str:
    parts = []
    for name, stats in scores.items():
        if "correct" in stats:
            parts.append(f"{name} {'right' if stats['correct'] else 'wrong'}")
        elif "units" in stats:
            parts.append(f"{name} {stats['errors']}/{stats['units']} errors")
        else:
            parts.append(name)
    return ", ".join(parts)


def render_tasks_html(
    run_dir: str | Path,
    *,
    worst: int = WORST,
    embed_audio: bool = False,
    links: AudioLinks | None = None,
) -> str:
    """The page of a task run (links relative to the run directory)."""
    run = TaskRunDirectory.open(Path(run_dir))
    info = run.info()
    models = [m.name for m in run.run_info().models]
    scores = run.score_table() if (run.path / SCORES).is_file() else None
    links = links or AudioLinks(base_dir=run.path, embed=embed_audio)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in latest_rows(run.rows()).values():
        groups.setdefault((row["task"], row["model"]), []).append(row)
    worst_records = []
    rank = {name: i for i, name in enumerate(models)}
    for (task, model), rows in sorted(
        groups.items(), key=lambda kv: (kv[0][0], rank.get(kv[0][1], len(rank)))
    ):
        ranked = sorted(
            (r for r in rows if badness(r) > 0), key=lambda r: (-badness(r), str(r["id"]))
        )
        worst_records.append(
            {
                "task": task,
                "model": model,
                "total": len(rows),
                "wrong": len(ranked),
                "records": [
                    {
                        **r,
                        "badness": badness(r),
                        "scores_text": _scores_text(r.get("scores") or {}),
                        "player": links.src(_clip(r, info)),
                    }
                    for r in ranked[:worst]
                ],
            }
        )
    return render_page(
        "tasks.html.j2",
        info=info,
        models=models,
        table=table_rows(scores, models) if scores is not None else [],
        worst=worst_records,
        limit=worst,
    )


def write_tasks_html(run_dir: str | Path, *, embed_audio: bool = False) -> Path:
    """Write the run's ``report.html``; return its path."""
    path = Path(run_dir) / REPORT_HTML
    write_text_atomic(path, render_tasks_html(run_dir, embed_audio=embed_audio))
    return path
