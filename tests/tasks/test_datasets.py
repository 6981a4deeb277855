"""Dataset readers and filters: JSONL and CSV manifests, lazy audio, seeded sampling."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxbench.core.errors import ConfigError
from voxbench.tasks.config import Filters
from voxbench.tasks.datasets import readers as datasets
from voxbench.tasks.datasets.readers import read_records, select_records
from voxbench.tasks.datasets.suite import builtin_datasets, ensure_builtin_dataset
from voxbench.tasks.spec import TaskSpec

from .conftest import write_tiny_dataset


def _spec(folder: Path, manifest: str = "manifest.jsonl", **extra: object) -> TaskSpec:
    return TaskSpec(dataset={"path": str(folder), "manifest": manifest}, metrics=["wer"], **extra)


@pytest.mark.parametrize("manifest", ["manifest.jsonl", "manifest.csv"])
def test_manifest_readers(tmp_path: Path, manifest: str) -> None:
    folder = write_tiny_dataset(tmp_path / "d", manifest)
    records = list(read_records(_spec(folder, manifest)))
    assert [r.id for r in records] == ["a", "b", "c", "d", "e", "f"]
    assert records[2].reference == "sept huit neuf" and records[2].language == "fr"
    assert records[0].columns["speaker"] == "s1"
    assert records[5].load_audio().duration == pytest.approx(3.0)


def test_audio_is_decoded_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[str] = []
    real = datasets.read_wav
    monkeypatch.setattr(datasets, "read_wav", lambda p: decoded.append(p) or real(p))
    folder = write_tiny_dataset(tmp_path / "d")
    records = select_records(_spec(folder), Filters(min_duration_s=1.0), seed=0)
    assert len(records) == 5 and decoded == []  # durations come from headers
    records[0].load_audio()
    assert decoded == [records[0].audio.path]


def test_filters(tmp_path: Path) -> None:
    spec = _spec(write_tiny_dataset(tmp_path / "d"))

    def ids(**kw: object) -> list[str]:
        return [r.id for r in select_records(spec, Filters(**kw), seed=0, task="t")]

    assert ids(language=["fr"]) == ["c", "d"]
    assert ids(where={"speaker": "s2"}) == ["b", "d", "f"]
    assert ids(min_duration_s=1.2, max_duration_s=2.6) == ["c", "d", "e"]
    sampled = ids(num_samples=3)
    assert len(sampled) == 3 and sampled == sorted(sampled)
    assert sampled == ids(num_samples=3)  # seeded: the same draw every time
    draws = {
        tuple(r.id for r in select_records(spec, Filters(num_samples=3), seed=s, task="t"))
        for s in range(8)
    }
    assert len(draws) > 1  # a random draw per seed, not always the first N


def test_missing_column_and_folder(tmp_path: Path) -> None:
    folder = write_tiny_dataset(tmp_path / "d")
    with pytest.raises(ConfigError, match="no column transcript"):
        list(read_records(_spec(folder, columns={"reference": "transcript"})))
    with pytest.raises(ConfigError, match="does not exist"):
        list(read_records(_spec(tmp_path / "missing")))


def test_builtin_suite_is_hashed_and_reused(tmp_path: Path) -> None:
    assert set(builtin_datasets()) >= {
        "en_asr",
        "multilingual",
        "speaker_voice",
        "spoken_qa",
        "function_calls",
        "en_fr_speech",
    }
    out = ensure_builtin_dataset("en_asr", root=tmp_path)
    first = {p.name: p.stat().st_mtime_ns for p in out.glob("*.wav")}
    assert len(first) == 16 and (out / "manifest.jsonl").is_file()
    (out / "en03.wav").unlink()
    ensure_builtin_dataset("en_asr", root=tmp_path)
    again = {p.name: p.stat().st_mtime_ns for p in out.glob("*.wav")}
    assert set(again) == set(first)
    assert all(
        again[n] == first[n] for n in first if n != "en03.wav"
    )  # only the missing one redone
    with pytest.raises(ConfigError, match="unknown built-in dataset"):
        ensure_builtin_dataset("nope", root=tmp_path)


def test_a_manifest_clip_path_is_spelled_as_pathlib_joins_it() -> None:
    """``beside`` skips pathlib only for plain relative names: every other name, and every
    folder spelling, gives what ``str(Path(folder) / name)`` gives (records.jsonl's
    ``audio`` keeps its spelling)."""
    from voxbench.tasks.datasets.readers import beside

    folders = ["/data/set", "data", "/", ".", "//net/share", "a b/c", "/tmp/x.y"]
    names = [
        "c0.wav", "sub/c0.wav", "a b.wav", "./c0.wav", "sub/./c0.wav", "sub//c0.wav",
        "sub/", "/abs/c0.wav", "//abs/c0.wav", "../up.wav", "sub/../c0.wav", ".", "..",
        ".hidden.wav", "sub/.", "x/.y/z.wav", "é/ü.wav", "back\\slash.wav",
    ]  # fmt: skip
    for folder in folders:
        for name in names:
            assert beside(folder, name) == str(Path(folder) / name), (folder, name)
