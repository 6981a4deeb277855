"""Every page fits a 390 px phone and a 1,400 px screen without sideways page scroll
(issue 27 item 10): the run report, the task report, the FDB report, the leaderboard after
a many-task run, the runs list and the compare page, in real chromium. Wide tables scroll
inside themselves; long names wrap. Screenshots of each page at both widths go to the
test's shots folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_invoke import invoke
from tests.fullduplex.conftest import _corpus_master, _outputs_master, mini_outputs  # noqa: F401
from tests.store.fixture_runs import Runs
from tests.viewer.test_browser import _serve, browser, shots  # noqa: F401

WIDTHS = (390, 1400)
TASKS = [f"builtin_en_asr_librispeech_other_long_name_{i:02d}" for i in range(24)]
MODELS = ["openai/gpt-4o-mini-transcribe", "local/whisper-large-v3-turbo", "local/oracle"]


def many_task_run(root: Path) -> Path:
    """A finished task run of 24 tasks × 3 models, as a default ``tasks run`` leaves one."""
    run = root / "tasks" / "20261127T000000Z_many"
    run.mkdir(parents=True)
    info = {
        "schema": "voxbench.tasks/1",
        "id": run.name,
        "started": "2026-11-27T00:00:00+00:00",
        "finished": "2026-11-27T00:01:00+00:00",
        "status": "finished",
        "seed": 0,
        "models": [{"name": m, "model": m, "api": "chat", "endpoints": 1} for m in MODELS],
        "tasks": {t: {"fingerprint": "sha256:0", "records": 3, "metrics": ["wer"]} for t in TASKS},
    }
    metric = {"value": 12.5, "ci": [10.0, 15.0], "n": 3, "higher_is_better": False}
    scores = {t: {m: {"records": 3, "metrics": {"wer": metric}} for m in MODELS} for t in TASKS}
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    (run / "scores.json").write_text(json.dumps({"tasks": scores}), encoding="utf-8")
    return run


def assert_fits(page: Any, url: str, name: str, shots: Path) -> dict[int, int]:  # noqa: F811
    """The page's width at each viewport, after asserting it fits."""
    widths = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 844})
        response = page.goto(url)
        assert response is None or response.ok, f"{name}: {response.status}"
        scroll = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
        assert scroll <= width, f"{name} at {width} px is {scroll} px wide"
        widths[width] = scroll
    return widths


def test_every_page_fits_390_and_1400_px(
    browser: Any,  # noqa: F811
    runs: Runs,
    shots: Path,  # noqa: F811
    mini_outputs: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tasks = many_task_run(runs.root)
    fdb = mini_outputs / "v1_0"
    code, out, err = invoke(monkeypatch, capsys, "fdb", "score", str(fdb), "--html")
    assert code == 0, out + err
    measured = {}
    with _serve(runs) as url:
        page = browser.new_page()
        pages = {
            "leaderboard": url + "/",
            "runs": url + "/runs",
            "run": f"{url}/run/{runs.run_id('oracle_audio')}/",
            "tasks": f"{url}/run/{tasks.name}/",
            "compare": f"{url}/compare?a={runs.run_id('baseline')}&b={runs.run_id('oracle')}",
            "fdb": (fdb / "fdb_report_fdb-v1.html").as_uri(),
        }
        for name, address in pages.items():
            measured[name] = assert_fits(page, address, name, shots)
        # The leaderboard's task table is as wide as 24 tasks need, inside its own scroller.
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(url + "/")
        inner = page.evaluate(
            "[...document.querySelectorAll('table.leaderboard')].map(t => t.scrollWidth)"
        )
        assert max(inner) > 390
        page.close()
    print("scrollWidth by page and viewport:", measured)
