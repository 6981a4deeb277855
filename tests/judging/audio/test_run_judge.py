"""``voxbench judge RUN --audio-rubric``: per-turn clips of the agent channel, one scorecard
dimension per criterion, shown in the report; and ``judge-audio`` on files."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from tests.cli_invoke import invoke
from voxbench.audio.wav import read_wav, write_wav
from voxbench.benchmarks import loader
from voxbench.cli.fake_server import build_fake_server
from voxbench.core.rundir import RunDirectory
from voxbench.evaluation import EvaluationOptions, evaluate_run_async
from voxbench.judging.audio.engine import RubricJudge
from voxbench.judging.audio.realtime_judge import RealtimeAudioJudge
from voxbench.judging.audio.rubric import load_rubric
from voxbench.judging.audio.segments import Clip, turn_clips
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation
from voxbench.testing.audio_judge import Heard, ScriptedAudioJudge, form_answer
from voxbench.testing.openai_realtime import FakeRealtimeJudgeServer

from .helpers import spoken


def audio_run_config(tmp_path: Path) -> RunConfig:
    return RunConfig(
        benchmark="smoke",
        mode="audio",
        target="local/oracle",
        runs_dir=tmp_path / "runs",
        heard_asr="none",
        inter_turn_gap=0.3,
        only_turns=[0, 1, 2],
    )


def audio_run(tmp_path: Path) -> Path:
    return asyncio.run(run_conversation(audio_run_config(tmp_path)))


def by_length(heard: Heard) -> str:
    """Longer answers sound less like RP to this fake (a score it can be checked against)."""
    return form_answer({"accent": 5 if heard.seconds < 7.0 else 2}, f"{heard.seconds:.1f} s")


@contextmanager
def realtime_judge_server(script: ScriptedAudioJudge) -> Iterator[FakeRealtimeJudgeServer]:
    """The fake on its own loop, for commands that run their own event loop."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = FakeRealtimeJudgeServer(script)
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_each_agent_turn_is_cut_from_the_agent_channel(tmp_path: Path) -> None:
    run = RunDirectory(audio_run(tmp_path))
    clips, missing = turn_clips(run, run.turns())
    assert [c.label for c in clips] == ["0", "1", "2"] and missing == {}
    recording = read_wav(run.recording_file)
    agent = recording.samples[:, 1]
    loud = np.flatnonzero(np.abs(agent) > 1e-3) / recording.sample_rate
    covered = 0
    for clip, after in zip(clips, [*clips[1:], None], strict=True):
        end = clip.start + clip.audio.duration
        covered += np.count_nonzero((loud >= clip.start) & (loud < end))
        assert after is None or end <= after.start  # one turn's clip never holds the next
        assert np.abs(clip.audio.samples).max() > 0.05
        assert clip.transcript == next(
            r.assistant_text for r in run.turns() if r.turn == clip.label
        )
    assert covered >= 0.99 * len(loud)  # the clips hold all the agent's speech


async def test_the_scorecard_gets_one_dimension_per_criterion(tmp_path: Path) -> None:
    path = await run_conversation(audio_run_config(tmp_path))
    script = ScriptedAudioJudge([by_length])
    async with FakeRealtimeJudgeServer(script) as server:
        client = RealtimeAudioJudge("openai-realtime", "gpt-realtime", base_url=server.url)
        evaluation = await evaluate_run_async(
            path,
            EvaluationOptions(
                audio_rubric="accent",
                audio_rubric_options={"target_accent": "RP"},
                audio_client=client,
                cache_dir=tmp_path / "cache",
            ),
        )
    assert len(script.heard) == 3
    assert all("RP accent" in h.instructions for h in script.heard)
    dim = evaluation.card.dimension("audio_accent")
    assert dim is not None and dim.scored == 3
    # The turns are judged concurrently: the fake hears them in any order, so each turn's
    # length comes from its own clip.
    run = RunDirectory(path)
    clips, _ = turn_clips(run, run.turns())
    assert sorted(round(h.seconds, 1) for h in script.heard) == sorted(
        round(c.audio.duration, 1) for c in clips
    )
    assert dim.failed_turns == [c.label for c in clips if c.audio.duration >= 7.0]
    assert "audio_accent" in evaluation.card.judged.llm
    assert evaluation.card.judge_status["audio-rubric"].startswith(
        "by openai-realtime/gpt-realtime: accent on 3 clips, 3 calls, 0 from cache; 0 undecided"
    )
    judgment = next(j for j in evaluation.judgments if j.dimension == "audio_accent")
    assert judgment.reasoning.startswith("score ") and judgment.details["rubric"] == "accent"
    report = (path / "report.md").read_text()
    assert "audio_accent" in report


def test_judge_command_with_an_audio_rubric(monkeypatch, capsys, tmp_path: Path) -> None:
    path = audio_run(tmp_path)
    with realtime_judge_server(ScriptedAudioJudge([form_answer({"accent": 4})])) as server:
        code, out, err = invoke(
            monkeypatch, capsys, "judge", str(path), "--audio-rubric", "accent",
            "--audio-option", "target_accent=RP", "--audio-judge", "openai-realtime/gpt-realtime",
            "--audio-judge-base-url", server.url,
        )  # fmt: skip
    assert code == 0, out + err
    assert "audio_accent" in out
    card = json.loads((path / "scorecard.json").read_text())
    dims = {d["dimension"]: d for d in card["dimensions"]}
    assert dims["audio_accent"]["passed"] == 3
    code, out, _ = invoke(monkeypatch, capsys, "show", str(path))
    assert code == 0 and "audio_accent" in out
    code, out, _ = invoke(monkeypatch, capsys, "compare", str(path), str(path))
    assert code == 0 and "audio_accent" in out
    code, out, err = invoke(monkeypatch, capsys, "judge", str(path), "--audio-rubric", "accent")
    assert code == 2 and "--audio-judge" in err


async def test_a_text_run_is_not_judged_by_ear(tmp_path: Path) -> None:
    config = RunConfig(benchmark="smoke", target="local/oracle", runs_dir=tmp_path / "runs")
    path = await run_conversation(config)
    script = ScriptedAudioJudge([form_answer({"accent": 4})])
    async with FakeRealtimeJudgeServer(script) as server:
        client = RealtimeAudioJudge("openai-realtime", "gpt-realtime", base_url=server.url)
        evaluation = await evaluate_run_async(
            path,
            EvaluationOptions(audio_rubric="accent", audio_rubric_options={"target_accent": "RP"},
                              audio_client=client),
        )  # fmt: skip
    assert evaluation.card.judge_status["audio-rubric"].startswith("not judged: the run has no")
    assert script.heard == []


def test_judge_audio_on_files_prints_a_table_and_json(monkeypatch, capsys, tmp_path: Path) -> None:
    folder = tmp_path / "clips"
    folder.mkdir()
    write_wav(folder / "rp.wav", spoken(voice="en-gb-x-rp"))
    write_wav(folder / "us.wav", spoken(voice="en-us"))
    answers = [form_answer({"accent": s}, "vowels") for s in (5, 4, 1, 2)]
    with realtime_judge_server(ScriptedAudioJudge(answers)) as server:
        # One call at a time: the script answers in order (rp.wav 5, 4; us.wav 1, 2).
        args = ["judge-audio", str(folder), "--rubric", "accent", "-o", "target_accent=RP",
                "--judge", "openai-realtime/gpt-realtime", "--judge-base-url", server.url,
                "--concurrency", "1"]  # fmt: skip
        code, out, err = invoke(monkeypatch, capsys, *args, "--samples", "2")
        assert code == 0, err
        assert "rp.wav" in out and "us.wav" in out and "4.5 / 5" in out and "± 0.5" in out
        code, out, err = invoke(monkeypatch, capsys, *args, "--samples", "2", "--json")
    data = json.loads(out)
    files = {f["label"]: f for f in data["files"]}
    assert files["rp.wav"]["criteria"]["accent"]["mean"] == 4.5
    assert files["us.wav"]["from_cache"] == 2  # asked the first time: cached since
    code, out, err = invoke(monkeypatch, capsys, "judge-audio", str(tmp_path / "none.wav"),
                            "--rubric", "accent", "-o", "target_accent=RP",
                            "--judge", "openai-realtime/gpt-realtime")  # fmt: skip
    assert code == 2 and "none.wav" in err and "file not found" in err


async def test_a_benchmark_declares_rubrics_for_some_turns(tmp_path: Path) -> None:
    package = tmp_path / "smoke_spelled"
    shutil.copytree(Path(loader.__file__).parent / "data" / "smoke", package)
    (package / "audio_rubrics.yaml").write_text(
        '- turns: ["1"]\n  rubric: pronunciation\n  options: {names: Priya}\n', encoding="utf-8"
    )
    config = audio_run_config(tmp_path).model_copy(update={"benchmark": str(package)})
    path = await run_conversation(config)
    answer = "- Names (1-5): 5 - Priya said right\n- Numbers (1-5): 2 - digits swallowed"
    script = ScriptedAudioJudge([answer])
    async with FakeRealtimeJudgeServer(script) as server:
        client = RealtimeAudioJudge("openai-realtime", "gpt-realtime", base_url=server.url)
        evaluation = await evaluate_run_async(path, EvaluationOptions(audio_client=client))
    audio = [j for j in evaluation.judgments if j.dimension.startswith("audio_")]
    assert {(j.turn, j.dimension, j.passed) for j in audio} == {
        ("1", "audio_names", True), ("1", "audio_numbers", False)
    }  # fmt: skip
    assert "Priya" in script.heard[0].instructions
    # Without an audio judge, nothing is asked.
    plain = await evaluate_run_async(path, EvaluationOptions())
    assert not any(j.dimension.startswith("audio_") for j in plain.judgments)


async def test_a_dry_run_fake_judge_from_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "answers.yaml"
    script.write_text('replies:\n  - "- Pace (1-5): 5 - comfortable"\n', encoding="utf-8")
    server = build_fake_server("openai-realtime-judge", str(script))
    async with server:
        client = RealtimeAudioJudge("openai-realtime", "gpt-realtime", base_url=server.url)
        judge = RubricJudge(client, load_rubric("pace").bind({}), samples=2)
        result = await judge.judge_clip(Clip("c", spoken()))
    assert result.criteria["pace"].scores == [5, 5]  # the last reply repeats
    assert server.judgments[0]["turn_detection"] is None
