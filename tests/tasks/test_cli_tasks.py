"""``voxbench tasks list|run|show`` on the built-in offline suite, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import voxbench

ORACLE = "models: [{name: oracle, model: local/oracle}]\ntasks: [builtin]\naggregate: [{name: asr, metric: wer, tasks: [asr]}]\n"


def test_list_shows_tasks_metrics_and_models(monkeypatch, capsys) -> None:
    code, out = voxbench(monkeypatch, capsys, "tasks", "list")
    assert code == 0, out
    for word in (
        "builtin_en_asr",
        "builtin_conference_calls",
        "function_call_match",
        "bleu",
        "local/oracle",
        "vllm",
    ):
        assert word in out


def test_list_columns_group_filter_and_json(monkeypatch, capsys, tmp_path: Path) -> None:
    family = tmp_path / "mine" / "hubby"
    family.mkdir(parents=True)
    (family / "speech.yaml").write_text(
        "dataset: {hub: vox-test/speech, config: fr_fr, split: test}\nmetrics: [wer, cer]\n"
        "licence: CC BY 4.0\nsize: 676\nsource_url: 'https://huggingface.co/datasets/x'\n"
    )
    code, out = voxbench(
        monkeypatch, capsys, "tasks", "list", "--tasks-dir", str(tmp_path / "mine"),
        "--family", "hubby",
    )  # fmt: skip
    assert code == 0, out
    header, row = out.splitlines()[1:3]
    assert header.split() == ["task", "family", "dataset", "size", "metrics", "licence"]
    assert row.split() == ["speech", "hubby", "vox-test/speech/fr_fr:test", "676", "wer,", "cer",
                           "CC", "BY", "4.0"]  # fmt: skip
    assert "builtin_en_asr" not in out
    code, out = voxbench(monkeypatch, capsys, "tasks", "list", "--group", "builtin", "--json")
    assert code == 0, out
    tasks = json.loads(out)["tasks"]
    assert {t["dataset"].split(":")[0] for t in tasks} == {"builtin"}
    asr = next(t for t in tasks if t["task"] == "builtin_en_asr")
    assert asr["size"] == 16 and asr["family"] == "asr" and asr["licence"]
    code, out = voxbench(monkeypatch, capsys, "tasks", "list", "--group", "nope")
    assert code == 2 and "unknown task or group 'nope'" in out


def test_default_suite_names_only_builtin_tasks(tmp_path: Path) -> None:
    """The suite ``voxbench tasks run`` runs with no config never goes online: it names the
    ``builtin`` group, and a Hub task (built in or in the user's folders) is never in it."""
    from voxbench.tasks.config import DEFAULT_CONFIG_TEXT, parse_config
    from voxbench.tasks.spec import TaskRegistry

    (tmp_path / "hubby").mkdir()
    (tmp_path / "hubby" / "speech.yaml").write_text(
        "dataset: {hub: vox-test/speech, split: test}\nmetrics: [wer]\n"
    )
    registry = TaskRegistry([tmp_path])
    config = parse_config(DEFAULT_CONFIG_TEXT, file="(built-in suite)")
    names = [n for item in config.tasks for n in registry.expand(str(item), field="tasks")]
    names += [t for agg in config.aggregate for n in agg.tasks
              for t in registry.expand(n, field="aggregate")]  # fmt: skip
    assert names and "speech" not in names
    assert all(registry.get(n).spec.dataset.builtin is not None for n in names)
    assert set(registry.expand("builtin", field="tasks")) == set(names)


def test_oracle_scores_perfectly_on_every_builtin_task(monkeypatch, capsys, tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(ORACLE)
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml")
    assert code == 0, out
    (run,) = (tmp_path / "runs" / "tasks").glob("*/run.json")
    scores = json.loads((run.parent / "scores.json").read_text())
    families = set()
    for task, by_model in scores["tasks"].items():
        entry = by_model["oracle"]
        assert entry["errors"] == 0 and entry["answered"] == entry["records"] > 0, task
        for name, metric in entry["metrics"].items():
            perfect = 100.0 if metric["higher_is_better"] else 0.0
            assert metric["value"] == perfect, (task, name)
        families.add(json.loads(run.read_text())["tasks"][task]["family"])
    assert families == {
        "asr",
        "diarisation",
        "language_id",
        "paralinguistics",
        "spoken_qa",
        "function_calling",
        "translation",
        "sql",
    }
    oracle = scores["aggregates"]["asr"]["models"]["oracle"]
    assert oracle["value"] == 0.0 and len(oracle["tasks"]) == 2 and oracle["excluded"] == {}
    assert "builtin_en_asr" in out and "100.00" in out

    code, out = voxbench(monkeypatch, capsys, "tasks", "show", str(run.parent), "--failures")
    assert code == 0 and "0 records shown" in out
    code, out = voxbench(
        monkeypatch, capsys, "tasks", "show", run.parent.name, "--task", "builtin_passage_qa"
    )
    assert code == 0 and "8 records shown" in out and "accuracy=✓" in out
    # Piped, each record is one grep-able line: its names, reference, prediction and scores.
    rows = [line.split() for line in out.splitlines() if line.startswith("builtin_passage_qa ")]
    assert len(rows) == 8 + 1  # the records, then the scores table's row
    assert all(r[1] == "oracle" and r[-1] == "accuracy=✓" for r in rows[:8])


def test_bad_config_is_a_message_not_a_traceback(monkeypatch, capsys, tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(ORACLE + "filter: {num_samples: 3}\n")
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml")
    assert code == 2
    assert "eval.yaml" in out and "filter: unknown key" in out and "filters" in out
    assert "Traceback" not in out


def test_show_failures_lists_errors(monkeypatch, capsys, tmp_path: Path) -> None:
    # A model nobody serves: every record is a recorded connectivity error, not a 0 score.
    (tmp_path / "eval.yaml").write_text(
        "models: [{name: nobody, model: vllm/x, base_url: 'http://127.0.0.1:9/v1', retries: 0}]\n"
        "tasks: [builtin_passage_qa]\n"
    )
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml")
    # Nothing could be scored: exit 4 (the run could not be completed), naming the cell.
    assert code == 4, out
    assert "8 errors" in out
    assert "builtin_passage_qa · nobody" in out and "8 failed of 8" in out and "--resume" in out
    (run,) = (tmp_path / "runs" / "tasks").glob("*/run.json")
    code, out = voxbench(monkeypatch, capsys, "tasks", "show", str(run.parent), "--failures")
    assert "8 records shown" in out and "connectivity" in out


@pytest.mark.slow
def test_local_whisper_gives_real_asr_numbers(monkeypatch, capsys, tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(
        "models: [{name: whisper, model: local/whisper-tiny.en, max_concurrency: 2}]\n"
        "tasks: [builtin_en_asr]\n"
    )
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml")
    assert code == 0, out
    (run,) = (tmp_path / "runs" / "tasks").glob("*/run.json")
    wer = json.loads((run.parent / "scores.json").read_text())["tasks"]["builtin_en_asr"][
        "whisper"
    ]["metrics"]["wer"]
    assert (
        wer["n"] == 16 and 0 < wer["value"] < 60
    )  # eSpeak voices are hard for tiny.en, not hopeless


def test_ray_address_needs_the_ray_executor(monkeypatch, capsys, tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(ORACLE)
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml", "--ray-address", "auto")
    assert code == 2 and "--ray-address" in out and "--executor ray" in out
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml", "--executor", "dask")
    assert code == 2 and "unknown executor 'dask'" in out


def test_a_narrow_terminal_never_cuts_task_names(monkeypatch, capsys, tmp_path: Path) -> None:
    """Cut to 14 characters, both tasks below printed as ``builtin_speak…``."""
    from tests.cli_invoke import invoke

    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval.yaml").write_text(
        "models: [{name: oracle, model: local/oracle}]\n"
        "tasks: [builtin_speaker_count, builtin_speaker_gender]\n"
    )
    code, out, _ = invoke(monkeypatch, capsys, "tasks", "run", "eval.yaml", columns=60)
    assert code == 0, out
    lines = out.splitlines()
    for name in ("builtin_speaker_count", "builtin_speaker_gender", "macro_f1"):
        assert any(name in line for line in lines), (name, out)
    # Piped, each score is one grep-able line (the cells were once folded a character wide).
    (row,) = [line for line in lines if "builtin_speaker_gender" in line and "macro_f1" in line]
    # Every record right: a bootstrap has nothing to resample, so no interval is shown.
    assert row.split() == ["builtin_speaker_gender", "macro_f1", "↑", "100.00", "n=12"]
    (done,) = [line for line in lines if "model requests in" in line]
    (run,) = (tmp_path / "runs" / "tasks").glob("*/run.json")
    assert done.endswith(str(run.parent))  # never cut


def test_show_prints_the_inference_phase_and_run_takes_no_cache(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    (tmp_path / "eval.yaml").write_text(
        "models: [{name: oracle, model: local/oracle}]\ntasks: [builtin_passage_qa]\n"
    )
    code, out = voxbench(monkeypatch, capsys, "tasks", "run", "eval.yaml", "--no-cache")
    assert code == 0, out
    (run,) = (tmp_path / "runs" / "tasks").glob("*/run.json")
    assert json.loads(run.read_text())["no_cache"] is True
    code, out = voxbench(monkeypatch, capsys, "tasks", "show", str(run.parent))
    assert code == 0 and "inference: 8 records, 8 requests (0 retries, 0 from the cache)" in out
    assert "in flight; first request 20" in out
