"""MT-Bench spoken (AU-Harness's ``mtbench_audio``): ``voxbench import mt-bench-audio`` turns a
copy of the Hub dataset's layout (one cell holding every turn's clip), written here, into the
multi-turn manifest the registry task reads, and the task runs with the MT-Bench judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_invoke import invoke

from .conftest import run_yaml
from .fake_judge import GullibleJudge, TrackingServer
from .hub_fixture import tone_wav
from .test_http import serving

datasets = pytest.importorskip("datasets")


def _mtbench_copy(folder: Path) -> Path:
    """Two records with the public dataset's columns: question_id, category, turns, audio
    (a list of clips), reference (a list, empty for a category without one)."""
    # Built as the Arrow structs Audio stores, then cast (datasets 4 encodes audio only with
    # torchcodec, which neither the converter nor this copy needs).
    stored = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}
    features = datasets.Features(
        {
            "question_id": datasets.Value("int64"),
            "category": datasets.Value("string"),
            "turns": datasets.Sequence(datasets.Value("string")),
            "audio": datasets.List(stored),
            "reference": datasets.Sequence(datasets.Value("string")),
        }
    )
    clip = {"bytes": tone_wav(0.3), "path": None}
    rows = {
        "question_id": [81, 111],
        "category": ["writing", "math"],
        "turns": [["Write a haiku.", "Now make it sadder."], ["What is 2+2?", "And 3+3?"]],
        "audio": [[clip, clip], [clip, clip]],
        "reference": [[], ["4", "6"]],
    }
    dataset = datasets.Dataset.from_dict(rows, features=features)
    dataset = dataset.cast_column("audio", datasets.List(datasets.Audio()))
    datasets.DatasetDict({"test": dataset}).save_to_disk(str(folder))
    return folder


def test_the_manifest_is_written_and_the_task_runs(monkeypatch, capsys, tmp_path) -> None:
    copy = _mtbench_copy(tmp_path / "copy")
    out = tmp_path / "mtbench"
    code, stdout, err = invoke(
        monkeypatch, capsys, "import", "mt-bench-audio", str(copy), "--out", str(out)
    )
    assert code == 0, stdout + err
    lines = [json.loads(x) for x in (out / "manifest.jsonl").read_text().splitlines()]
    assert lines[0] == {
        "id": "81",
        "category": "writing",
        "turn_audio": ["audio/81_1.wav", "audio/81_2.wav"],
        "turns": ["Write a haiku.", "Now make it sadder."],
        "reference": "",
    }
    assert lines[1]["reference"] == "6" and (out / "audio" / "111_2.wav").is_file()

    mine = tmp_path / "mytasks"
    mine.mkdir()
    (mine / "my_mtbench.yaml").write_text(f"extends: mtbench_audio\ndataset: {{path: {out}}}\n")
    judge = GullibleJudge()
    with serving(TrackingServer(judge)) as server:
        result = run_yaml(
            "models: [{name: oracle, model: local/oracle}]\ntasks: [my_mtbench]\n"
            "tasks_dirs: [mytasks]\n"
            f"judge: {{model: openai-compatible/judge-1, base_url: '{server.url}', "
            "backoff_base_s: 0}\n",
            tmp_path,
        )
    rating = result.scores["tasks"]["my_mtbench"]["oracle"]["metrics"]["mt_bench_llm_judge"]
    assert rating["n"] == 2 and rating["undecided"] == 0
    assert any("What is 2+2?" in text for text in judge.seen)  # the judge sees the turns
