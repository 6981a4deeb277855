"""``voxbench robustness``: the ladder run as a matrix, each rung paired with the clean run,
the reports written (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_invoke import invoke

ORACLE_TASKS = (
    "models: [{name: oracle, model: local/oracle}]\n"
    "tasks: [{name: builtin_en_asr, filters: {num_samples: 2}}]\n"
)


def test_a_task_config_under_a_ladder_is_paired_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "eval.yaml").write_text(ORACLE_TASKS, encoding="utf-8")
    args = ("robustness", "--benchmark", "none", "--tasks", str(tmp_path / "eval.yaml"),
            "--perturb", "noise:pink@10dB", "--perturb", "codec:mulaw",
            "--runs-dir", str(tmp_path / "rb"))  # fmt: skip
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert code == 0, out + err
    assert "noise:pink@10dB" in out and "codec:mulaw" in out and "report:" in out
    folder = tmp_path / "rb" / "robustness" / "tasks_eval"
    data = json.loads((folder / "robustness.json").read_text())
    assert data["kind"] == "tasks" and [c["spec"] for c in data["conditions"]] == [
        "noise:pink@10dB",
        "codec:mulaw",
    ]
    # The oracle answers the reference whatever it hears: nothing drops, p = 1.
    assert all(d["drop"] == 0 and d["p_value"] == 1 for c in data["conditions"] for d in c["drops"])
    assert (folder / "robustness.html").is_file() and (folder / "robustness.md").is_file()
    heard = {
        json.loads(p.read_text()).get("perturbations")
        for p in (tmp_path / "rb" / "tasks").glob("*/*/run.json")
    }
    assert heard == {None, "noise:pink@10dB", "codec:mulaw"}
    # Again: every run is reused, the same report.
    code, out2, err = invoke(monkeypatch, capsys, *args)
    assert code == 0 and json.loads((folder / "robustness.json").read_text()) == data


def test_a_bad_rung_names_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = invoke(
        monkeypatch, capsys, "robustness", "--perturb", "noise:pink@ten",
        "--runs-dir", str(tmp_path / "rb"),
    )  # fmt: skip
    assert code == 2 and "noise:pink@ten" in err


@pytest.mark.slow
def test_the_offline_default_under_noise_is_paired_turn_by_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # cascade/local/baseline on smoke in audio mode, clean and at 0 dB SNR.
    code, out, err = invoke(
        monkeypatch, capsys, "robustness", "--perturb", "noise:pink@0dB",
        "--runs-dir", str(tmp_path / "rb"),
    )  # fmt: skip
    assert code == 0, out + err
    folder = tmp_path / "rb" / "robustness" / "smoke_cascade-local-baseline"
    data = json.loads((folder / "robustness.json").read_text())
    (condition,) = data["conditions"]
    names = [d["name"] for d in condition["drops"]]
    assert names[0] == "strict_pass" and "no_response" in names
    assert all(d["paired"] > 0 for d in condition["drops"] if d["name"] == "strict_pass")
    assert condition["latency"] and condition["latency"][0]["metric"] == "voice_to_voice"
