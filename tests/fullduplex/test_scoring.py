"""Scoring: the published reference values, voxbench-mode corrections, every metric on the
mini-corpus (with a fake judge), and the summary files."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.fullduplex.fake_judge import score_with_fake_judge
from voxbench.audio.wav import Audio, read_wav
from voxbench.fullduplex.sample_context import ScoringContext
from voxbench.fullduplex.scoring import score_directory
from voxbench.fullduplex.summary import write_csv
from voxbench.fullduplex.transcripts import TranscriptStore


def _by_sample(report) -> dict:
    return {s.sample: s for s in report.scores}


def _no_asr() -> TranscriptStore:
    # Tests that must not transcribe: any attempt fails loudly.
    return TranscriptStore("local/none-such", write=False)


def test_fdb_v1_reproduces_the_published_example_values(fdb_examples: Path) -> None:
    report = score_directory(fdb_examples, mode="fdb-v1", transcripts=_no_asr())
    scores = _by_sample(report)
    pause = scores["pause_handling_example/1"]
    turn = scores["smooth_turn_taking_example/1"]
    interruption = scores["user_interruption_example/1"]
    assert all(s.error is None for s in scores.values())
    assert pause.metrics["tor"] == 1
    assert turn.metrics["tor"] == 1
    assert turn.metrics["latency"] == pytest.approx(1.35, abs=0.01)
    assert interruption.metrics["tor"] == 1
    assert interruption.metrics["latency"] == pytest.approx(4.08, abs=0.01)
    # No judge configured: the stored public rating is reported, and said to be stored.
    assert interruption.metrics["relevance"] == 4
    assert any("stored rating.json" in n for n in interruption.notes)
    rows = {(r["category"], r["subset"]): r for r in report.summary["rows"]}
    assert rows[("smooth_turn_taking", "smooth_turn_taking_example")]["metrics"]["latency"][
        "p50"
    ] == pytest.approx(1.35, abs=0.01)
    assert (fdb_examples / "fdb_summary_fdb-v1.json").is_file()


def _sample(
    root: Path, name: str, annotation: tuple[str, object], chunks: Sequence[tuple[float, float]]
) -> Path:
    folder = root / name / "1"
    folder.mkdir(parents=True)
    (folder / annotation[0]).write_text(json.dumps(annotation[1]))
    data = {
        "text": "",
        "chunks": [{"text": f"w{i}", "timestamp": list(c)} for i, c in enumerate(chunks)],
    }
    (folder / "output.json").write_text(json.dumps(data))
    return folder


def test_voxbench_mode_counts_only_the_annotated_window(tmp_path: Path) -> None:
    # The model talks over the start of the clip (before the pause), then stays silent.
    _sample(
        tmp_path, "synthetic_pause_handling",
        ("pause.json", [{"text": "[PAUSE]", "timestamp": [3.0, 4.0]}]),
        [(0.2, 0.5), (0.5, 0.8), (0.8, 1.1), (1.1, 1.4), (1.4, 1.7)],
    )  # fmt: skip
    v1 = _by_sample(score_directory(tmp_path, mode="fdb-v1", transcripts=_no_asr()))
    vb = _by_sample(score_directory(tmp_path, mode="voxbench", transcripts=_no_asr()))
    key = "synthetic_pause_handling/1"
    assert v1[key].metrics["tor"] == 1
    assert vb[key].metrics["tor"] == 0


def test_voxbench_mode_shows_talking_over_as_negative_latency(tmp_path: Path) -> None:
    # The answer starts 0.4 s before the user's turn ends.
    _sample(
        tmp_path, "candor_turn_taking",
        ("turn_taking.json", [{"text": "[TURN-TAKING]", "timestamp": [2.0, 2.4]}]),
        [(1.6, 1.9), (1.9, 2.2), (2.2, 2.6), (2.6, 3.0)],
    )  # fmt: skip
    v1 = _by_sample(score_directory(tmp_path, mode="fdb-v1", transcripts=_no_asr()))
    vb = _by_sample(score_directory(tmp_path, mode="voxbench", transcripts=_no_asr()))
    key = "candor_turn_taking/1"
    assert v1[key].metrics["latency"] == 0.0
    assert vb[key].metrics["latency"] == pytest.approx(-0.4)
    summary = score_directory(tmp_path, mode="voxbench", transcripts=_no_asr()).summary
    assert summary["rows"][0]["metrics"]["latency"]["p50"] == pytest.approx(-0.4)
    assert any("not clamped" in line for line in summary["method"])


def test_public_vad_assumes_16k_and_voxbench_passes_the_rate(
    mini_outputs: Path, corpus_times: dict
) -> None:
    out = read_wav(mini_outputs / "v1_0/icc_backchannel/0/output.wav")
    assert out.sample_rate == 24_000
    true = ScoringContext.segments_true(out)
    public = ScoringContext.segments_public(out)
    expected = corpus_times["v1_0/icc_backchannel/0"]["pause1"] + 0.1
    assert true[0][0] == pytest.approx(expected, abs=0.1)
    assert public[0][0] == pytest.approx(expected * 1.5, abs=0.15)


EXPECTED = {
    "fdb-v1": {
        "pause_handling": {"tor"},
        "smooth_turn_taking": {"tor", "latency"},
        "user_interruption": {"tor", "latency", "relevance"},
        "backchannel": {"tor", "frequency", "jsd"},
    },
    "voxbench": {
        "pause_handling": {"tor"},
        "smooth_turn_taking": {"tor", "latency"},
        "user_interruption": {"tor", "latency", "relevance", "stop_latency"},
        "backchannel": {"tor", "frequency", "jsd", "no_backchannel"},
        "behavior": {
            "stop_latency",
            "response_latency",
            "respond",
            "resume",
            "uncertain",
            "unknown",
        },
    },
}


@pytest.mark.parametrize("mode", ["fdb-v1", "voxbench"])
def test_mini_corpus_produces_every_metric(mini_outputs: Path, mode: str, tmp_path: Path) -> None:
    report = score_with_fake_judge(mini_outputs, mode)
    assert all(s.error is None for s in report.scores), [s.error for s in report.scores]
    for row in report.summary["rows"]:
        expected = EXPECTED[mode][row["category"]]
        computed = {m for m, stats in row["metrics"].items() if stats["n"] > 0}
        assert expected <= computed, (row["category"], row["subset"], computed)
        assert row["target"] == "test/model"
    assert {r["category"] for r in report.summary["rows"]} == set(EXPECTED[mode])
    subsets = {(r["category"], r["subset"]) for r in report.summary["rows"]}
    assert ("pause_handling", "all") in subsets  # two pause subsets pooled
    assert report.summary["judge"]["name"] == "openai-compatible/judge-model"
    if mode == "voxbench":
        behavior = [r for r in report.summary["rows"] if r["category"] == "behavior"]
        assert all(r["metrics"]["resume"]["mean"] == 1.0 for r in behavior)
        # The backchannels of the scripted model are found at the true rate.
        bc_row = next(r for r in report.summary["rows"] if r["category"] == "backchannel")
        assert bc_row["metrics"]["tor"]["mean"] == 0.0
        assert bc_row["metrics"]["no_backchannel"]["mean"] == 0.0
        # The judge's answer is kept under fdb_derived/, never in the sample folder.
        sample = "v1_0/synthetic_user_interruption/1"
        assert not (mini_outputs / sample / "judge_relevance.json").exists()
        relevance = json.loads(
            (mini_outputs / "fdb_derived" / sample / "judge_relevance.json").read_text()
        )
        assert relevance["rating"] == 5 and relevance["judge"] == "openai-compatible/judge-model"
    else:
        assert "v1.5 overlap sample(s) not scored" in report.summary["notes"][0]
    path = tmp_path / "summary.csv"
    write_csv(report.summary, path)
    lines = list(csv.DictReader(path.open()))
    assert len(lines) == len(report.summary["rows"])
    assert "latency_p90" in lines[0] and "tor_mean" in lines[0]


def test_without_a_judge_relevance_is_not_invented(mini_outputs: Path) -> None:
    report = score_directory(
        mini_outputs / "v1_0" / "synthetic_user_interruption", mode="fdb-v1", transcripts=_no_asr()
    )
    (score,) = report.scores
    assert score.metrics["relevance"] is None
    assert any("no judge configured" in n for n in score.notes)
    assert report.summary["rows"][0]["metrics"]["relevance"]["n"] == 0


def test_a_bad_sample_is_an_error_row_not_a_crash(mini_outputs: Path) -> None:
    (mini_outputs / "v1_0/candor_turn_taking/1/turn_taking.json").write_text('[{"timestamp": "x"}]')
    report = score_directory(mini_outputs / "v1_0", mode="fdb-v1", transcripts=_no_asr())
    bad = _by_sample(report)["candor_turn_taking/1"]
    assert "turn_taking.json" in bad.error and "timestamp" in bad.error
    row = next(r for r in report.summary["rows"] if r["category"] == "smooth_turn_taking")
    assert row["errors"] == 1
    assert _by_sample(report)["synthetic_pause_handling/1"].error is None


def test_missing_output_json_is_transcribed_and_written(mini_outputs: Path) -> None:
    folder = mini_outputs / "v1_0" / "candor_turn_taking" / "1"
    (folder / "output.json").unlink()
    report = score_directory(folder.parent, mode="fdb-v1")
    # Kept apart from the sample folder, under the results directory (the scored one here).
    derived = folder.parent / "fdb_derived" / "1" / "output.json"
    written = json.loads(derived.read_text())
    assert report.transcribed == [derived] and not (folder / "output.json").exists()
    assert written["voxbench"]["asr"] == "local/whisper-tiny.en"
    assert report.summary["asr"] == "local/whisper-tiny.en"
    assert len(written["chunks"]) >= 4 and "blue" in written["text"].lower()
    (score,) = report.scores
    assert score.metrics["tor"] == 1
    assert 0.3 < score.metrics["latency"] < 1.2  # the answer starts 0.6 s after the turn end


def test_interruption_transcribes_only_after_the_interrupt_in_fdb_v1(tmp_path: Path) -> None:
    from tests.fullduplex.minicorpus import Track
    from voxbench.audio.transcript import Transcript, Word
    from voxbench.audio.wav import write_wav

    class Recorder:
        """An ASR engine that notes what it was given and finds four words from 0.2 s in."""

        name = "test/recorder"

        def __init__(self) -> None:
            self.slices: list[float] = []

        def transcribe(self, audio: Audio) -> Transcript:
            self.slices.append(audio.duration)
            words = tuple(
                Word(w, 0.2 + 0.3 * i, 0.5 + 0.3 * i)
                for i, w in enumerate(["and", "this", "is", "it"])
            )
            return Transcript("and this is it", words)

    folder = tmp_path / "synthetic_user_interruption" / "1"
    folder.mkdir(parents=True)
    (folder / "interrupt.json").write_text(
        json.dumps([{"context": "a", "interrupt": "b", "timestamp": [3.0, 4.0]}])
    )
    track = Track(10.0)
    track.say("this is what I said before", 0.5)  # before the interrupt ends: never heard
    start, end = track.say("and this is the answer", 6.0)
    write_wav(folder / "output.wav", track.audio())
    asr = Recorder()
    report = score_directory(tmp_path, mode="fdb-v1", transcripts=TranscriptStore(asr))
    # One speech region after the interrupt end, with a little context around it.
    assert len(asr.slices) == 1 and asr.slices[0] < 6.0
    assert asr.slices[0] == pytest.approx(end - start + 0.4, abs=0.15)
    assert not (folder / "output.json").exists()  # the corpus is never written
    derived = tmp_path / "fdb_derived" / "synthetic_user_interruption" / "1" / "output.json"
    chunk = json.loads(derived.read_text())["chunks"][0]
    assert chunk["timestamp"][0] == pytest.approx(start - 0.2 + 0.2, abs=0.1)
    assert report.scores[0].metrics["latency"] == pytest.approx(chunk["timestamp"][0] - 4.0)
