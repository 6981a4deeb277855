"""The task registry: built-in tasks, groups, user folders, ``extends``."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.core.errors import ConfigError
from voxbench.tasks.spec import TaskRegistry


def test_builtin_tasks_and_groups() -> None:
    registry = TaskRegistry()
    assert "builtin_en_asr" in registry.names
    asr = registry.expand("asr", field="tasks")
    assert {"builtin_en_asr", "builtin_multilingual_asr", "librispeech_test_clean"} <= set(asr)
    assert all(registry.get(n).family == "asr" for n in asr)
    builtin = registry.expand("builtin", field="tasks")
    assert {"builtin_en_asr", "builtin_en_fr"} <= set(builtin)
    assert all(registry.get(n).spec.dataset.builtin for n in builtin)
    assert "librispeech_test_clean" not in builtin
    assert set(registry.expand("all", field="tasks")) == set(registry.names)
    for name in registry.names:  # every built-in task validates
        assert registry.get(name).spec.metrics


def test_extends_a_file_merges_deeply_and_the_child_wins() -> None:
    spec = TaskRegistry().get("builtin_multilingual_asr").spec
    assert spec.metrics == ["wer", "cer"]  # from _base.yaml
    assert spec.long_audio.policy == "chunk"
    assert spec.generation.max_tokens == 256
    assert "in the language spoken" in (spec.prompt.user or "")  # the child's prompt


def test_extends_a_task_by_name_and_paths_stay_relative_to_their_file(tasks_dir: Path) -> None:
    other = tasks_dir / "more" / "sub"
    other.mkdir(parents=True)
    (other / "tiny_cer.yaml").write_text("extends: tiny\nmetrics: [cer]\n")
    registry = TaskRegistry([tasks_dir])
    spec = registry.get("tiny_cer").spec
    assert spec.metrics == ["cer"]
    assert spec.prompt.user == "Transcribe {speaker}."
    assert Path(spec.dataset.path or "") == tasks_dir / "mine" / "data"
    assert registry.expand("more", field="tasks") == ["tiny_cer"]


def test_extends_loop_and_unknown_parent(tmp_path: Path) -> None:
    (tmp_path / "fam").mkdir()
    (tmp_path / "fam" / "a.yaml").write_text("extends: b.yaml\nmetrics: [wer]\n")
    (tmp_path / "fam" / "b.yaml").write_text("extends: a.yaml\n")
    (tmp_path / "fam" / "c.yaml").write_text("extends: nothing_here\n")
    registry = TaskRegistry([tmp_path])
    with pytest.raises(ConfigError, match="extends loops"):
        registry.get("a")
    with pytest.raises(ConfigError, match="no such file or task"):
        registry.get("c")


def test_bad_task_key_names_the_file_and_allowed_keys(tmp_path: Path) -> None:
    (tmp_path / "fam").mkdir()
    bad = tmp_path / "fam" / "bad.yaml"
    bad.write_text("dataset: {builtin: en_asr}\nmetrics: [wer]\nlong_audio: {polcy: chunk}\n")
    with pytest.raises(ConfigError) as info:
        TaskRegistry([tmp_path]).get("bad")
    assert str(bad) in str(info.value)
    assert "long_audio.polcy: unknown key" in str(info.value)
    assert "max_seconds, overlap_seconds, policy" in str(info.value)


def test_unknown_task_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown task or group 'nope'.*builtin_en_asr"):
        TaskRegistry().expand("nope", field="tasks[0]")
