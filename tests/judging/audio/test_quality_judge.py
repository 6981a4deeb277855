"""``voxbench judge RUN --audio-quality``: DNSMOS P.835 of each agent turn's audio as the
``audio_quality`` dimension, offline."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_invoke import invoke
from voxbench.audio.dnsmos import dnsmos
from voxbench.core.rundir import RunDirectory
from voxbench.judging.audio.quality_judge import PASS_AT, quality_judgment
from voxbench.judging.audio.segments import turn_clips

from .test_run_judge import audio_run


def test_each_agent_turn_gets_an_audio_quality_judgment(monkeypatch, capsys, tmp_path) -> None:
    path = audio_run(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "judge", str(path), "--audio-quality")
    assert code == 0, out + err
    card = json.loads((path / "scorecard.json").read_text())
    dims = {d["dimension"]: d for d in card["dimensions"]}
    assert dims["audio_quality"]["scored"] == 3
    assert card["judge_status"]["audio-quality"].startswith(
        "DNSMOS P.835 on 3 agent turns: mean OVRL"
    )
    judged = [
        json.loads(line)
        for line in (path / "judged.jsonl").read_text().splitlines()
        if '"audio_quality"' in line
    ]
    assert len(judged) == 3
    # Each judgment is DNSMOS of that turn's clip on the agent channel.
    run = RunDirectory(path)
    clips, _ = turn_clips(run, run.turns(), "agent")
    first = next(j for j in judged if j["turn"] == clips[0].label)
    score = dnsmos(clips[0].audio)
    assert score is not None and first["details"]["ovrl"] == score.ovrl
    assert first["passed"] is (score.ovrl >= PASS_AT)
    assert "audio_quality" in (path / "report.md").read_text()


def test_not_asked_and_text_runs(monkeypatch, capsys, tmp_path: Path) -> None:
    path = audio_run(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "judge", str(path))
    assert code == 0, out + err
    card = json.loads((path / "scorecard.json").read_text())
    assert "audio_quality" not in {d["dimension"] for d in card["dimensions"]}
    assert quality_judgment("3", None).judge_failed is True
