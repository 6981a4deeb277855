"""``report.html`` of real runs (the runner on ``smoke``): one self-contained page per run,
and two runs compared."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from pathlib import Path

import pytest
import soundfile as sf

from tests.cli_invoke import invoke
from tests.judging.scripted import JudgeScript, scripted_run
from tests.report.html_checks import external_links, parse, player_files
from tests.report.runs import judged_run
from voxbench.core.rundir import RunDirectory, read_jsonl, write_jsonl_atomic
from voxbench.evaluation.evaluate import EvaluationOptions, evaluate_run_async
from voxbench.report.html import render_compare_html, render_run_html, write_run_html
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.scoring.compare import compare_runs
from voxbench.testing import FakeOpenAIServer


@pytest.fixture
async def audio_run(tmp_path: Path) -> Path:
    return await judged_run(tmp_path, "local/oracle", mode="audio", only_turns="0-3", tags="track")


def _rates(page) -> dict[str, str]:
    return {
        row.attrs["data-dimension"]: next(
            td.attrs["data-rate"]
            for td in page.elements
            if "data-rate" in td.attrs and td in _cells_after(page, row)
        )
        for row in page.find("tr")
        if "data-dimension" in row.attrs
    }


def _cells_after(page, row) -> list:
    start = page.elements.index(row)
    out = []
    for e in page.elements[start + 1 :]:
        if e.tag == "tr":
            break
        out.append(e)
    return out


async def test_audio_run_page_has_every_turn_with_players_and_plots(audio_run: Path) -> None:
    path = write_run_html(audio_run)
    assert path == audio_run / RunDirectory.REPORT_HTML
    page = parse(path.read_text(encoding="utf-8"))
    records = RunDirectory(audio_run).turns()
    turns = page.find("details", class_="turn")
    assert [t.attrs["data-turn"] for t in turns] == [r.turn for r in records] and len(turns) == 4
    # Two players per turn (user, agent), each a time range of the recording cut beside it.
    players = page.find("audio")
    assert len(players) == 8
    files = player_files(page, audio_run)
    assert all(f.parent == audio_run / "clips" and f.is_file() for f in files)
    starts = [float(f.stem.rsplit("_", 1)[1].split("-")[0]) for f in files]
    assert starts == sorted(starts)  # user then agent, turn after turn
    # The scorecard's numbers are the saved scorecard's.
    card = json.loads((audio_run / "scorecard.json").read_text())
    rates = _rates(page)
    assert rates["strict per-turn pass"] == str(card["strict_pass"]["rate"])
    for dim in card["dimensions"]:
        assert rates[dim["dimension"]] == str(dim["rate"])
    # Latency distributions and the turn-taking timeline are inline SVG.
    titles = [e.attrs.get("aria-label") for e in page.find("svg", class_="plot")]
    assert "Time to first byte (TTFB)" in titles and "Voice to voice (V2V)" in titles
    (timeline,) = page.find("svg", class_="timeline")
    assert len(page.find("rect", class_="seg-user")) == 4
    assert len(page.find("rect", class_="seg-agent")) == 4
    assert page.find("line", class_="tag")  # tone tags were recorded
    # Every verdict is on the page with its reasoning.
    judgments = read_jsonl(audio_run / "judged.jsonl")
    assert len(page.find("div", class_="judgment")) == len(judgments)
    assert not external_links(page)
    # Nothing to fetch: the only <link> is the empty inline icon (no favicon request either).
    assert all(e.attrs.get("href") == "data:," for e in page.find("link"))
    assert all(not e.attrs.get("src") for e in page.find("script"))


async def test_embedded_audio_plays_each_turn_on_its_own(audio_run: Path) -> None:
    page = parse(render_run_html(audio_run, embed_audio=True))
    players = page.find("audio")
    assert len(players) == 8 and not external_links(page)
    for player in players:
        src = player.attrs["src"]
        assert src.startswith("data:audio/flac;base64,")
        clip, rate = sf.read(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
        assert rate == 16_000 and clip.ndim == 1 and 0.3 < len(clip) / rate < 30


@pytest.mark.secrets_on_purpose
async def test_user_text_is_escaped_and_secrets_redacted(tmp_path: Path) -> None:
    path = await judged_run(tmp_path, "local/oracle", only_turns="0-2")
    rows = read_jsonl(path / "transcript.jsonl")
    rows[1]["assistant_text"] = "<script>alert(1)</script> my key sk-abcdefghijklmnopqrstuvwx"
    rows[1]["tool_calls"] = [
        {"call_id": "c1", "name": "<img src=x onerror=alert(2)>", "arguments": {"a": "</pre>"}}
    ]
    write_jsonl_atomic(path / "transcript.jsonl", rows)
    await evaluate_run_async(path)
    text = render_run_html(path)
    page = parse(text)
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)" in text
    assert len(page.find("script")) == 1  # the page's own
    assert not page.find("img")
    assert "sk-abcdefghijklmnopqrstuvwx" not in text and "***" in text
    (turn,) = [
        t for t in page.find("details", class_="turn") if t.attrs["data-turn"] == rows[1]["turn"]
    ]
    assert "<script>alert(1)</script>" in turn.text  # shown as text
    # A text run has no players and no timeline, and says so.
    assert not page.find("audio") and not page.find("svg", class_="timeline")
    assert "Text run: no audio was recorded." in text
    # What was judged, and by what, as the scorecard says.
    judged = [li.text for li in page.find("li") if li.text.startswith(("Judged", "Not judged"))]
    assert judged[0] == "Judged by code: tool_use, facts, state"
    assert judged[-1].startswith("Not judged (no LLM judge given): instruction_following")


async def test_an_unjudged_run_shows_its_turns_without_verdicts(tmp_path: Path) -> None:
    config = RunConfig(
        benchmark="smoke", target="local/oracle", runs_dir=tmp_path, only_turns="0-1"
    )
    path = await run_conversation(config)
    page = parse(render_run_html(path))
    assert [t.attrs["data-verdict"] for t in page.find("details", class_="turn")] == [
        "unjudged"
    ] * 2
    assert "has not been judged yet" in " ".join(e.text for e in page.find("div", class_="note"))


async def test_compare_page_pairs_turns_and_shows_the_paired_test(tmp_path: Path) -> None:
    a = await judged_run(tmp_path, "local/oracle")
    b = await judged_run(tmp_path, "local/baseline")
    text = render_compare_html(a, b, out_dir=tmp_path)
    page = parse(text)
    ra, rb = RunDirectory(a), RunDirectory(b)
    expected = compare_runs(
        ra.scorecard(), ra.turns(), ra.judgments(), rb.scorecard(), rb.turns(), rb.judgments()
    )
    rows = page.find("tr", class_="cmp-turn")
    assert [r.attrs["data-turn"] for r in rows] == [r.turn for r in ra.turns()]
    dims = [r.attrs["data-dimension"] for r in page.find("tr") if "data-dimension" in r.attrs]
    assert dims == [d.dimension for d in expected.dimensions]
    for d in expected.dimensions:
        assert f"{d.p_value:.4g}" in text
    assert "exact McNemar" in text and "A: local/oracle" in text and "B: local/baseline" in text
    if expected.strict_note_a:  # judged by code only: the strict pass is not comparable
        assert f"A's strict per-turn pass: {expected.strict_note_a}." in text
    assert any(r.attrs["data-differs"] == "yes" for r in rows)  # the baseline fails some turns
    plots = page.find("svg", class_="plot")
    assert plots and all(
        "A: local/oracle" in p.text and "B: local/baseline" in p.text for p in plots
    )
    assert not external_links(page)


def test_cli_writes_report_html_and_compare_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a = asyncio.run(judged_run(tmp_path, "local/oracle", only_turns="0-3"))
    b = asyncio.run(judged_run(tmp_path, "local/baseline", only_turns="0-3"))
    code, out, err = invoke(monkeypatch, capsys, "report", str(a), "--html")
    assert code == 0, err
    assert (a / "report.html").is_file() and "report.html" in out
    html_file = tmp_path / "out" / "compare.html"
    html_file.parent.mkdir()
    code, out, err = invoke(
        monkeypatch, capsys, "compare", str(a), str(b), "--html", str(html_file)
    )
    assert code == 0, err
    page = parse(html_file.read_text(encoding="utf-8"))
    assert len(page.find("tr", class_="cmp-turn")) == 4 and not external_links(page)
    code, out, err = invoke(monkeypatch, capsys, "report", str(tmp_path / "nowhere"), "--html")
    assert code == 2 and "not a run directory" in err


async def test_llm_judge_explanations_are_on_the_turn(tmp_path: Path) -> None:
    _, _, path = await scripted_run(tmp_path)
    script = JudgeScript(verdicts={"1": {"instruction_following": (False, "ignored_instruction")}})
    server = FakeOpenAIServer(script)
    await server.start()
    try:
        options = EvaluationOptions(judge="openai-compatible:m", judge_base_url=server.url)
        await evaluate_run_async(path, options)
    finally:
        await server.stop()
    page = parse(render_run_html(path))
    turn = next(t for t in page.find("details", class_="turn") if t.attrs["data-turn"] == "1")
    assert turn.attrs["data-verdict"] == "fail"
    assert "graded instruction_following of turn 1" in turn.text
    assert "cause: ignored_instruction" in turn.text and "[openai-compatible/m" in turn.text
    assert "LLM judge: 10 turns asked" in " ".join(p.text for p in page.find("p"))
