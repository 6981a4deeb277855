"""``voxbench download``: a fake Hugging Face Hub on loopback serves a tiny dataset; no test
touches the network."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.benchmarks.test_importers import CB_BENCH, FIXTURES, fake_git_head, streaming_wav
from tests.cli_invoke import invoke
from voxbench.benchmarks.backend import BackendSpec
from voxbench.benchmarks.loader import load_benchmark, validate_benchmark
from voxbench.testing.hf_hub import FakeHubServer, FakeRepo, serving_in_background

CB_REPO = "arcada-labs/conversation-bench"


def dataset_files(tmp_path: Path, with_sources: bool = True) -> dict[str, bytes]:
    """A tiny ConversationBench dataset: audio/turn_NNN.wav, and its Python files if asked."""
    files: dict[str, bytes] = {}
    if with_sources:
        src = FIXTURES / "conversation_bench_checkout" / CB_BENCH
        for path in sorted(p for p in src.rglob("*") if p.is_file()):
            files[path.relative_to(src).as_posix()] = path.read_bytes()
    for i in range(6):
        files[f"audio/turn_{i:03d}.wav"] = streaming_wav(tmp_path / "wav" / f"{i}.wav", 0.1)
    files["README.md"] = b"# a tiny test dataset\n"
    return files


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHubServer]:
    server = FakeHubServer({CB_REPO: FakeRepo(dataset_files(tmp_path))})
    with serving_in_background(server):
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # never the user's cache
        yield server


def test_download_fetches_caches_and_imports(hub, tmp_path, monkeypatch, capsys):
    cache, out = tmp_path / "cache", tmp_path / "cb"
    args = ("download", "conversation-bench", "--cache", str(cache), "--out", str(out))
    code, stdout, stderr = invoke(monkeypatch, capsys, *args)
    assert code == 0, stdout + stderr
    commit = hub.repos[CB_REPO].commit
    said = " ".join(stdout.split())
    assert f"dataset {CB_REPO} at {commit[:12]}" in said
    assert "6 audio files" in said
    assert any(
        r.startswith("GET /api/datasets/arcada-labs/conversation-bench/") for r in hub.requests
    )
    assert validate_benchmark(out) == []
    bench = load_benchmark(out)
    assert bench.version == f"upstream-{commit[:12]}"  # the dataset's commit is recorded
    assert all(t.audio == f"audio/turn_{i:03d}.wav" for i, t in enumerate(bench.turns))
    assert BackendSpec.model_validate(bench.backend).harness.upstream == "conversation-bench"

    # Offline with the cache: nothing is asked of the hub.
    hub.requests.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    again = (*args[:-1], str(tmp_path / "cb2"))
    code, stdout, stderr = invoke(monkeypatch, capsys, *again)
    assert code == 0, stdout + stderr
    assert "from the cache (offline)" in " ".join(stdout.split())
    assert hub.requests == []
    assert load_benchmark(tmp_path / "cb2").version == bench.version


def test_offline_without_a_cache_is_a_clear_error(hub, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, stdout, stderr = invoke(
        monkeypatch, capsys, "download", "conversation-bench", "--cache", str(tmp_path / "empty")
    )
    assert code == 3
    message = " ".join(stderr.split())
    assert "HF_HUB_OFFLINE is set" in message and CB_REPO in message and "Traceback" not in stderr
    assert hub.requests == []
    assert not Path("imported").exists()


def test_unknown_revision_and_aiewf_without_a_dataset(hub, tmp_path, monkeypatch, capsys):
    cache = str(tmp_path / "cache")
    code, _, stderr = invoke(
        monkeypatch, capsys, "download", "conversation-bench", "--cache", cache, "--revision", "v9"
    )
    assert code == 2 and "--revision" in stderr and "no revision 'v9'" in stderr
    code, _, stderr = invoke(monkeypatch, capsys, "download", "aiewf", "--cache", cache)
    assert code == 2 and "publishes no Hugging Face dataset" in " ".join(stderr.split())


def test_audio_only_dataset_takes_the_sources_from_a_checkout(tmp_path, monkeypatch, capsys):
    server = FakeHubServer({CB_REPO: FakeRepo(dataset_files(tmp_path, with_sources=False))})
    checkout = tmp_path / "checkout"
    shutil.copytree(FIXTURES / "conversation_bench_checkout", checkout)
    fake_git_head(checkout, "d1c336e" + "0" * 33)
    with serving_in_background(server):
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        base = ("download", "conversation-bench", "--cache", str(tmp_path / "c"))
        code, _, stderr = invoke(monkeypatch, capsys, *base, "--out", str(tmp_path / "x"))
        assert code == 2 and "--source" in stderr
        code, stdout, stderr = invoke(
            monkeypatch, capsys, *base, "--out", str(tmp_path / "y"), "--source", str(checkout)
        )
    assert code == 0, stdout + stderr
    said = " ".join(stdout.split())
    assert "6 audio files" in said and "upstream commit d1c336e00000" in said
    assert "audio from the dataset arcada-labs/conversation-bench" in said


def test_a_head_that_misses_leaves_the_connection_usable() -> None:
    # `datasets` asks HEAD for files that may not exist, then GETs on the same connection: a
    # 404 to a HEAD must carry no body, or the next response would be misread.
    server = FakeHubServer({"acme/tiny": FakeRepo({"data.csv": b"a,b\n1,2\n"})})
    with serving_in_background(server), httpx.Client(base_url=server.url) as client:
        missing = client.head("/datasets/acme/tiny/resolve/main/tiny.py")
        found = client.get("/datasets/acme/tiny/resolve/main/data.csv")
    assert missing.status_code == 404 and missing.headers["x-error-code"] == "EntryNotFound"
    assert found.status_code == 200 and found.content == b"a,b\n1,2\n"
