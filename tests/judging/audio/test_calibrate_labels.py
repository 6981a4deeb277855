"""Calibration against human ratings from a CSV (the raters' agreement as the ceiling),
class labels, and two judges compared."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from voxbench.core.errors import ConfigError
from voxbench.judging.audio.labelled_set import ensure_labelled_set
from voxbench.judging.audio.labels import load_labelled_set, parse_classes
from voxbench.testing.audio_judge import ScriptedAudioJudge, form_answer

from .helpers import accent
from .test_calibrate import knowing_judge
from .test_run_judge import realtime_judge_server

JUDGE = ["--judge", "openai-realtime/gpt-realtime"]


def rated_copy(tmp_path: Path, labels: dict[str, list[str]]) -> tuple[Path, Path]:
    """The accent set's clips in a folder of their own (no manifest) and a CSV of ratings:
    ``labels`` maps a voice to each rater's label for its three clips."""
    folder = ensure_labelled_set("accents")
    clips = tmp_path / "clips"
    clips.mkdir()
    rows = ["clip,criterion,label,rater"]
    for wav in sorted(folder.glob("*.wav")):
        shutil.copy(wav, clips / wav.name)
        voice = wav.name.rsplit("_", 1)[0]
        for rater, label in zip(("ann", "bob", "cy"), labels[voice], strict=True):
            rows.append(f"{wav.name},,{label},{rater}")
    csv = tmp_path / "ratings.csv"
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return clips, csv


def test_ratings_give_a_consensus_label_per_clip(tmp_path: Path) -> None:
    labels = {"en-gb-x-rp": ["5", "5", "4"], "en-gb": ["4", "5", "4"],
              "en-gb-scotland": ["3", "2", "4"], "en-029": ["2", "1", "2"],
              "en-us": ["1", "1", "2"]}  # fmt: skip
    clips, csv = rated_copy(tmp_path, labels)
    labelled = load_labelled_set(clips, accent(), labels_csv=csv)
    assert labelled.raters == ["ann", "bob", "cy"] and len(labelled.items) == 15
    by_name = {i.file.name: i for i in labelled.items}
    assert by_name["en-gb-x-rp_1.wav"].expected == {"accent": 5}  # median of 5, 5, 4
    assert by_name["en-gb-scotland_2.wav"].expected == {"accent": 3}  # median of 3, 2, 4
    assert by_name["en-us_3.wav"].ratings == {"accent": {"ann": 1, "bob": 1, "cy": 2}}


def test_a_bad_ratings_csv_names_file_and_line(tmp_path: Path) -> None:
    clips, csv = rated_copy(tmp_path, {v: ["1", "1", "1"] for v in
                                       ("en-gb-x-rp", "en-gb", "en-gb-scotland", "en-029", "en-us")})  # fmt: skip
    bad = tmp_path / "bad.csv"
    bad.write_text("clip,label,rater\nx.wav,3,ann\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.csv: header: missing column\(s\) criterion"):
        load_labelled_set(clips, accent(), labels_csv=bad)
    bad.write_text("clip,criterion,label,rater\nen-us_1.wav,,posh,ann\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"line 2: class 'posh' is not declared"):
        load_labelled_set(clips, accent(), labels_csv=bad)
    bad.write_text("clip,criterion,label,rater\nnone.wav,,3,ann\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"line 2: clip 'none.wav' not found"):
        load_labelled_set(clips, accent(), labels_csv=bad)
    with pytest.raises(ConfigError, match="--class"):
        parse_classes(["british"])


def test_class_labels_from_raters_with_the_human_ceiling(monkeypatch, capsys, tmp_path) -> None:
    """Three raters label each clip british or other; the third hears the Scottish voice as
    British. The judge answers scores; a score counts as the class whose range holds it."""
    british, other = "british", "other"
    labels = {"en-gb-x-rp": [british] * 3, "en-gb": [british] * 3,
              "en-gb-scotland": [other, other, british], "en-029": [other] * 3,
              "en-us": [other] * 3}  # fmt: skip
    clips, csv = rated_copy(tmp_path, labels)
    folder = ensure_labelled_set("accents")
    with realtime_judge_server(knowing_judge(folder, {})) as server:
        code, raw, err = invoke(
            monkeypatch, capsys, "judge-audio", "calibrate", "accent", str(clips), *JUDGE,
            "--judge-base-url", server.url, "--labels", str(csv), "--class", "british=4-5",
            "--class", "other=1-3", "--samples", "1", "-o", "target_accent=british", "--json",
        )  # fmt: skip
    assert code == 0, err
    report = json.loads(raw)
    stats = report["criteria"]["accent"]
    assert stats["kind"] == "class" and stats["accuracy"] == 1.0
    assert stats["kappa"]["value"] == 1.0 and stats["alpha_nominal"]["value"] == 1.0
    assert stats["recall"] == {"british": 1.0, "other": 1.0}
    assert stats["confusion"]["rows_expected"] == [[6, 0], [0, 9]]
    top = stats["ceiling"]
    assert top["raters"] == 3 and top["level"] == "nominal"
    assert top["alpha_raters"]["value"] < 1.0 and top["reaches_ceiling"] is True
    assert report["raters"] == ["ann", "bob", "cy"]
    assert report["verdict"] == "listens"


def test_classes_must_cover_the_scale(monkeypatch, capsys, tmp_path) -> None:
    clips, csv = rated_copy(tmp_path, {v: ["british"] * 3 for v in
                                       ("en-gb-x-rp", "en-gb", "en-gb-scotland", "en-029", "en-us")})  # fmt: skip
    with realtime_judge_server(ScriptedAudioJudge([form_answer({"accent": 3})])) as server:
        code, _, err = invoke(
            monkeypatch, capsys, "judge-audio", "calibrate", "accent", str(clips), *JUDGE,
            "--judge-base-url", server.url, "--labels", str(csv), "--class", "british=4-5",
            "-o", "target_accent=british", "--samples", "1",
        )  # fmt: skip
    assert code == 2 and "no class holds the score(s) [1, 2, 3]" in err


def test_two_judges_and_their_agreement(monkeypatch, capsys, tmp_path) -> None:
    folder = ensure_labelled_set("accents")
    with (
        realtime_judge_server(knowing_judge(folder, {})) as hears,
        realtime_judge_server(ScriptedAudioJudge([form_answer({"accent": 3})])) as deaf,
    ):
        code, raw, err = invoke(
            monkeypatch, capsys, "judge-audio", "calibrate", "accent", "accents",
            "--judge", "openai-realtime/gpt-realtime", "--judge-base-url", hears.url,
            "--judge", "openai-realtime/gpt-realtime", "--judge-base-url", deaf.url,
            "--samples", "1", "--no-controls", "--json", "--html", str(tmp_path / "two.html"),
        )  # fmt: skip
    assert code == 0, err
    report = json.loads(raw)
    first, second = report["judges"]
    assert first["verdict"] == "listens" and second["verdict"] == "does not listen"
    assert report["passed"] is False and "does not listen" in report["verdict"]
    pair = report["between_judges"][0]
    assert pair["judges"] == [0, 1]
    between = pair["criteria"]["accent"]
    # The deaf judge says 3 everywhere: the same as the listening one on the 3 Scottish files.
    assert between["files"] == 15 and between["exact_agreement"] == pytest.approx(0.2)
    assert between["kappa_quadratic"]["value"] == 0.0
    page = (tmp_path / "two.html").read_text(encoding="utf-8")
    assert "Agreement between" in page and page.count("judge-") >= 2


def test_manifest_class_labels(tmp_path: Path) -> None:
    (tmp_path / "a.wav").write_bytes(b"")
    (tmp_path / "b.wav").write_bytes(b"")
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(
        "classes: {british: [4, 5], other: [1, 3]}\nitems:\n"
        "  - {file: a.wav, expected: british}\n  - {file: b.wav, expected: other}\n",
        encoding="utf-8",
    )
    labelled = load_labelled_set(tmp_path, accent())
    assert labelled.classes == {"british": (4, 5), "other": (1, 3)}
    assert labelled.items[0].expected == {"accent": "british"}
    assert labelled.kind("accent") == "class" and labelled.class_of(3) == "other"
    manifest.write_text(
        "classes: {british: 5, other: [1, 4]}\nitems:\n  - {file: a.wav, expected: british}\n"
        "  - {file: b.wav, expected: 2}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="some labels are scores, some classes"):
        load_labelled_set(tmp_path, accent())
    manifest.write_text("items:\n  - {file: a.wav, expected: posh}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"items\[0\]\.expected\.accent: class 'posh'"):
        load_labelled_set(tmp_path, accent())
    manifest.write_text("classes: {posh: [5, 1]}\nitems:\n  - {file: a.wav, expected: 1}\n")
    with pytest.raises(ConfigError, match=r"classes\.posh: not a score range"):
        load_labelled_set(tmp_path, accent())
