"""``report.html`` opened from disk in a real browser (Playwright driving Debian's chromium):
the page works offline, each turn's players load and play their part of the recording, and
nothing logs an error. Skips with its reason where Playwright or chromium is missing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.browser import CHROMIUM_FLAGS, chromium
from tests.report.runs import judged_run
from voxbench.report.html import render_run_html, write_run_html

PLAY_TURN = """async (turn) => {
  const box = document.getElementById('turn-' + turn);
  box.open = true;
  const out = [];
  for (const audio of box.querySelectorAll('audio')) {
    audio.muted = true;
    await audio.play();
    await new Promise((done) => setTimeout(done, 300));
    out.push({start: audio.currentTime, duration: audio.duration, error: audio.error && audio.error.code});
    audio.pause();
  }
  return out;
}"""


@pytest.mark.slow
def test_report_plays_each_turn_offline_in_chromium(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    executable = chromium()
    run = asyncio.run(judged_run(tmp_path, "local/oracle", mode="audio", only_turns="0-1"))
    linked = write_run_html(run)
    embedded = tmp_path / "mailed" / "report.html"  # alone in a folder: nothing beside it
    embedded.parent.mkdir()
    embedded.write_text(render_run_html(run, embed_audio=True), encoding="utf-8")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            requests: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            for file in (linked, embedded):
                page.goto(file.as_uri())
                turn = page.locator("details.turn").first.get_attribute("data-turn")
                players = page.evaluate(PLAY_TURN, turn)
                assert len(players) == 2 and all(p["error"] is None for p in players), players
                if file == linked:
                    # Each player is its turn's clip (cut beside the recording), whole.
                    srcs = page.eval_on_selector_all(
                        f"#turn-{turn} audio", "els => els.map(e => e.getAttribute('src'))"
                    )
                    for player, src in zip(players, srcs, strict=True):
                        span = src.rsplit("_", 1)[1].removesuffix(".flac").split("-")
                        assert player["duration"] == pytest.approx(
                            float(span[1]) - float(span[0]), abs=0.02
                        )
                assert all(0.3 < p["duration"] < 30 for p in players)
                page.click("button[data-filter='fail']")
                assert page.locator("details.turn:not(.hidden)").count() == 0  # oracle: none
            assert errors == []
            assert all(u.startswith(("file:", "data:")) for u in requests), requests
        finally:
            browser.close()
