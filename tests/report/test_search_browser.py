"""Search and filters in the self-contained pages, opened from disk in chromium (issue 27):
a word of the agent's answer finds its turn, the verdict buttons narrow to failed turns, and
a task run's worst records narrow by text, task, model and verdict. Offline: nothing but
``file:`` and ``data:`` is requested."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import CHROMIUM_FLAGS, chromium
from tests.report.runs import judged_run
from tests.tasks.conftest import FakeEndpoints, run_yaml, tasks_dir  # noqa: F401
from tests.tasks.test_html import MISHEARD, TWO_MODELS, PerModel
from voxbench.core.rundir import RunDirectory
from voxbench.report.html import write_run_html
from voxbench.report.tasks_html import write_tasks_html

pytestmark = pytest.mark.slow

SHOWN = "sel => [...document.querySelectorAll(sel)].filter(e => e.offsetParent !== null).length"


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    executable = chromium()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            tab = browser.new_page()
            tab.errors, tab.requests = [], []
            tab.on("console", lambda m: tab.errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: tab.errors.append(str(e)))
            tab.on("request", lambda r: tab.requests.append(r.url))
            yield tab
            assert tab.errors == []
            assert all(u.startswith(("file:", "data:")) for u in tab.requests), tab.requests
        finally:
            browser.close()


def _visible(page: Any, selector: str) -> list[str]:
    return page.eval_on_selector_all(
        selector, "els => els.filter(e => e.offsetParent !== null).map(e => e.id)"
    )


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    """A judged text run of the baseline (made before the browser's event loop starts)."""
    return asyncio.run(judged_run(tmp_path, "local/baseline"))


@pytest.fixture
def task_run(tmp_path: Path, tasks_dir: Path) -> Path:  # noqa: F811
    """A task run of a good and a bad model (made before the browser's event loop starts)."""
    bad = FakeEndpoints(reply=lambda r: MISHEARD.get(r.reference, r.reference))
    return run_yaml(TWO_MODELS, tmp_path, PerModel(good=FakeEndpoints(), bad=bad)).run.path


def test_search_finds_a_turn_by_a_word_of_the_agent_and_filters_narrow(
    baseline: Path, page: Any
) -> None:
    run = baseline
    records = RunDirectory(run).turns()
    page.goto(write_run_html(run).as_uri())
    total = page.locator("details.turn").count()
    assert total == len(records)
    # A word only one turn's agent answer holds (its tool names, reasons and texts count too).
    texts = [(r.assistant_text or "").lower() for r in records]
    word, turn = next(
        (w, r.turn)
        for r, text in zip(records, texts, strict=True)
        for w in text.split()
        if len(w) > 5 and w.isalpha() and sum(w in t for t in texts) == 1
    )
    page.fill("#search", word.upper())  # any case
    shown = _visible(page, "details.turn")
    assert f"turn-{turn}" in shown and len(shown) < total
    assert page.locator("#shown-count").inner_text() == f"{len(shown)} of {total} shown"
    page.fill("#search", "")
    page.click("button[data-filter='fail']")
    failed = _visible(page, "details.turn")
    assert 0 < len(failed) < total
    assert all(page.locator(f"#{t}").get_attribute("data-verdict") == "fail" for t in failed)
    page.fill("#search", "zzzz-not-said")  # both filters at once: nothing left
    assert _visible(page, "details.turn") == []
    page.fill("#search", "")
    page.click("button[data-filter='all']")
    assert len(_visible(page, "details.turn")) == total
    page.set_viewport_size({"width": 390, "height": 844})
    page.evaluate("document.querySelectorAll('details.turn').forEach(d => d.open = true)")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_task_records_filter_by_text_model_and_verdict(task_run: Path, page: Any) -> None:
    page.goto(write_tasks_html(task_run).as_uri())
    rows = "tr.worst-record"
    total = page.locator(rows).count()
    assert total >= 2
    page.fill("#search", "x y z")  # the bad model's mishearing of "sept huit neuf"
    assert page.evaluate(SHOWN, rows) == 1
    assert "x y z" in page.locator(f"{rows}:not(.hidden)").inner_text()
    page.fill("#search", "")
    page.select_option("select[data-facet='model']", "good")  # the good model: nothing wrong
    assert page.evaluate(SHOWN, rows) == 0
    page.select_option("select[data-facet='model']", "bad")
    assert page.evaluate(SHOWN, rows) == total
    page.select_option("select[data-facet='task']", "tiny")
    page.click("button[data-filter='error']")  # no request failed
    assert page.evaluate(SHOWN, rows) == 0
    page.click("button[data-filter='wrong']")
    assert page.evaluate(SHOWN, rows) == total
    page.set_viewport_size({"width": 390, "height": 844})  # the toolbar and records fit a phone
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
