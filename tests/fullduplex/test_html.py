"""``voxbench fdb score DIR --html``: the scoring as one page, per category and per sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from tests.report.html_checks import external_links, parse, player_files
from voxbench.core.errors import ConfigError
from voxbench.fullduplex.html import render_fdb_html


def test_fdb_page_has_each_category_and_sample_with_players(
    monkeypatch, capsys, mini_outputs: Path
) -> None:
    root = mini_outputs / "v1_0"
    code, out, err = invoke(monkeypatch, capsys, "fdb", "score", str(root), "--html")
    assert code == 0, out + err
    page_file = root / "fdb_report_fdb-v1.html"
    assert page_file.is_file()
    page = parse(page_file.read_text(encoding="utf-8"))
    scores = [json.loads(line) for line in (root / "fdb_scores_fdb-v1.jsonl").open()]
    summary = json.loads((root / "fdb_summary_fdb-v1.json").read_text())
    samples = page.find("tr", class_="fdb-sample")
    assert sorted(s.attrs["data-sample"] for s in samples) == sorted(s["sample"] for s in scores)
    headings = [h.attrs["id"] for h in page.find("h2")]
    assert headings == [
        f"category-{c}" for c in dict.fromkeys(r["category"] for r in summary["rows"])
    ]
    assert len(page.find("tr", class_="summary-row")) == len(summary["rows"])
    # Every sample has its input and output players, on files beside the page.
    files = player_files(page, root)
    assert len(files) == 2 * len(scores) and all(f.is_file() for f in files)
    assert {f.name for f in files} == {"input.wav", "output.wav"}
    # A metric's value is the sample's score.
    first = next(s for s in scores if s["metrics"].get("tor") is not None)
    row = next(s for s in samples if s.attrs["data-sample"] == first["sample"])
    assert f"{first['metrics']['tor']:.3f}" in row.text or str(first["metrics"]["tor"]) in row.text
    assert not external_links(page)
    page_file.unlink()
    code, out, err = invoke(monkeypatch, capsys, "report", str(root), "--html")
    assert code == 0, out + err
    assert page_file.is_file() and "FDB fdb-v1" in out


def test_fdb_page_without_a_scoring_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"fdb_summary_voxbench\.json.*voxbench fdb score"):
        render_fdb_html(tmp_path, mode="voxbench")
