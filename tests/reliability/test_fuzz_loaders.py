"""Issue 11: the loaders of user files raise only ``VoxbenchError``, whatever the bytes.

Hypothesis throws arbitrary bytes, arbitrary YAML documents and damaged copies of valid files
at the benchmark loader, the run config loader, the JSONL reader and the wav reader. A
``VoxbenchError`` is a message naming the file; anything else would be a traceback.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from voxbench.audio.wav import Audio, read_wav, write_wav
from voxbench.benchmarks.loader import BUILTIN_DIR, load_benchmark, validate_benchmark
from voxbench.core.errors import VoxbenchError
from voxbench.core.rundir import read_jsonl
from voxbench.runner.config import RunConfig

FUZZ = settings(
    max_examples=60,
    deadline=None,  # a shared machine: no timing in tests
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

yaml_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=30),
)
yaml_values = st.recursive(
    yaml_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=12), children, max_size=4),
    ),
    max_leaves=12,
)
yaml_like_text = st.one_of(
    st.text(max_size=300),
    st.lists(
        st.sampled_from(
            [
                ": ",
                "- ",
                "\n",
                "  ",
                "{",
                "}",
                "[",
                "]",
                "&a ",
                "*a",
                "!!binary ",
                "!!float x",
                "2020-13-45",
                "? ",
                "|",
                ">",
                "'",
                '"',
                "#",
                "<<: ",
                "\t",
                "\x00",
                "\ufeff",
                "é",
                "key",
                "turns",
                "tools",
                "id",
                "1e9999",
            ]
        ),  # fmt: skip
        max_size=60,
    ).map("".join),
)


def only_voxbench_errors(call) -> None:
    """Run ``call``: it may succeed or raise a VoxbenchError, nothing else."""
    try:
        call()
    except VoxbenchError as exc:
        assert str(exc)  # a message, never an empty one


def _fresh_smoke(root: Path) -> Path:
    dest = root / "bench"
    if dest.exists():
        shutil.rmtree(dest)
    return Path(shutil.copytree(BUILTIN_DIR / "smoke", dest))


PACKAGE_FILES = ["benchmark.yaml", "tools.yaml", "turns.yaml", "backend.yaml", "knowledge_base.md"]


@FUZZ
@given(name=st.sampled_from(PACKAGE_FILES), content=st.binary(max_size=400))
def test_benchmark_loader_on_arbitrary_bytes(tmp_path: Path, name: str, content: bytes) -> None:
    bench = _fresh_smoke(tmp_path)
    (bench / name).write_bytes(content)
    only_voxbench_errors(lambda: load_benchmark(bench))
    assert all(isinstance(p, VoxbenchError) for p in validate_benchmark(bench))


@FUZZ
@given(name=st.sampled_from(PACKAGE_FILES[:4]), text=yaml_like_text)
def test_benchmark_loader_on_yaml_like_text(tmp_path: Path, name: str, text: str) -> None:
    bench = _fresh_smoke(tmp_path)
    (bench / name).write_text(text, encoding="utf-8")
    only_voxbench_errors(lambda: load_benchmark(bench))


@FUZZ
@given(name=st.sampled_from(PACKAGE_FILES[:4]), value=yaml_values, data=st.data())
def test_benchmark_loader_on_damaged_documents(tmp_path: Path, name: str, value, data) -> None:
    """Valid YAML with a value replaced somewhere: the pydantic and schema checks run."""
    bench = _fresh_smoke(tmp_path)
    document = yaml.safe_load((bench / name).read_text())
    node = document
    # Walk down a random path and replace what is there.
    for _ in range(data.draw(st.integers(0, 4))):
        if isinstance(node, dict) and node:
            key = data.draw(st.sampled_from(sorted(node, key=str)))
            if not isinstance(node[key], dict | list) or data.draw(st.booleans()):
                node[key] = value
                break
            node = node[key]
        elif isinstance(node, list) and node:
            i = data.draw(st.integers(0, len(node) - 1))
            if not isinstance(node[i], dict | list) or data.draw(st.booleans()):
                node[i] = value
                break
            node = node[i]
    else:
        document = value if data.draw(st.booleans()) else document
    (bench / name).write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    only_voxbench_errors(lambda: load_benchmark(bench))


@FUZZ
@given(content=st.one_of(st.binary(max_size=300), yaml_like_text.map(str.encode)))
def test_config_loader_on_arbitrary_input(tmp_path: Path, content: bytes) -> None:
    config = tmp_path / "run.yaml"
    config.write_bytes(content)
    only_voxbench_errors(lambda: RunConfig.from_file(config))


config_keys = st.sampled_from(
    ["benchmark", "target", "mode", "only_turns", "runs_dir", "turn_timeout", "target_options",
     "chunk_ms", "clock", "tags", "seed", "max_retries", "heard_asr", "nonsense"]
)  # fmt: skip


@FUZZ
@given(document=st.dictionaries(config_keys, yaml_values, max_size=6))
def test_config_loader_on_arbitrary_settings(tmp_path: Path, document: dict) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    only_voxbench_errors(lambda: RunConfig.from_file(config))


@FUZZ
@given(content=st.binary(max_size=400))
def test_jsonl_reader_on_arbitrary_bytes(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(content)
    only_voxbench_errors(lambda: read_jsonl(path))


@FUZZ
@given(
    lines=st.lists(
        st.one_of(
            st.text(max_size=40),
            st.just("[" * 5000),
            st.just("1" * 5000),
            st.just('{"a": NaN}'),
            st.just('{"a": 1}'),
            st.just("null"),
        ),
        max_size=8,
    )
)
def test_jsonl_reader_on_arbitrary_lines(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "transcript.jsonl"
    path.write_text("".join(line.replace("\n", " ") + "\n" for line in lines), encoding="utf-8")
    only_voxbench_errors(lambda: read_jsonl(path))


def _valid_wav_bytes() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ok.wav"
        tone = np.sin(np.linspace(0, 200, 4800, dtype=np.float32)) * 0.5
        write_wav(path, Audio(tone, 24000))
        return path.read_bytes()


VALID_WAV = _valid_wav_bytes()


@FUZZ
@given(content=st.binary(max_size=600))
def test_wav_reader_on_arbitrary_bytes(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "turn.wav"
    path.write_bytes(content)
    only_voxbench_errors(lambda: read_wav(path))


@FUZZ
@given(
    cut=st.integers(0, len(VALID_WAV)),
    flips=st.lists(st.tuples(st.integers(0, 63), st.integers(0, 255)), max_size=6),
)
def test_wav_reader_on_damaged_wavs(tmp_path: Path, cut: int, flips) -> None:
    """A real wav, truncated and with header bytes overwritten."""
    data = bytearray(VALID_WAV[:cut])
    for offset, byte in flips:
        if offset < len(data):
            data[offset] = byte
    path = tmp_path / "turn.wav"
    path.write_bytes(bytes(data))
    only_voxbench_errors(lambda: read_wav(path))


@pytest.mark.parametrize("reader", [read_jsonl, read_wav, RunConfig.from_file, load_benchmark])
def test_a_directory_given_as_a_file_is_a_voxbench_error(tmp_path: Path, reader) -> None:
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    if reader is read_jsonl:
        assert read_jsonl(folder) == []  # not a file: nothing recorded yet
        return
    with pytest.raises(VoxbenchError):
        reader(folder)


def test_the_fuzzers_start_from_files_that_load(tmp_path: Path) -> None:
    """The damaged-copy fuzzers mean something only if the undamaged files are valid."""
    assert validate_benchmark(BUILTIN_DIR / "smoke") == []
    path = tmp_path / "ok.wav"
    path.write_bytes(VALID_WAV)
    assert read_wav(path).frames == 4800
