"""Issue 11, defect 7: what ``bench validate`` used to call valid, and how it printed it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.test_cli import voxbench
from voxbench.benchmarks.loader import BUILTIN_DIR, validate_benchmark


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    return Path(shutil.copytree(BUILTIN_DIR / "smoke", tmp_path / "bench"))


def problems_of(path: Path) -> list[str]:
    return [str(p) for p in validate_benchmark(path)]


@pytest.mark.parametrize("content", ["", "# nothing yet\n", "turns: []\n"])
def test_a_turns_file_without_turns_is_a_problem(bench: Path, content: str) -> None:
    (bench / "turns.yaml").write_text(content)
    (problem,) = problems_of(bench)
    assert "turns.yaml" in problem and ("empty" in problem or "no turns" in problem)


def test_a_misspelt_template_variable_is_a_problem(bench: Path) -> None:
    header = bench / "benchmark.yaml"
    header.write_text(header.read_text().replace("{current_date}", "{current_dat}"))
    (problem,) = problems_of(bench)
    assert "benchmark.yaml" in problem and "system_prompt" in problem
    assert "{current_dat}" in problem and "{current_date}" in problem


def test_braces_that_are_not_placeholders_are_left_alone(bench: Path) -> None:
    header = bench / "benchmark.yaml"
    text = header.read_text().replace(
        "  Knowledge base:",
        '  Answer tools in JSON like {"ok": true} or { spaced }.\n  Knowledge base:',
    )
    header.write_text(text)
    assert problems_of(bench) == []


def _give_turn_audio(bench: Path, wav: Path) -> None:
    turns = bench / "turns.yaml"
    turns.write_text(
        turns.read_text().replace('  - id: "0"\n', f'  - id: "0"\n    audio: {wav.name}\n', 1)
    )


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"", "empty"), (b"this is not audio at all, just some text" * 10, "audio")],
)
def test_an_empty_or_non_audio_turn_wav_is_a_problem(
    bench: Path, content: bytes, words: str
) -> None:
    wav = bench / "turn0.wav"
    wav.write_bytes(content)
    _give_turn_audio(bench, wav)
    (problem,) = problems_of(bench)
    assert "turn0.wav" in problem and "turns[0] (id 0).audio" in problem and words in problem


def test_a_real_turn_wav_is_valid(bench: Path) -> None:
    import numpy as np

    from voxbench.audio.wav import Audio, write_wav

    wav = bench / "turn0.wav"
    write_wav(wav, Audio(np.zeros((2400, 1), dtype=np.float32), 24000))
    _give_turn_audio(bench, wav)
    assert problems_of(bench) == []


def test_required_as_a_string_is_printed_as_a_string(monkeypatch, capsys, bench: Path) -> None:
    tools = bench / "tools.yaml"
    tools.write_text(tools.read_text().replace("required: [name, session_id]", "required: name"))
    code, out = voxbench(monkeypatch, capsys, "bench", "validate", str(bench))
    assert code == 2 and "Traceback" not in out
    assert "tools.yaml" in out and "required" in out and "'name'" in out
    assert "['n', 'a', 'm', 'e']" not in out


def test_a_key_given_twice_in_a_package_file_names_file_line_and_key(bench: Path) -> None:
    header = bench / "benchmark.yaml"
    header.write_text(header.read_text() + 'version: "2.0"\n')
    (problem,) = problems_of(bench)
    assert "benchmark.yaml" in problem and "version" in problem and "line 2" in problem
