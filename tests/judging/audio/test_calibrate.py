"""``voxbench judge-audio calibrate``: the eSpeak NG labelled sets and the agreement report,
against the fake realtime judge."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.cli_invoke import invoke
from voxbench.audio.wav import read_wav, write_wav
from voxbench.core.errors import ConfigError
from voxbench.judging.audio.calibrate import calibrate, load_labelled_set
from voxbench.judging.audio.chat_judge import ChatAudioJudge
from voxbench.judging.audio.engine import RubricJudge
from voxbench.judging.audio.labelled_set import ensure_labelled_set, sets_dir
from voxbench.judging.audio.realtime_judge import pcm24k
from voxbench.judging.audio.rubric import parse_rubric
from voxbench.testing import FakeOpenAIServer
from voxbench.testing.audio_judge import Heard, ScriptedAudioJudge, form_answer

from .helpers import accent, spoken
from .test_run_judge import realtime_judge_server


def knowing_judge(
    folder: Path, wrong: dict[str, int], *, hears_silence: bool = True
) -> ScriptedAudioJudge:
    """A fake that recognises each file by its length and answers its label — except the
    files in ``wrong``, which it scores so on every second sample (a judge that wavers).
    It hears silence as silence (scores 1), unless ``hears_silence`` is off: then it goes by
    the length alone — a judge that answers without listening."""
    labelled = load_labelled_set(folder)
    by_length: dict[int, tuple[str, int]] = {}
    for item in labelled.items:
        samples = len(pcm24k(read_wav(item.file))) // 2  # what the judge hears, at 24 kHz
        by_length[samples] = (item.file.name, item.expected["score"])
    calls: dict[str, int] = {}

    def answer(heard: Heard) -> str:
        if hears_silence and not np.any(np.abs(heard.audio) > 1e-4):
            return form_answer({"accent": 1}, "no speech at all")
        name, label = by_length[len(heard.audio)]
        calls[name] = calls.get(name, 0) + 1
        score = wrong[name] if name in wrong and calls[name] % 2 == 0 else label
        return form_answer({"accent": score}, f"{name}")

    return ScriptedAudioJudge([answer])


def test_the_accent_set_is_generated_once_and_cached() -> None:
    folder = ensure_labelled_set("accents")
    assert folder.parent == sets_dir()
    manifest = yaml.safe_load((folder / "manifest.yaml").read_text())
    assert manifest["rubric"] == "accent" and len(manifest["items"]) == 15
    assert {i["voice"] for i in manifest["items"]} == {
        "en-gb-x-rp", "en-gb", "en-gb-scotland", "en-029", "en-us"
    }  # fmt: skip
    rates = yaml.safe_load((ensure_labelled_set("rates") / "manifest.yaml").read_text())
    assert rates["rubric"] == "pace" and {i["wpm"] for i in rates["items"]} == {80, 170, 260, 400}
    stamp = (folder / "manifest.yaml").stat().st_mtime_ns
    assert ensure_labelled_set("accents") == folder
    assert (folder / "manifest.yaml").stat().st_mtime_ns == stamp


def test_calibrate_reports_agreement_confusion_and_test_retest(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    folder = ensure_labelled_set("accents")
    lengths = {len(pcm24k(read_wav(p))) for p in folder.glob("*.wav")}
    assert len(lengths) == 15  # the fake tells files apart by length
    wrong = {"en-us_1.wav": 2, "en-gb_2.wav": 5, "en-029_3.wav": 3}
    with realtime_judge_server(knowing_judge(folder, wrong)) as server:
        args = ["judge-audio", "calibrate", "accent", "accents", "--judge",
                "openai-realtime/gpt-realtime", "--judge-base-url", server.url]  # fmt: skip
        code, out, err = invoke(monkeypatch, capsys, *args, "--html", str(tmp_path / "c.html"))
        assert code == 0, err
        code, raw, err = invoke(monkeypatch, capsys, *args, "--json")
    assert "accuracy" in out and "Spearman rho" in out and "test-retest" in out
    report = json.loads(raw)
    accent_stats = report["criteria"]["accent"]
    assert accent_stats["files"] == 15 and accent_stats["undecided"] == 0
    # Three files average half-way between label and wrong score: .5 rounds up.
    assert accent_stats["accuracy"] == pytest.approx(12 / 15, abs=1e-3)
    assert accent_stats["within_one"] == 1.0
    rho = accent_stats["spearman"]
    assert rho["value"] > 0.9 and rho["ci95"][0] <= rho["value"] <= rho["ci95"][1]
    assert accent_stats["kendall"]["value"] > 0.8
    matrix = accent_stats["confusion"]["rows_expected"]
    assert sum(map(sum, matrix)) == 15 and sum(matrix[i][i] for i in range(5)) == 12
    retest = accent_stats["test_retest"]
    assert retest["files"] == 15 and retest["exact_agreement"] == pytest.approx(12 / 15)
    assert report["samples"] == 2 and report["rubric"] == "accent"
    # It listens: silence is scored apart, and it beats a shuffled judge.
    assert report["verdict"] == "listens" and report["warnings"] == []
    # Silence scores 1: the same as the audio only for the American files it judged 1 (two;
    # en-us_1.wav averages 1.5 and rounds to 2).
    assert report["controls"]["silence"]["accent"]["same_as_audio"] == pytest.approx(
        2 / 15, abs=1e-3
    )
    baseline = accent_stats["baseline"]
    assert baseline["majority_accuracy"] == pytest.approx(3 / 15) and baseline["p_value"] < 0.01
    low, high = accent_stats["accuracy_ci95"]
    assert low < 12 / 15 < high
    assert "verdict: listens" in out and "calls made" in out
    # Chance-corrected agreement, each with its bootstrap interval.
    for key in ("kappa", "kappa_quadratic", "alpha_ordinal", "alpha_interval"):
        stat = accent_stats[key]
        assert stat["ci95"][0] <= stat["value"] <= stat["ci95"][1], key
    assert accent_stats["kappa_quadratic"]["value"] > 0.9
    assert accent_stats["alpha_ordinal"]["value"] > 0.9
    # Both baselines, each with a p-value: the constant answer (exact binomial) and the
    # shuffled labels (seeded permutations of the primary statistic, quadratic κ).
    assert baseline["majority_p_value"] < 0.001 and baseline["primary"] == "kappa_quadratic"
    assert abs(baseline["shuffled_kappa_quadratic"]) < 0.2
    assert baseline["shuffled_accuracy_p_value"] < 0.01
    # The shuffled-audio control: its scores follow the other clip's audio.
    shuffled = report["controls"]["shuffled_audio"]["accent"]
    assert shuffled["same_as_audio"] == 0.0 and shuffled["follows_donor"] == 1.0
    assert report["passed"] is True
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "listens" in page and "Krippendorff" in page and "shuffled_audio" in page
    assert "<script src" not in page and "http://" not in page.split("<footer>")[0]


CALIBRATE = ["judge-audio", "calibrate", "accent", "accents", "--judge",
             "openai-realtime/gpt-realtime", "--judge-base-url"]  # fmt: skip


def test_an_always_three_judge_does_not_listen(monkeypatch, capsys) -> None:
    """Issue 28, defect 2: within-one looks fine, but it gives every file 3."""
    with realtime_judge_server(ScriptedAudioJudge([form_answer({"accent": 3})])) as server:
        code, raw, err = invoke(monkeypatch, capsys, *CALIBRATE, server.url, "--json")
        assert code == 0, err
        code, out, err = invoke(monkeypatch, capsys, *CALIBRATE, server.url)
    report = json.loads(raw)
    assert report["verdict"] == "does not listen"
    assert any("gave every file 3" in w for w in report["warnings"])
    assert any("turned to silence" in w for w in report["warnings"])
    assert report["criteria"]["accent"]["baseline"]["p_value"] == 1.0
    assert report["criteria"]["accent"]["kappa_quadratic"]["value"] == 0.0
    # Every control catches it.
    for control in ("silence", "shuffled_audio"):
        assert report["controls"][control]["accent"]["same_as_audio"] == 1.0
    assert any("another clip's audio" in w for w in report["warnings"])
    assert report["passed"] is False
    assert "WARNING" in out and "does not listen" in out


def test_a_judge_that_scores_silence_like_speech_does_not_listen(monkeypatch, capsys) -> None:
    """It answers each file's label from something other than the sound (here its length):
    agreement is perfect, and only the silent-audio control catches it."""
    folder = ensure_labelled_set("accents")
    with realtime_judge_server(knowing_judge(folder, {}, hears_silence=False)) as server:
        code, raw, err = invoke(monkeypatch, capsys, *CALIBRATE, server.url, "--json",
                                "--samples", "1")  # fmt: skip
    assert code == 0, err
    report = json.loads(raw)
    assert report["criteria"]["accent"]["accuracy"] == 1.0
    assert report["controls"]["silence"]["accent"]["same_as_audio"] == 1.0
    assert report["verdict"] == "does not listen"
    # 15 clips and 15 silent controls; the shuffled-audio controls are the same requests as
    # the real clips (no transcript), served from the cache.
    assert report["calls"] == 30 and report["from_cache"] == 15


def test_a_bad_manifest_names_its_field(tmp_path: Path) -> None:
    (tmp_path / "a.wav").write_bytes(b"")
    (tmp_path / "manifest.yaml").write_text(
        "items:\n  - file: a.wav\n    expected: high\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"items\[0\]\.expected"):
        load_labelled_set(tmp_path, accent())
    (tmp_path / "manifest.yaml").write_text("items:\n  - file: b.wav\n    expected: 3\n")
    with pytest.raises(ConfigError, match=r"items\[0\]\.file: file not found"):
        load_labelled_set(tmp_path, accent())


TRANSCRIBED = """\
name: accent_with_text
description: Rate how British the speaker sounds.
needs_transcript: true
steps: [Listen., Score.]
criteria:
  - name: accent
    description: 5 clearly British; 1 not British at all.
"""


async def test_a_judge_that_reads_only_the_transcript_does_not_listen(tmp_path: Path) -> None:
    """It scores from the transcript it is given (which names the accent) and never from
    the sound: the same score on silence with the same transcript gives it away."""
    items = []
    for i, (voice, label) in enumerate(
        [("en-gb", 5), ("en-gb-x-rp", 5), ("en-us", 1), ("en-029", 1)]
    ):
        name = f"{voice}_{i}.wav"
        write_wav(tmp_path / name, spoken(voice=voice))
        said = "a British speaker" if label == 5 else "an American speaker"
        items.append({"file": name, "expected": label, "transcript": said})
    (tmp_path / "manifest.yaml").write_text(yaml.safe_dump({"items": items}), encoding="utf-8")

    def reads_the_transcript(heard: Heard) -> str:
        return form_answer({"accent": 5 if "British" in heard.text else 1}, "from the text")

    bound = parse_rubric(TRANSCRIBED, source="r.yaml").bind({})
    async with FakeOpenAIServer(ScriptedAudioJudge([reads_the_transcript])) as server:
        client = ChatAudioJudge.create("openai/gpt-4o-audio-preview", base_url=server.url)
        report = await calibrate(RubricJudge(client, bound), load_labelled_set(tmp_path, bound))
    assert report["criteria"]["accent"]["accuracy"] == 1.0  # perfect agreement …
    assert report["verdict"] == "does not listen"  # … without listening
    # Silence without the transcript reads nothing British: the same only on the 1s.
    assert report["controls"]["silence"]["accent"]["same_as_audio"] == 0.5
    assert report["controls"]["transcript"]["accent"]["same_as_audio"] == 1.0
    assert report["controls"]["shuffled_audio"]["accent"]["same_as_audio"] == 1.0
    assert any("the transcript alone" in w for w in report["warnings"])
