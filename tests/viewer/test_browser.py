"""The viewer in a real browser: Playwright driving Debian's chromium (no browser download).

Skips with its reason where Playwright or chromium is missing (``.ci/run`` installs both).
Screenshots of each page go to ``$VOXBENCH_TEST_ARTIFACTS/screenshots`` (default: the
test's temporary directory).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import CHROMIUM_FLAGS, chromium
from tests.store.fixture_runs import Runs
from voxbench.core.rundir import RunDirectory
from voxbench.store import open_store
from voxbench.viewer.app import create_app


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    executable = chromium()
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=executable, args=CHROMIUM_FLAGS, headless=True
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def viewer_url(runs: Runs) -> Iterator[str]:
    """The viewer served by uvicorn on 127.0.0.1, on a free port."""
    with _serve(runs) as url:
        yield url


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    base = os.environ.get("VOXBENCH_TEST_ARTIFACTS")
    folder = (Path(base) if base else tmp_path) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Console:
    """Every console error and uncaught exception of a page."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))


def _row_targets(page: Any, kind: str = "conversation") -> list[str]:
    return page.locator(f"#leaderboard-{kind} tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.target)"
    )


def test_leaderboard_sorts_filters_and_opens_a_run(
    browser: Any, viewer_url: str, runs: Runs, shots: Path
) -> None:
    page = browser.new_page()
    console = Console(page)
    page.goto(viewer_url + "/")
    assert sorted(_row_targets(page)) == ["local/baseline", "local/oracle"]
    page.screenshot(path=str(shots / "leaderboard.png"), full_page=True)
    header = page.locator('#leaderboard-conversation th[data-benchmark="smoke"]')
    header.click()
    assert _row_targets(page) == ["local/oracle", "local/baseline"]  # best first
    assert header.get_attribute("aria-sort") == "descending"
    header.click()
    assert _row_targets(page) == ["local/baseline", "local/oracle"]
    page.select_option('select[name="mode"]', "audio")
    page.click("#apply-filters")
    page.wait_for_url("**/?*mode=audio*")
    assert _row_targets(page) == ["local/oracle"]
    page.locator("#leaderboard-conversation tbody td a").first.click()
    page.wait_for_url(f"**/run/{runs.run_id('oracle_audio')}/")
    assert "local/oracle" in page.locator("body").inner_text()
    assert console.errors == []
    page.close()


def _task_run(root: Path, wer: dict[str, float]) -> None:
    """A finished task run of one task (``tiny``, WER) with these models' values."""
    run = root / "tasks" / "20261127T000000Z_abc123"
    run.mkdir(parents=True)
    info = {
        "schema": "voxbench.tasks/1",
        "id": run.name,
        "started": "2026-11-27T00:00:00+00:00",
        "finished": "2026-11-27T00:01:00+00:00",
        "status": "finished",
        "models": [{"name": m, "model": m, "api": "chat", "endpoints": 1} for m in wer],
        "tasks": {"tiny": {"fingerprint": "sha256:0", "records": 3, "metrics": ["wer"]}},
    }
    metrics = {
        m: {"records": 3, "metrics": {"wer": {"value": v, "ci": [v - 1, v + 1], "n": 3,
                                             "higher_is_better": False}}}
        for m, v in wer.items()
    }  # fmt: skip
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    (run / "scores.json").write_text(json.dumps({"tasks": {"tiny": metrics}}), encoding="utf-8")


def test_a_lower_is_better_column_ranks_the_lowest_first_and_empty_cells_last(
    browser: Any, runs: Runs
) -> None:
    # WER: the first click must put the lowest first; cells without a value stay at the end
    # both ways (they sorted first on the way up before).
    _task_run(runs.root, {"acme/good": 5.0, "acme/bad": 30.0, "acme/mid": 12.0})
    with _serve(runs) as url:
        page = browser.new_page()
        page.goto(url + "/")
        header = page.locator('#leaderboard-tasks th[data-benchmark="tiny"]')
        assert header.get_attribute("data-better") == "lower"
        header.click()
        assert _row_targets(page, "tasks") == ["acme/good", "acme/mid", "acme/bad"]
        assert header.get_attribute("aria-sort") == "ascending"
        header.click()
        assert _row_targets(page, "tasks") == ["acme/bad", "acme/mid", "acme/good"]
        # Audio tasks have their own table: the conversation runs are not rows of it.
        assert sorted(_row_targets(page)) == ["local/baseline", "local/oracle"]
        page.close()


@contextlib.contextmanager
def _serve(runs: Runs) -> Iterator[str]:
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = open_store(str(runs.root / "voxbench.db"), runs.root)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(runs.root, store), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the viewer did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        store.close()


LOAD_AND_PLAY = """audio => new Promise((resolve, reject) => {
    audio.preload = "auto";
    audio.addEventListener("error", () => reject(new Error("audio error " + audio.error.code)));
    audio.addEventListener("loadedmetadata", () => {
        audio.play().then(() => {
            audio.pause();
            resolve({duration: audio.duration, at: audio.currentTime});
        }, reject);
    });
    audio.load();
})"""


def test_a_turn_plays_its_audio(browser: Any, viewer_url: str, runs: Runs, shots: Path) -> None:
    page = browser.new_page()
    console = Console(page)
    page.goto(f"{viewer_url}/run/{runs.run_id('oracle_audio')}/")
    page.screenshot(path=str(shots / "run.png"), full_page=True)
    players = page.locator("audio")
    assert players.count() >= 1
    state = players.last.evaluate(LOAD_AND_PLAY)
    assert state["duration"] > 0.5
    # Each turn's players play its stretch of conversation.wav, cut into the run's clips/:
    # the player's scrubber spans the turn alone, not the whole recording.
    turn_players = page.locator("details.turn audio")
    assert turn_players.count() >= 4
    src = turn_players.nth(2).get_attribute("src") or ""
    assert "clips/conversation_" in src and src.endswith(".flac")
    start, end = (float(x) for x in src.rsplit("_", 1)[1].removesuffix(".flac").split("-"))
    later = turn_players.nth(2).evaluate(LOAD_AND_PLAY)
    assert later["duration"] == pytest.approx(end - start, abs=0.02)
    assert console.errors == []
    page.close()


def test_the_failing_turns_can_be_shown_alone(browser: Any, viewer_url: str, runs: Runs) -> None:
    page = browser.new_page()
    console = Console(page)
    page.goto(f"{viewer_url}/run/{runs.run_id('baseline')}/")
    turns = page.locator("details.turn")
    failed = page.locator('details.turn[data-verdict="fail"]')
    assert 0 < failed.count() < turns.count()
    page.click('button[data-filter="fail"]')
    visible = [t for t in turns.all() if t.is_visible()]
    assert len(visible) == failed.count()
    page.click('button[data-filter="all"]')
    assert all(t.is_visible() for t in turns.all())
    assert console.errors == []
    page.close()


def test_a_run_in_progress_is_followed_live(browser: Any, viewer_url: str, runs: Runs) -> None:
    run = runs.paths["baseline"]
    info_file, transcript = run / RunDirectory.RUN, run / RunDirectory.TRANSCRIPT
    info = json.loads(info_file.read_text())
    lines = transcript.read_text().splitlines(keepends=True)
    info_file.write_text(json.dumps(info | {"status": "started", "ended_at": None}))
    transcript.write_text("".join(lines[:3]))  # three turns done so far
    page = browser.new_page()
    console = Console(page)
    page.goto(f"{viewer_url}/run/{runs.run_id('baseline')}/")
    body = page.locator("body")
    assert lines[3].split('"user_text": "')[1][:20] not in body.inner_text()
    with page.expect_navigation(timeout=15_000):  # the page polls, and reloads for a new turn
        transcript.write_text("".join(lines[:4]))
    expect_text = json.loads(lines[3])["user_text"][:20]
    assert expect_text in body.inner_text()
    with page.expect_navigation(timeout=15_000):  # and once more when the run ends
        info_file.write_text(json.dumps(info))
    assert "success" in body.inner_text()
    assert console.errors == []
    page.close()


def test_two_runs_are_compared(browser: Any, viewer_url: str, runs: Runs, shots: Path) -> None:
    page = browser.new_page()
    console = Console(page)
    page.goto(viewer_url + "/runs")
    button = page.locator("#compare-button")
    assert button.is_disabled()
    page.check(f'input.pick[value="{runs.run_id("baseline")}"]')
    page.check(f'input.pick[value="{runs.run_id("oracle")}"]')
    assert button.is_enabled()
    button.click()
    page.wait_for_url("**/compare?*")
    assert "a=" in page.url and "b=" in page.url
    assert "strict_pass" in page.locator("body").inner_text()
    page.screenshot(path=str(shots / "compare.png"), full_page=True)
    assert console.errors == []
    page.close()


def test_the_summary_run_page_searches_its_turns(
    browser: Any, runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run the HTML report cannot show gets the viewer's own page: it searches its turns too.
    from voxbench.core.errors import VoxbenchError

    def no_report(*args: Any, **kwargs: Any) -> str:
        raise VoxbenchError("no report for this test")

    monkeypatch.setattr("voxbench.viewer.app.render_run_html", no_report)
    baseline = RunDirectory(runs.paths["baseline"]).turns()
    word = next(w for w in (baseline[1].assistant_text or "").split() if len(w) > 4)
    with _serve(runs) as url:
        page = browser.new_page()
        console = Console(page)
        page.goto(f"{url}/run/{runs.run_id('baseline')}/")
        rows = page.locator("#turns tbody tr")
        assert rows.count() == len(baseline)
        page.fill("#turn-search", word.upper())
        shown = [r.get_attribute("data-turn") for r in rows.all() if r.is_visible()]
        assert baseline[1].turn in shown and len(shown) <= len(baseline)
        page.fill("#turn-search", "zzzz-not-said")
        assert not any(r.is_visible() for r in rows.all())
        page.fill("#turn-search", "")
        assert all(r.is_visible() for r in rows.all())
        assert console.errors == []
        page.close()
