"""The seeds' fdb runner, matched: stage timings, fdb_report.md, --category/--limit, --csv -,
the metadata mode, the closing line, and scoring that never writes into the corpus."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from voxbench.audio.transcript import Transcript, Word
from voxbench.audio.wav import Audio, write_wav
from voxbench.core.errors import ConfigError
from voxbench.fullduplex.corpus import scan_corpus
from voxbench.fullduplex.driver import select_samples
from voxbench.fullduplex.scoring import score_directory
from voxbench.fullduplex.timings import run_totals, stage_timings
from voxbench.fullduplex.transcripts import TranscriptStore

TONE = "tests.fullduplex.tone_session:ToneSession"


def _record(target: str, category: str, *, stt: list[float], ttft: list[float], wall: float,
            status: str = "completed", errors: list[str] | None = None) -> dict:  # fmt: skip
    return {
        "target": target,
        "category": category,
        "status": status,
        "wall_s": wall,
        "streams": [
            {
                "clock": "virtual",
                "errors": errors or [],
                "stage_timings": [{"stage": "stt", "seconds": s} for s in stt]
                + [{"stage": "llm_first_token", "seconds": 0.5}],
                "responses": [
                    {"end_of_turn": 1.0, "first_audio": 1.0, "processing_s": t} for t in ttft
                ],  # fmt: skip
            }
        ],
    }


def test_stage_timings_are_bucketed_by_target_and_category_without_errored_samples() -> None:
    records = [
        _record("a/cascade", "pause_handling", stt=[0.1, 0.3], ttft=[1.0], wall=4.0),
        _record("a/cascade", "pause_handling", stt=[0.2], ttft=[2.0, 3.0], wall=6.0),
        # errored: its times are left out, and counted
        _record(
            "a/cascade",
            "pause_handling",
            stt=[9.0],
            ttft=[9.0],
            wall=99.0,
            errors=["server_error: boom"],
        ),  # fmt: skip
        _record("a/cascade", "smooth_turn_taking", stt=[0.4], ttft=[0.8], wall=2.0),
        _record("b/realtime", "pause_handling", stt=[], ttft=[0.6], wall=3.0, status="failed"),
    ]
    rows = {(r["target"], r["category"]): r for r in stage_timings(records)}
    pause = rows[("a/cascade", "pause_handling")]
    assert (pause["samples"], pause["errored_excluded"]) == (2, 1)
    assert list(pause["stages"]) == ["stt", "llm", "ttft", "total"]
    stt = pause["stages"]["stt"]
    # numpy's linear percentiles of [0.1, 0.2, 0.3]: p50 0.2, p90 0.28, p99 0.298
    assert (stt["n"], stt["p50"], stt["p90"], stt["p99"]) == (3, 0.2, 0.28, 0.298)
    ttft = pause["stages"]["ttft"]  # [1, 2, 3] → p50 2, p90 2.8, p99 2.98
    assert (ttft["p50"], ttft["p90"], ttft["p99"]) == (2.0, 2.8, 2.98)
    assert pause["stages"]["total"]["p50"] == 5.0  # [4, 6]
    assert rows[("a/cascade", "smooth_turn_taking")]["stages"]["stt"]["p50"] == 0.4
    failed = rows[("b/realtime", "pause_handling")]
    assert (failed["samples"], failed["errored_excluded"], failed["stages"]) == (0, 1, {})
    totals = run_totals(records)
    # ok: 3 samples; errors: 2; TTFT mean over the ok samples' responses: (1+2+3+0.8)/4
    assert (totals.ok, totals.errors) == (3, 2)
    assert totals.average_ttft == pytest.approx(6.8 / 4)
    assert totals.line() == "samples ok: 3 · errors: 2 · average TTFT: 1.700 s"


def test_select_samples_by_category_or_subset_with_a_limit_per_category(mini_corpus: Path) -> None:
    samples = scan_corpus(mini_corpus).samples
    pause = select_samples(samples, ["pause_handling"])
    assert [s.subset for s in pause] == ["candor_pause_handling", "synthetic_pause_handling"]
    assert [s.subset for s in select_samples(samples, ["candor_pause_handling"])] == [
        "candor_pause_handling"
    ]
    one_each = select_samples(samples, ["pause_handling", "behavior"], limit=1)
    assert [(s.category, s.subset) for s in one_each] == [
        ("pause_handling", "candor_pause_handling"),  # v1_0/ comes before v1_5/
        ("behavior", "background_speech"),
    ]
    assert len(select_samples(samples, limit=1)) == 5  # one of each of the five categories
    with pytest.raises(ConfigError, match="unknown category 'pauses'"):
        select_samples(samples, ["pauses"])
    with pytest.raises(ConfigError, match="at least 1"):
        select_samples(samples, limit=0)


def test_run_with_category_and_limit_prints_timings_and_the_closing_line(
    monkeypatch, capsys, mini_corpus: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "run"
    code, out, err = invoke(
        monkeypatch, capsys, "fdb", "run", str(mini_corpus), "--target", TONE, "--virtual",
        "--out", str(out_dir), "--category", "pause_handling", "--category", "smooth_turn_taking",
        "--limit", "1", "--option", "delay=0.05",
    )  # fmt: skip
    assert code == 0, out + err
    assert "completed 2" in out
    driven = sorted(p.parent.relative_to(out_dir).as_posix() for p in out_dir.rglob("output.wav"))
    assert driven == ["v1_0/candor_pause_handling/1", "v1_0/candor_turn_taking/1"]
    assert "stage timings" in out and "ttft" in out and "total" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("samples ok: 2 · errors: 0 · average TTFT: ")
    assert last.endswith(" s")  # the tone target answered, so there is a TTFT
    record = json.loads((out_dir / driven[0] / "voxbench_fdb.json").read_text())
    assert record["wall_s"] > 0

    code, out, err = invoke(
        monkeypatch, capsys, "fdb", "run", str(mini_corpus), "--target", TONE, "--virtual",
        "--category", "pausing",
    )  # fmt: skip
    assert code == 2 and "unknown category 'pausing'" in err and "--category" in err


def test_score_writes_timings_and_a_report_beside_the_summary(
    monkeypatch, capsys, mini_corpus: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "run"
    code, out, err = invoke(
        monkeypatch, capsys, "fdb", "run", str(mini_corpus / "v1_0" / "candor_turn_taking"),
        "--target", TONE, "--virtual", "--out", str(out_dir), "--option", "delay=0.05",
    )  # fmt: skip
    assert code == 0, out + err
    # The tone has no words for Whisper; the metadata mode scores from an ASR file we give.
    (out_dir / "1" / "output.json").write_text(
        json.dumps({"text": "a b c d", "chunks": [
            {"text": w, "timestamp": [3.0 + i * 0.3, 3.2 + i * 0.3]} for i, w in enumerate("abcd")
        ]})
    )  # fmt: skip
    code, out, err = invoke(monkeypatch, capsys, "fdb", "score", str(out_dir), "--no-asr")
    assert code == 0, out + err
    summary = json.loads((out_dir / "fdb_summary_fdb-v1.json").read_text())
    (timing,) = summary["stage_timings"]
    assert (timing["target"], timing["category"], timing["samples"]) == (
        TONE,
        "smooth_turn_taking",
        1,
    )
    assert {"ttft", "total"} <= set(timing["stages"])
    assert set(timing["stages"]["ttft"]) == {"n", "mean", "p50", "p90", "p99"}
    report = (out_dir / "fdb_report.md").read_text()
    assert "## fdb-v1 mode" in report and "### smooth_turn_taking" in report
    assert "### Stage timings" in report and f"| {TONE} | smooth_turn_taking |" in report
    assert "ASR: none ran" in report
    assert "stage timings" in out  # printed too
    assert out.strip().splitlines()[-1].startswith("samples ok: 1 · errors: 0 · average TTFT:")
    # A second mode adds its section to the same report.
    code, out, err = invoke(
        monkeypatch, capsys, "fdb", "score", str(out_dir), "--no-asr", "--mode", "voxbench"
    )
    assert code == 0, out + err
    report = (out_dir / "fdb_report.md").read_text()
    assert "## fdb-v1 mode" in report and "## voxbench mode" in report


def test_csv_dash_writes_only_csv_to_stdout(monkeypatch, capsys, mini_outputs: Path) -> None:
    turn = mini_outputs / "v1_0" / "candor_turn_taking"
    code, out, err = invoke(monkeypatch, capsys, "fdb", "score", str(turn), "--csv", "-")
    assert code == 0, out + err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert out.startswith("mode,target,category,subset")
    assert [(r["mode"], r["category"]) for r in rows] == [("fdb-v1", "smooth_turn_taking")]
    assert float(rows[0]["tor_mean"]) == 1.0
    # Progress, the table and the closing line went to stderr.
    assert "score (fdb-v1)" in err and "samples ok: 1" in err and "smooth_turn_taking" in err

    code, out, err = invoke(monkeypatch, capsys, "fdb", "score", str(turn), "--csv", "-", "--json")
    assert code == 2 and "both write to stdout" in err


def test_metadata_mode_never_transcribes(monkeypatch, capsys, mini_outputs: Path) -> None:
    turn = mini_outputs / "v1_0" / "candor_turn_taking"
    (turn / "1" / "output.json").unlink()  # only output.wav is left: ASR would be needed
    code, out, err = invoke(
        monkeypatch, capsys, "fdb", "score", str(mini_outputs / "v1_0"), "--no-asr", "--json"
    )
    assert code == 4, out + err  # that sample could not be scored; the others were
    summary = json.loads(out)
    assert summary["asr"] is None and summary["transcribed"] == 0
    assert "candor_turn_taking/1" in err and "metadata mode" in err
    assert "no ASR ran" in err
    assert not list(mini_outputs.rglob("fdb_derived/**/output.json"))
    rows = {r["category"]: r for r in summary["rows"]}
    assert rows["smooth_turn_taking"]["errors"] == 1
    assert rows["pause_handling"]["errors"] == 0


def test_asr_is_named_only_when_it_ran(mini_outputs: Path) -> None:
    report = score_directory(
        mini_outputs / "v1_0" / "candor_turn_taking",
        transcripts=TranscriptStore("local/none-such"),  # would fail if it were ever used
    )
    assert report.summary["asr"] is None and report.transcribed == []


class _Recorder:
    """An ASR engine that counts its calls and hears four words at the start of each slice."""

    name = "test/recorder"

    def __init__(self) -> None:
        self.calls = 0

    def transcribe(self, audio: Audio) -> Transcript:
        self.calls += 1
        words = tuple(Word(w, 0.2 + 0.3 * i, 0.45 + 0.3 * i) for i, w in enumerate("abcd"))
        return Transcript("a b c d", words)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_voxbench_mode_never_writes_into_the_corpus(tmp_path: Path) -> None:
    from tests.fullduplex.minicorpus import Track

    corpus = tmp_path / "corpus"
    folder = corpus / "synthetic_user_interruption" / "1"
    folder.mkdir(parents=True)
    (folder / "interrupt.json").write_text(
        json.dumps([{"context": "a", "interrupt": "b", "timestamp": [3.0, 4.0]}])
    )
    track = Track(10.0)
    track.say("and this is the answer", 5.0)
    write_wav(folder / "output.wav", track.audio())
    before = _files(corpus)
    results = tmp_path / "results"
    asr = _Recorder()
    report = score_directory(
        corpus, mode="voxbench", transcripts=TranscriptStore(asr), results_dir=results
    )
    assert _files(corpus) == before  # not one file added or changed in the corpus
    derived = results / "fdb_derived" / "synthetic_user_interruption" / "1" / "output_full.json"
    assert report.transcribed == [derived]
    assert json.loads(derived.read_text())["voxbench"]["asr"] == "test/recorder"
    assert report.summary["asr"] == "test/recorder" and report.summary["transcribed"] == 1
    assert (results / "fdb_summary_voxbench.json").is_file()
    assert (results / "fdb_report.md").is_file()
    assert report.scores[0].metrics["tor"] == 1

    # Scored again: the derived transcript is reused (it was made from this very wav) ...
    calls = asr.calls
    again = score_directory(
        corpus, mode="voxbench", transcripts=TranscriptStore(asr), results_dir=results
    )
    assert asr.calls == calls and again.transcribed == []
    assert again.summary["asr"] == "test/recorder"  # the words still came from that engine
    # ... until the output changes: then it is transcribed anew.
    other = Track(10.0)
    other.say("another answer entirely", 5.5)
    write_wav(folder / "output.wav", other.audio())
    third = score_directory(
        corpus, mode="voxbench", transcripts=TranscriptStore(asr), results_dir=results
    )
    assert third.transcribed == [derived] and asr.calls > calls


def test_metadata_mode_reproduces_the_public_examples(
    monkeypatch, capsys, fdb_examples: Path
) -> None:
    code, out, err = invoke(
        monkeypatch, capsys, "fdb", "score", str(fdb_examples), "--no-asr", "--json"
    )
    assert code == 0, err
    summary = json.loads(out)
    rows = {r["category"]: r for r in summary["rows"]}
    assert rows["smooth_turn_taking"]["metrics"]["latency"]["mean"] == pytest.approx(1.35, abs=0.01)
    assert rows["user_interruption"]["metrics"]["latency"]["mean"] == pytest.approx(4.08, abs=0.01)
    assert summary["asr"] is None
    assert (fdb_examples / "fdb_report.md").is_file()


def test_derived_files_inside_the_scored_directory_are_not_samples(tmp_path: Path) -> None:
    from tests.fullduplex.minicorpus import Track

    folder = tmp_path / "candor_turn_taking" / "1"
    folder.mkdir(parents=True)
    (folder / "turn_taking.json").write_text(
        json.dumps([{"text": "[TURN-TAKING]", "timestamp": [2.0, 2.4]}])
    )
    track = Track(6.0)
    track.say("an answer", 3.0)
    write_wav(folder / "output.wav", track.audio())
    asr = _Recorder()
    first = score_directory(tmp_path, transcripts=TranscriptStore(asr))
    assert first.transcribed == [
        tmp_path / "fdb_derived" / "candor_turn_taking" / "1" / "output.json"
    ]
    second = score_directory(tmp_path, transcripts=TranscriptStore(asr))
    assert [s.sample for s in second.scores] == ["candor_turn_taking/1"]
    assert second.transcribed == [] and asr.calls == 1
