"""``voxbench view DIR --bundle OUT``: the viewer as a static folder to send to someone.

``OUT/index.html`` is the leaderboard, ``OUT/runs.html`` the runs list, and each run under
``DIR`` is ``OUT/run/<run>/index.html`` beside a copy of its files (recording, turn clips,
task clips), so every page opens from disk (``file://``) or any static host, its players
play, and its search and filters work offline. Secrets are redacted from every page.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from voxbench.core.errors import ConfigError, VoxbenchError
from voxbench.core.secrets import redact_text
from voxbench.report.html import render_run_html
from voxbench.report.tasks_html import render_tasks_html
from voxbench.store import RunFilters, RunRow, Store
from voxbench.viewer.app import PAGE_ARTIFACTS, TEXT_ARTIFACTS, after_body, nav_bar, render
from voxbench.viewer.pages import BUNDLED, Links, boards, bundle_folder, run_page
from voxbench.viewer.paths import inside

log = logging.getLogger(__name__)

RUN_PAGE_LINKS = Links(
    home="../../index.html",
    runs="../../runs.html",
    static="../../static/",
    live=False,
    bundle=True,
)
"""A bundled run page's links, from ``run/<run>/index.html``."""
STATIC = ("viewer.css", "viewer.js")


@dataclass
class Bundle:
    """What ``write_bundle`` wrote."""

    out: Path
    runs: list[str] = field(default_factory=list)
    """The ids of the runs with a page in the bundle."""


def write_bundle(root: str | Path, store: Store, out: str | Path) -> Bundle:
    """Write the leaderboard and every run page under ``root`` as a static site in ``out``
    (a new or empty folder)."""
    root, out = Path(root).resolve(), Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(
            "already exists and is not an empty folder",
            file=out,
            field="--bundle",
            expected="a new folder for the static site",
        )
    if inside(root, out.resolve()):
        raise ConfigError(
            "is inside the runs folder it would bundle",
            file=out,
            field="--bundle",
            expected="a folder outside DIR",
        )
    store.index_tree(root)
    rows = [r for r in store.runs(RunFilters()) if inside(root, r.run_path)]
    bundle = Bundle(out=out)
    (out / "static").mkdir(parents=True)
    for name in STATIC:
        (out / "static" / name).write_bytes(
            files("voxbench.viewer").joinpath("static", name).read_bytes()
        )
    for row in rows:
        _write_run(row, out / "run" / bundle_folder(row.run_id))
        bundle.runs.append(row.run_id)
    shown = set(bundle.runs)
    cells = store.leaderboard(RunFilters())
    _write(
        out / "index.html",
        render(
            "leaderboard.html",
            boards=boards(cells),
            noted=any(c.note for c in cells),
            served=shown,
            filters=RunFilters(),
            pick="latest",
            choices=store.choices(),
            runs=len(rows),
            links=BUNDLED,
        ),
    )
    _write(
        out / "runs.html", render("runs.html", runs=rows, served=shown, root=root, links=BUNDLED)
    )
    return bundle


def _write_run(row: RunRow, folder: Path) -> None:
    """A copy of the run's files in ``folder`` and its page, ``index.html``, over the copy
    (clips cut or copied into it, so its players need nothing outside the bundle)."""
    if row.kind == "fdb":  # a scoring beside its corpus: its own files, not the corpus
        folder.mkdir(parents=True)
        for file in row.run_path.iterdir():
            if file.is_file():
                shutil.copy2(file, folder / file.name)
    else:
        shutil.copytree(row.run_path, folder, ignore=shutil.ignore_patterns(".*"))
    _redact_copies(folder)
    copy = row.model_copy(update={"path": str(folder)})
    try:
        if row.kind == "conversation":
            html = render_run_html(folder)
        elif row.kind == "tasks":
            html = render_tasks_html(folder, copy_clips=True)
        else:
            raise VoxbenchError("no report page of this kind")
    except VoxbenchError as exc:  # the viewer's own page: scores, turns, files
        log.info("bundle: the summary page of %s (%s)", row.run_id, exc)
        html = render("run.html", page=run_page(copy), links=RUN_PAGE_LINKS)
    else:
        html = after_body(html, nav_bar(RUN_PAGE_LINKS))
    _write(folder / "index.html", html)


def _redact_copies(folder: Path) -> None:
    """The copied text files with secrets scrubbed, as the viewer serves them."""
    for file in folder.rglob("*"):
        suffix = file.suffix.lower()
        if file.is_file() and (suffix in TEXT_ARTIFACTS or suffix in PAGE_ARTIFACTS):
            text = file.read_text(encoding="utf-8", errors="replace")
            scrubbed = redact_text(text)
            if scrubbed != text:
                file.write_text(scrubbed, encoding="utf-8")


def _write(file: Path, html: str) -> None:
    file.write_text(redact_text(html), encoding="utf-8")
