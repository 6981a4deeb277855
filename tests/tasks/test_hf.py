"""Hugging Face datasets on disk (``save_to_disk``, parquet), read offline and lazily."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voxbench.core.errors import ConfigError
from voxbench.tasks.config import Filters
from voxbench.tasks.datasets.readers import dataset_fingerprint, read_records, select_records
from voxbench.tasks.spec import TaskSpec

datasets = pytest.importorskip("datasets")


def _wav(seconds: float, rate: int = 16000) -> bytes:
    buffer = io.BytesIO()
    t = np.arange(int(rate * seconds)) / rate
    sf.write(buffer, (0.1 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), rate, format="WAV")
    return buffer.getvalue()


def _dataset() -> object:
    """A dataset with an ``Audio`` column, as the Hub's speech datasets have.

    Built as the Arrow struct ``Audio`` stores (bytes, path) and cast: ``datasets`` 4 wants
    torchcodec to *encode* audio, which neither we nor the reader need.
    """
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "audio": {"bytes": datasets.Value("binary"), "path": datasets.Value("string")},
            "sentence": datasets.Value("string"),
            "locale": datasets.Value("string"),
        }
    )
    return datasets.Dataset.from_dict(
        {
            "id": ["x1", "x2", "x3"],
            "audio": [{"bytes": _wav(s), "path": None} for s in (0.5, 1.0, 2.0)],
            "sentence": ["un", "deux", "trois"],
            "locale": ["fr", "fr", "en"],
        },
        features=features,
    ).cast_column("audio", datasets.Audio(decode=False))


def _spec(path: Path, **dataset: object) -> TaskSpec:
    return TaskSpec(
        dataset={"path": str(path), **dataset},
        columns={"reference": "sentence", "language": "locale"},
        metrics=["wer"],
    )


def test_save_to_disk_dataset_and_split(tmp_path: Path) -> None:
    datasets.DatasetDict({"test": _dataset(), "train": _dataset().select([0])}).save_to_disk(
        str(tmp_path / "dd")
    )
    records = list(read_records(_spec(tmp_path / "dd", format="hf_disk", split="test")))
    assert [(r.id, r.reference, r.language) for r in records] == [
        ("x1", "un", "fr"),
        ("x2", "deux", "fr"),
        ("x3", "trois", "en"),
    ]
    assert records[2].load_audio().duration == pytest.approx(2.0)
    assert records[0].audio.name.endswith("dd#0")
    kept = select_records(
        _spec(tmp_path / "dd", format="hf_disk", split="test"), Filters(min_duration_s=0.8), seed=0
    )
    assert [r.id for r in kept] == ["x2", "x3"]
    assert dataset_fingerprint(_spec(tmp_path / "dd", format="hf_disk", split="test")).startswith(
        "hf_disk:"
    )
    with pytest.raises(ConfigError, match="holds the splits test, train"):
        list(read_records(_spec(tmp_path / "dd", format="hf_disk", split="dev")))


def test_parquet_files(tmp_path: Path) -> None:
    (tmp_path / "pq" / "data").mkdir(parents=True)
    _dataset().to_parquet(str(tmp_path / "pq" / "data" / "test-00000-of-00001.parquet"))
    _dataset().select([0]).to_parquet(
        str(tmp_path / "pq" / "data" / "train-00000-of-00001.parquet")
    )
    records = list(read_records(_spec(tmp_path / "pq", format="parquet", split="test")))
    assert [r.id for r in records] == ["x1", "x2", "x3"]
    assert records[1].load_audio().duration == pytest.approx(1.0)
    assert len(list(read_records(_spec(tmp_path / "pq", format="parquet")))) == 4
    with pytest.raises(ConfigError, match="no column 'clip'"):
        list(
            read_records(
                _spec(tmp_path / "pq", format="parquet", split="test").model_copy(
                    update={"columns": _spec(tmp_path).columns.model_copy(update={"audio": "clip"})}
                )
            )
        )


def test_reading_a_test_split_says_no_train_split(tmp_path: Path, capfd) -> None:
    (tmp_path / "pq").mkdir()
    _dataset().to_parquet(str(tmp_path / "pq" / "test-00000-of-00001.parquet"))
    capfd.readouterr()
    records = list(read_records(_spec(tmp_path / "pq", format="parquet", split="test")))
    assert len(records) == 3
    assert "Generating train split" not in "".join(capfd.readouterr())
    assert datasets.is_progress_bar_enabled()  # left as it was


# -- the Hub: datasets.load_dataset, tested offline against a prepared cache and local files ----


def prepare_hub_cache(repo_id: str, config: str, splits: dict[str, object]) -> None:
    """Write ``repo_id``'s ``config`` into the ``datasets`` cache as a Hub download leaves it
    (``<cache>/<org>___<name>/<config>/0.0.0/<hash>/``), built from parquet files."""
    from datasets.packaged_modules.parquet.parquet import Parquet

    folder = Path(datasets.config.HF_DATASETS_CACHE) / "_sources" / repo_id / config
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for split, table in splits.items():
        table.to_parquet(str(folder / f"{split}.parquet"))  # type: ignore[attr-defined]
        files[split] = [str(folder / f"{split}.parquet")]
    builder = Parquet(
        cache_dir=str(datasets.config.HF_DATASETS_CACHE),
        dataset_name=repo_id.split("/")[-1],
        repo_id=repo_id,
        config_name=config,
        config_id=config,
        hash="0123456789abcdef",
        data_files=files,
    )
    builder.download_and_prepare()


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``datasets`` cache of this test's own; the Hub off (as ``HF_HUB_OFFLINE=1``)."""
    import huggingface_hub.constants

    from voxbench.tasks.datasets.hf import load_hub_dataset

    cache = tmp_path / "hf-datasets"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    load_hub_dataset.cache_clear()
    yield cache
    load_hub_dataset.cache_clear()


def _hub_spec(**dataset: object) -> TaskSpec:
    return TaskSpec(
        dataset=dataset,
        columns={"reference": "sentence", "language": "locale"},
        metrics=["wer"],
    )


def test_hub_dataset_offline_from_a_warm_cache(hub_cache: Path) -> None:
    prepare_hub_cache(
        "vox-test/tiny", "default", {"test": _dataset(), "train": _dataset().select([0])}
    )
    prepare_hub_cache("vox-test/tiny", "fr", {"test": _dataset().select([0, 1])})
    spec = _hub_spec(hub="vox-test/tiny", config="default", split="test")
    records = list(read_records(spec))
    assert [(r.id, r.reference, r.language) for r in records] == [
        ("x1", "un", "fr"),
        ("x2", "deux", "fr"),
        ("x3", "trois", "en"),
    ]
    assert records[2].load_audio().duration == pytest.approx(2.0)
    assert records[0].audio.name == "vox-test/tiny#0"
    assert dataset_fingerprint(spec).startswith("datasets:")
    assert (
        len(list(read_records(_hub_spec(hub="vox-test/tiny", config="default", split="train"))))
        == 1
    )
    assert len(list(read_records(_hub_spec(hub="vox-test/tiny", config="fr", split="test")))) == 2
    with pytest.raises(ConfigError, match="holds the splits test, train"):
        list(read_records(_hub_spec(hub="vox-test/tiny", config="default")))
    with pytest.raises(ConfigError, match="configurations in the cache: "):
        list(read_records(_hub_spec(hub="vox-test/tiny", split="test")))


def test_hub_dataset_offline_without_cache_is_an_error_naming_it(hub_cache: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        list(read_records(_hub_spec(hub="vox-test/absent", config="en", split="test")))
    message = str(caught.value)
    assert "vox-test/absent (config en)" in message and "HF_HUB_OFFLINE" in message
    assert caught.value.field == "dataset.hub"


def test_hub_reference_goes_to_load_dataset_with_config_split_revision(
    tmp_path: Path, hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Online, ``hub:`` is what ``datasets.load_dataset`` takes: here a local folder of parquet
    files (the same call a Hub id gets, without network)."""
    (tmp_path / "repo" / "data").mkdir(parents=True)
    _dataset().to_parquet(str(tmp_path / "repo" / "data" / "test-00000-of-00001.parquet"))
    calls = []
    real = datasets.load_dataset

    def spy(path: str, name: str | None = None, **kwargs: object) -> object:
        calls.append((path, name, kwargs))
        return real(path, name, **{**kwargs, "revision": None})  # a folder has no revisions

    monkeypatch.setattr(datasets, "load_dataset", spy)
    spec = _hub_spec(hub=str(tmp_path / "repo"), split="test", revision="v1.0")
    assert [r.id for r in read_records(spec)] == ["x1", "x2", "x3"]
    dataset_fingerprint(spec)
    assert calls == [(str(tmp_path / "repo"), None, {"split": "test", "revision": "v1.0"})]


def test_hub_keys_are_checked() -> None:
    with pytest.raises(ValueError, match="exactly one of builtin, path or hub"):
        _hub_spec(hub="a/b", path="x")
    with pytest.raises(ValueError, match="config and revision are for a hub dataset"):
        _hub_spec(path="x", revision="main")
    with pytest.raises(ValueError, match="format is for a dataset under path"):
        _hub_spec(hub="a/b", format="parquet")
