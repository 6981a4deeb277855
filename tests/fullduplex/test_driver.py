"""The driver: streaming inputs to a Session and writing time-aligned outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.fullduplex.tone_session import ToneSession
from voxbench.audio.wav import read_wav
from voxbench.fullduplex.driver import drive_corpus
from voxbench.fullduplex.stream import StreamOptions

DELAY = 0.15


def _onset(path: Path, after: float = 0.0) -> float | None:
    audio = read_wav(path)
    loud = np.nonzero(np.abs(audio.samples[round(after * audio.sample_rate) :]) > 0.05)[0]
    return None if not len(loud) else after + loud[0] / audio.sample_rate


def _record(folder: Path) -> dict:
    return json.loads((folder / "voxbench_fdb.json").read_text())


async def test_outputs_are_aligned_with_the_inputs(
    mini_corpus: Path, corpus_times: dict, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    sessions: list[ToneSession] = []

    def make() -> ToneSession:
        sessions.append(ToneSession(delay=DELAY))
        return sessions[-1]

    report = await drive_corpus(mini_corpus, make, "test/tone", out_dir=out, concurrency=3)
    assert len(report.completed) == 9 and not report.failed
    for rel in corpus_times:
        src, dst = mini_corpus / rel, out / rel
        inp, outp = read_wav(src / "input.wav"), read_wav(dst / "output.wav")
        assert (outp.frames, outp.sample_rate) == (inp.frames, inp.sample_rate), rel
        record = _record(dst)
        assert record["status"] == "completed" and record["target"] == "test/tone"
        stream = record["streams"][0]
        assert stream["clock"] == "virtual" and stream["turn_detection"] == "client"
        assert stream["end_of_turn_sent"], rel
    # v1.5 samples also stream their clean input; annotations and ground truth are carried.
    v15 = out / "v1_5/user_backchannel/1"
    assert read_wav(v15 / "clean_output.wav").frames == read_wav(v15 / "clean_input.wav").frames
    assert (v15 / "metadata.json").is_file() and (out / "icc_gt_distribution.json").is_file()
    assert [s["output"] for s in _record(v15)["streams"]] == ["output.wav", "clean_output.wav"]

    # The turn-taking answer: the end of turn comes after the user's speech plus the
    # endpoint silence; on virtual time the tone starts right then (the processing delay is
    # recorded, not played), and output.wav holds it exactly where the record says.
    rel = "v1_0/candor_turn_taking/1"
    stream = _record(out / rel)["streams"][0]
    eot = stream["end_of_turn_sent"][0]
    assert eot >= corpus_times[rel]["turn_end"] + 0.6 - 0.05
    first = stream["responses"][0]["first_audio"]
    assert first == pytest.approx(eot, abs=1e-6)
    assert stream["responses"][0]["processing_s"] >= DELAY
    assert stream["responses"][0]["latency"] == pytest.approx(first - eot, abs=1e-3)
    assert _onset(out / rel / "output.wav") == pytest.approx(first, abs=0.002)
    assert stream["assistant_audio"][0][0] == pytest.approx(first, abs=1e-3)
    assert sum(s.audio_seconds for s in sessions) > 50  # every input was streamed


async def test_a_completed_corpus_resumes_without_work(mini_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    subset = mini_corpus / "v1_0" / "candor_turn_taking"
    first = await drive_corpus(subset, lambda: ToneSession(delay=0.01), "test/tone", out_dir=out)
    assert len(first.completed) == 1
    (out / "1" / "voxbench_fdb.json").write_text(
        (out / "1" / "voxbench_fdb.json").read_text().replace('"completed"', '"started"')
    )
    made: list[ToneSession] = []
    again = await drive_corpus(
        mini_corpus / "v1_0", lambda: made.append(ToneSession(delay=0.01)) or made[-1], "test/tone",
        out_dir=tmp_path / "out2",
    )  # fmt: skip
    assert len(again.completed) == 5
    third = await drive_corpus(
        mini_corpus / "v1_0", lambda: ToneSession(), "test/tone", out_dir=tmp_path / "out2"
    )
    assert third.completed == [] and len(third.resumed) == 5
    (out / "1" / "output.json").write_text('{"text": "stale", "chunks": []}')
    redo = await drive_corpus(subset, lambda: ToneSession(delay=0.01), "test/tone", out_dir=out)
    assert len(redo.completed) == 1  # its record was not "completed": driven again
    assert not (out / "1" / "output.json").exists()  # the old transcript went with the old wav


async def test_processing_time_is_recorded_but_never_moves_the_answer(
    mini_corpus: Path, tmp_path: Path
) -> None:
    # A slow or busy host takes longer to answer; on virtual time the output must not change
    # (its metrics would then depend on the CPU), while the time it took is still reported.
    subset = mini_corpus / "v1_0" / "candor_turn_taking"
    outputs, responses = {}, {}
    for delay in (0.05, 0.45):
        out = tmp_path / f"d{delay}"
        await drive_corpus(subset, lambda d=delay: ToneSession(delay=d), "test/tone", out_dir=out)
        outputs[delay] = read_wav(out / "1" / "output.wav").samples
        responses[delay] = _record(out / "1")["streams"][0]["responses"][0]
    assert np.array_equal(outputs[0.05], outputs[0.45])
    assert responses[0.05]["first_audio"] == responses[0.45]["first_audio"]
    assert responses[0.45]["processing_s"] - responses[0.05]["processing_s"] > 0.3


async def test_barge_in_stops_playback(
    mini_corpus: Path, corpus_times: dict, tmp_path: Path
) -> None:
    rel = "v1_0/synthetic_pause_handling/1"
    times = corpus_times[rel]
    out = tmp_path / "out"
    opts = StreamOptions(endpoint_ms=300)  # shorter than the user's 1.6 s pause
    await drive_corpus(
        mini_corpus / "v1_0" / "synthetic_pause_handling", lambda: ToneSession(delay=0.1, tone_s=3.0),
        "test/tone", out_dir=out, opts=opts,
    )  # fmt: skip
    stream = _record(out / "1")["streams"][0]
    assert stream["end_of_turn_sent"][0] < times["pause_end"]  # the pause looked like a turn end
    barge = stream["barge_ins"][0]
    assert times["pause_end"] < barge < times["pause_end"] + 0.5
    audio = read_wav(out / "1" / "output.wav")
    next_eot = stream["end_of_turn_sent"][1]
    quiet = audio.samples[
        round((barge + 0.01) * audio.sample_rate) : round(next_eot * audio.sample_rate)
    ]
    assert np.abs(quiet).max() == 0.0
    assert _onset(out / "1" / "output.wav", after=next_eot) is not None
    assert stream["dropped_audio_s"] > 0
