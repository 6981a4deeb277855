"""``voxbench view DIR --bundle OUT``: a static folder of the leaderboard and every run page
that opens from ``file://``, its links inside the folder, its players playing and its search
working offline (issue 27)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.cli_invoke import invoke
from tests.report.html_checks import parse
from tests.store.fixture_runs import Runs
from tests.viewer.test_browser import LOAD_AND_PLAY, Console, _task_run, browser  # noqa: F401
from voxbench.viewer.pages import bundle_folder


def _bundle(runs: Runs, tmp_path: Path, monkeypatch, capsys) -> Path:
    out = tmp_path / "bundle"
    code, stdout, err = invoke(monkeypatch, capsys, "view", str(runs.root), "--bundle", str(out))
    assert code == 0, stdout + err
    assert "index.html" in stdout
    return out


def _local_links(page_file: Path) -> list[Path]:
    page = parse(page_file.read_text(encoding="utf-8"))
    out = []
    for tag, attr in (("a", "href"), ("audio", "src"), ("link", "href"), ("script", "src")):
        for e in page.find(tag):
            link = e.attrs.get(attr, "")
            if not link or link.startswith(("#", "data:")):
                continue
            assert not urlsplit(link).scheme and not link.startswith("/"), (page_file, link)
            out.append((page_file.parent / unquote(urlsplit(link).path)).resolve())
    return out


@pytest.mark.secrets_on_purpose  # a key in a run's notes, to see the bundle's copy scrubbed
def test_bundle_pages_link_only_inside_the_bundle(
    runs: Runs, tmp_path: Path, monkeypatch, capsys
) -> None:
    _task_run(runs.root, {"acme/good": 5.0, "acme/bad": 30.0})
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    (runs.paths["oracle"] / "notes.txt").write_text(f"the key was {key}\n")
    out = _bundle(runs, tmp_path, monkeypatch, capsys).resolve()
    notes = (out / "run" / bundle_folder(runs.run_id("oracle")) / "notes.txt").read_text()
    assert key not in notes and "the key was" in notes  # copied as the viewer serves it
    pages = [out / "index.html", out / "runs.html"]
    pages += [out / "run" / bundle_folder(runs.run_id(name)) / "index.html" for name in runs.paths]
    pages.append(out / "run" / "20261127T000000Z_abc123" / "index.html")  # the task run
    for page in pages:
        assert page.is_file(), page
        for target in _local_links(page):
            assert target.is_relative_to(out) and target.exists(), (page, target)
    # A second bundle never overwrites a folder with something in it.
    code, stdout, err = invoke(monkeypatch, capsys, "view", str(runs.root), "--bundle", str(out))
    assert code == 2 and "--bundle" in stdout + err


def test_bundle_opens_from_disk_plays_and_searches(
    browser: Any,  # noqa: F811
    runs: Runs,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _bundle(runs, tmp_path, monkeypatch, capsys)
    page = browser.new_page()
    console = Console(page)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((out / "index.html").as_uri())
    page.locator("#leaderboard-conversation tbody td a").first.click()
    page.wait_for_url("**/index.html")
    assert "/run/" in page.url
    audio_run = out / "run" / bundle_folder(runs.run_id("oracle_audio")) / "index.html"
    page.goto(audio_run.as_uri())
    # The turn's clip (cut into the bundle's copy of the run) plays.
    players = page.locator("details.turn audio")
    assert players.count() >= 1
    assert players.first.evaluate(LOAD_AND_PLAY)["duration"] > 0.1
    total = page.locator("details.turn").count()
    page.fill("#search", "zzzz-not-said")
    assert page.locator("details.turn:not(.hidden)").count() == 0
    page.fill("#search", "")
    assert page.locator("details.turn:not(.hidden)").count() == total
    page.click("nav >> text=Runs")
    page.wait_for_url("**/runs.html")
    assert page.locator("#runs tbody tr").count() == len(runs.paths)
    assert console.errors == []
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    page.close()
