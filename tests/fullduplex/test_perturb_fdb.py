"""``fdb run --perturb``: the target hears each input perturbed, scored against the clean
annotations; the records and the summary say what it heard (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.cli_invoke import invoke
from voxbench.audio.perturb import parse_perturbations
from voxbench.audio.wav import read_wav

TONE = "tests.fullduplex.tone_session:ToneSession"


def _run(monkeypatch, capsys, corpus: Path, *extra: str) -> tuple[int, str, str]:
    args = ("fdb", "run", str(corpus / "v1_0"), "--target", TONE, "--virtual",
            "--option", "delay=0.05", *extra)  # fmt: skip
    return invoke(monkeypatch, capsys, *args)


def test_the_target_hears_the_perturbed_input_and_the_summary_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys, mini_corpus: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "noisy"
    code, out, err = _run(
        monkeypatch, capsys, mini_corpus, "--out", str(out_dir), "--perturb", "noise:pink@5dB",
        "--seed", "7",
    )  # fmt: skip
    assert code == 0, out + err
    records = [json.loads(p.read_text()) for p in out_dir.rglob("voxbench_fdb.json")]
    assert records and {r["perturbations"] for r in records} == {"noise:pink@5dB"}
    heard = next(out_dir.rglob("perturbed_input.wav"))
    sample = heard.parent.relative_to(out_dir)
    clean = read_wav(mini_corpus / "v1_0" / sample / "input.wav")
    expected = parse_perturbations("noise:pink@5dB").apply(clean, 7, f"{sample}/input.wav")
    got = read_wav(heard)
    assert got.frames == clean.frames and got.sample_rate == clean.sample_rate
    assert np.max(np.abs(got.samples - expected.samples)) < 1e-3
    assert (out_dir / sample / "input.wav").read_bytes() == (
        mini_corpus / "v1_0" / sample / "input.wav"
    ).read_bytes()  # scoring reads the clean input beside it
    code, out, err = invoke(monkeypatch, capsys, "fdb", "score", str(out_dir), "--json")
    assert code == 0, out + err
    assert json.loads(out)["perturbations"] == "noise:pink@5dB"


def test_a_perturbed_pass_needs_an_output_folder_of_its_own(
    monkeypatch: pytest.MonkeyPatch, capsys, mini_corpus: Path, tmp_path: Path
) -> None:
    code, out, err = _run(monkeypatch, capsys, mini_corpus, "--perturb", "codec:mulaw")
    assert code == 2 and "--out" in err
    out_dir = tmp_path / "clean"
    assert _run(monkeypatch, capsys, mini_corpus, "--out", str(out_dir))[0] == 0
    code, out, err = _run(
        monkeypatch, capsys, mini_corpus, "--out", str(out_dir), "--perturb", "codec:mulaw"
    )
    assert code == 2 and "clean audio" in err
    code, out, err = _run(
        monkeypatch, capsys, mini_corpus, "--out", str(tmp_path / "x"), "--perturb", "nois:pink"
    )
    assert code == 2 and "nois:pink" in err
