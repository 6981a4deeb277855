"""Measured once: timeline latencies, cascade stages from marks, analysis.json reuse."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from voxbench.analysis import analyse_run, load_or_analyse, summarise
from voxbench.core.records import ComponentSpec, RunInfo, TurnRecord, TurnTimings
from voxbench.core.rundir import RunDirectory
from voxbench.core.timeline import (
    AudioRecorded,
    RecordingStarted,
    StageMarkRecorded,
    StageTimingRecorded,
    TextRecorded,
    ToolCallRecorded,
    TurnCompleteRecorded,
    TurnEnded,
    TurnRetry,
    TurnStarted,
    UsageRecorded,
    UserTranscriptRecorded,
    UserTurnEnded,
)
from voxbench.runner.config import RunConfig
from voxbench.runner.launch import run_conversation


def test_summaries_keep_values_at_or_below_zero() -> None:
    summary = summarise([-0.2, 0.0, 0.4, None, 1.0])
    assert summary.count == 4 and summary.min == -0.2 and summary.max == 1.0
    assert summary.p50 == 0.2 and summary.mean == 0.3
    assert summarise([None]).count == 0


def _run(
    tmp_path: Path,
    events: list[tuple[float, str | None, object]] | list[tuple[float, str | None, object, float]],
    turns: list[str],
) -> Path:
    """A run directory with these (t, turn, event[, wall]) events and turn records."""
    run = RunDirectory(tmp_path / "run")
    run.write_info(
        RunInfo(
            run_id="run",
            benchmark="smoke",
            benchmark_version="1",
            benchmark_hash="x",
            target=ComponentSpec(name="local/test"),
            started_at="2026-01-01T00:00:00+00:00",
        )
    )
    run.open_for_append()
    for t, turn, event, *wall in events:
        run.append_event(event, t=t, turn=turn, wall=wall[0] if wall else None)  # type: ignore[arg-type]
    run.close()
    for index, turn in enumerate(turns):
        record = TurnRecord(turn=turn, index=index, user_text="u", timings=TurnTimings(start=0.0))
        run.append_turn(record, {})
    return run.path


def test_latencies_come_from_the_last_attempt_and_skip_what_is_not_agent_output(
    tmp_path: Path,
) -> None:
    path = _run(
        tmp_path,
        [
            (1.0, "0", TurnStarted(index=0)),
            (1.1, "0", UserTurnEnded()),
            (1.5, "0", TextRecorded(text="lost attempt")),
            (1.6, "0", TurnRetry(attempt=1, reason="server: 500", delay=0.1)),
            (2.0, "0", TurnStarted(index=0)),
            (2.25, "0", UserTurnEnded()),
            (2.3, "0", UserTranscriptRecorded(text="the user")),  # the target's ASR: not output
            (2.35, "0", UsageRecorded(input_tokens=3)),
            (2.4, "0", StageMarkRecorded(stage="llm_first_token", edge="start")),
            (2.5, "0", ToolCallRecorded(call_id="c", name="lookup")),
            (2.75, "0", TextRecorded(text="hello")),
            (2.8, "0", StageMarkRecorded(stage="llm_first_token", edge="end")),
            (2.9, "0", StageTimingRecorded(stage="stt", seconds=0.125)),  # an older run's form
            (3.0, "0", TurnCompleteRecorded()),
            (3.1, "0", TurnEnded(status="completed")),
        ],
        ["0"],
    )
    (turn,) = analyse_run(path).turns
    assert turn.ttfb == pytest.approx(0.25)  # the tool call, not the transcript or usage
    assert turn.ttft == pytest.approx(0.5)
    assert turn.first_audio_latency is None
    assert turn.stages == pytest.approx({"llm_first_token": 0.4, "stt": 0.125})


def test_a_virtual_clock_run_is_measured_on_its_wall_stamps(tmp_path: Path) -> None:
    """Virtual time stood still while the target computed (every stamp of the answer is at
    the user's end): its latencies are the wall time the host took."""
    path = _run(
        tmp_path,
        [
            (0.0, None, RecordingStarted(origin=0.0, clock="virtual"), 0.3),
            (1.0, "0", TurnStarted(index=0), 0.31),
            (3.0, "0", UserTurnEnded(), 0.32),
            (3.0, "0", StageMarkRecorded(stage="stt", edge="start"), 0.33),
            (3.0, "0", StageMarkRecorded(stage="stt", edge="end"), 1.53),
            (3.0, "0", TextRecorded(text="hello"), 1.62),
            (3.0, "0", AudioRecorded(samples=2400, sample_rate=24_000, plays_at=3.0), 1.82),
            (3.0, "0", TurnCompleteRecorded(), 1.9),
            (3.1, "0", TurnEnded(status="completed"), 1.9),
        ],
        ["0"],
    )
    analysis = analyse_run(path)
    assert analysis.clock == "virtual"
    (turn,) = analysis.turns
    assert turn.ttfb == turn.ttft == pytest.approx(1.3)
    assert turn.first_audio_latency == turn.processing == pytest.approx(1.5)
    assert turn.stages == pytest.approx({"stt": 1.2})
    written = json.loads(RunDirectory(path).events_file.read_text().splitlines()[1])
    assert written["wall"] == 0.3


def test_a_real_clock_run_writes_no_wall_stamps_and_has_no_processing(tmp_path: Path) -> None:
    path = _run(
        tmp_path,
        [
            (1.0, "0", TurnStarted(index=0)),
            (3.0, "0", UserTurnEnded()),
            (3.5, "0", AudioRecorded(samples=2400, sample_rate=24_000, plays_at=3.5)),
            (4.0, "0", TurnEnded(status="completed")),
        ],
        ["0"],
    )
    assert all("wall" not in json.loads(line) for line in (path / "events.jsonl").open())
    analysis = analyse_run(path)
    assert analysis.clock == "real"
    assert analysis.turns[0].first_audio_latency == pytest.approx(0.5)
    assert analysis.turns[0].processing is None


def test_a_turn_without_a_timeline_is_not_scored(tmp_path: Path) -> None:
    path = _run(tmp_path, [(0.5, "0", TurnStarted(index=0))], ["0", "1"])
    analysis = analyse_run(path)
    assert [t.scored for t in analysis.turns] == [True, False]
    assert analysis.latency == {}  # no user end: nothing measurable


def test_text_runs_are_measured_and_the_analysis_is_reused_until_the_run_changes(
    tmp_path: Path,
) -> None:
    path = asyncio.run(
        run_conversation(
            RunConfig(benchmark="smoke", target="local/oracle", runs_dir=tmp_path, only_turns="0-2")
        )
    )
    run = RunDirectory(path)
    first = load_or_analyse(run, write=True)
    assert first.mode == "text" and not first.turn_taking
    assert [t.turn for t in first.turns] == ["0", "1", "2"]
    assert first.latency["ttfb"].count == 3
    saved = json.loads(run.analysis_file.read_text())
    saved["turns"][0]["ttfb"] = 123.0  # proves the file, not a new measurement, is returned
    run.analysis_file.write_text(json.dumps(saved))
    assert load_or_analyse(run).turns[0].ttfb == 123.0
    with run.events_file.open("a") as f:  # the run grew (a resume): measure again
        f.write("\n")
    assert load_or_analyse(run).turns[0].ttfb != 123.0
    run.analysis_file.write_text("{not json")
    assert load_or_analyse(run).turns[0].ttfb is not None  # unreadable: measured again


def _cut_in_half(wav: Path, *, patch_header: bool) -> None:
    """Keep the first half of the recording's frames, as a full disk or a broken copy does:
    the header still claims the whole length, or (``patch_header``) was rewritten to match."""
    import struct

    data = wav.read_bytes()
    frames = (len(data) - 44) // 4
    kept = data[: 44 + frames // 2 * 4]
    if patch_header:
        size = len(kept) - 44
        kept = (
            kept[:4]
            + struct.pack("<I", 36 + size)
            + kept[8:40]
            + struct.pack("<I", size)
            + kept[44:]
        )
    wav.write_bytes(kept)


@pytest.mark.parametrize("patch_header", [False, True], ids=["stale-header", "patched-header"])
def test_a_recording_cut_in_half_is_reported_and_later_turns_are_unmeasurable(
    tmp_path: Path, patch_header: bool
) -> None:
    config = RunConfig(
        benchmark="smoke",
        mode="audio",
        target="local/oracle",
        runs_dir=tmp_path / "runs",
        heard_asr="none",
        inter_turn_gap=0.3,
    )
    path = asyncio.run(run_conversation(config))
    assert all(not t.issues for t in analyse_run(path).turns)
    _cut_in_half(path / "conversation.wav", patch_header=patch_header)

    analysis = analyse_run(path)
    assert len(analysis.warnings) == 1
    warning = analysis.warnings[0]
    assert "conversation.wav" in warning and "ends early" in warning
    if not patch_header:
        assert "header" in warning  # it says the file is shorter than its header claims
    cut = [t for t in analysis.turns if not t.scored]
    kept = [t for t in analysis.turns if t.scored]
    assert cut and kept
    assert [t.turn for t in kept + cut] == [t.turn for t in analysis.turns]  # a tail is cut
    for t in cut:
        assert any(i.startswith("recording_ends_early") for i in t.issues), t.issues
        assert "missing_response" not in t.issues
    if patch_header:  # what a user reads
        from typer.testing import CliRunner

        from voxbench.cli.main import app

        shown = CliRunner().invoke(app, ["analyze", str(path)], env={"COLUMNS": "200"})
        assert shown.exit_code == 0, shown.output
        assert "warning:" in shown.output and "ends early" in shown.output
    assert all(t.issues == [] for t in kept)
