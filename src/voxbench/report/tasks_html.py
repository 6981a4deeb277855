"""A task run's ``report.html``: the tasks × models table and the worst records with players.

It reads the run's own files through the contract (``core.taskrun``) and draws with the report
room's page and players. A record's clip is played from inside the run directory: writing the
page copies each clip it shows into ``clips/`` (the built-in suite's clips live in the user's
cache, and a link climbing out of the run folder works neither in the viewer nor in a folder
sent to someone), or embeds it with ``--embed-audio``. A clip read from a Hugging Face dataset
has no file to play. In a perturbed run (``--perturb``) each record also gets a player of what
the models heard: the clip perturbed again with the run's seed and the record's key, which
gives the same samples the engine sent (``tasks.perturb``), written into ``clips/`` too.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from voxbench.audio.perturb import parse_perturbations
from voxbench.audio.wav import read_wav, write_wav
from voxbench.core.rundir import write_text_atomic
from voxbench.core.taskrun import (
    RECORDS,
    RECORDS_CSV,
    REPORT,
    REPORT_HTML,
    RUN_JSON,
    SCORES,
    TaskRunDirectory,
    latest_rows,
)
from voxbench.report.audio_links import AudioLinks
from voxbench.report.page import render_page
from voxbench.report.tasks import record_verdicts, table_rows

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
        if stats.get("undecided"):
            continue  # no verdict: neither right nor wrong
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


RUN_FILES = (REPORT, SCORES, RECORDS_CSV, RECORDS, RUN_JSON)
"""The run's own files, linked at the end of its page."""
CLIPS_DIR = "clips"
"""Copies of the clips the page plays, inside the run directory."""


def _clip_copy(run_path: Path, clip: Path) -> Path:
    """Where the page's copy of ``clip`` lives in the run (named by the source's path, so two
    datasets' ``0001.wav`` do not meet)."""
    digest = hashlib.sha256(str(clip.resolve()).encode()).hexdigest()[:10]
    return run_path / CLIPS_DIR / f"{digest}-{clip.name}"


def _playable(run_path: Path, clip: Path, copy: bool) -> Path:
    """The file a player reaches: the clip itself when it is inside the run, else its copy
    in ``clips/`` (made now when ``copy``)."""
    if not clip.is_file() or clip.resolve().is_relative_to(run_path.resolve()):
        return clip
    local = _clip_copy(run_path, clip)
    if copy and not local.is_file():
        local.parent.mkdir(exist_ok=True)
        tmp = local.with_name(local.name + ".tmp")
        shutil.copyfile(clip, tmp)
        os.replace(tmp, local)
    return local


def _heard(run_path: Path, clip: Path, info: dict[str, Any], key: str, write: bool) -> Path | None:
    """What the models of a perturbed run heard of ``clip`` (record key ``task/id``), as a
    file in ``clips/`` (made now when ``write``), or None in a clean run."""
    spec = info.get("perturbations")
    if not spec or not clip.is_file():
        return None
    heard = _clip_copy(run_path, clip)
    heard = heard.with_name(f"heard-{hashlib.sha256(key.encode()).hexdigest()[:8]}-{heard.name}")
    if write and not heard.is_file():
        audio = parse_perturbations(spec).apply(read_wav(clip), int(info.get("seed") or 0), key)
        heard.parent.mkdir(exist_ok=True)
        tmp = heard.with_name(heard.name + ".tmp.wav")
        write_wav(tmp, audio)
        os.replace(tmp, heard)
    return heard


def _scores_text(scores: dict[str, Any]) -> str:
    parts = []
    for name, verdict in record_verdicts(scores):
        if verdict is not None and "/" in verdict:
            verdict += " errors"
        parts.append(name if verdict is None else f"{name} {verdict}")
    return ", ".join(parts)


def render_tasks_html(
    run_dir: str | Path,
    *,
    worst: int = WORST,
    embed_audio: bool = False,
    links: AudioLinks | None = None,
    copy_clips: bool = False,
) -> str:
    """The page of a task run (links relative to the run directory; ``copy_clips`` copies the
    clips it shows into the run first, as writing the page does)."""
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
                        "player": links.src(
                            _clip(r, info)
                            if embed_audio
                            else _playable(run.path, _clip(r, info), copy_clips)
                        ),
                        "heard_player": _heard_src(run.path, r, info, links, copy_clips),
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
        files=[name for name in RUN_FILES if (run.path / name).is_file()],
    )


def _heard_src(
    run_path: Path, row: dict[str, Any], info: dict[str, Any], links: AudioLinks, write: bool
) -> Any:
    if row.get("turns"):
        return None  # a multi-turn record's turns are each heard apart: the clean clip only
    heard = _heard(
        run_path, _clip(row, info), info, f"{row['task']}/{row['id']}", write or links.embed
    )
    return links.src(heard) if heard is not None else None


def write_tasks_html(run_dir: str | Path, *, embed_audio: bool = False) -> Path:
    """Write the run's ``report.html``; return its path."""
    path = Path(run_dir) / REPORT_HTML
    page = render_tasks_html(run_dir, embed_audio=embed_audio, copy_clips=not embed_audio)
    write_text_atomic(path, page)
    return path
