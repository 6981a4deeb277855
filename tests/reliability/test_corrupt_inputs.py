"""Issue 11: a corpus of corrupt inputs, each run through every command that reads it.

Configs, benchmark packages, turn WAVs, run directories (run.json, JSONL files, the
recording) and FDB corpora. Whatever the damage: never a traceback, always a message that
names the file (and the field where there is one), and a non-zero exit code.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from voxbench.benchmarks.loader import BUILTIN_DIR


def voxbench(monkeypatch: pytest.MonkeyPatch, capsys, *args: str) -> tuple[int, str]:
    code, out, err = invoke(monkeypatch, capsys, *args, columns=300)
    return code, out + err


def assert_clear_failure(code: int, out: str, *names: str) -> None:
    """Non-zero, no traceback, and every one of ``names`` (file, field) in the message."""
    assert code != 0, out
    assert "Traceback" not in out, out
    flat = out.replace("\n", "")  # a long message may wrap inside a table
    for name in names:
        assert name in flat, f"{name!r} not named in:\n{out}"


@dataclass(frozen=True)
class Corruption:
    """One damaged input: how to make it, and what the message must name."""

    id: str
    damage: Callable[[Path], None]
    names: tuple[str, ...]


def _write(name: str, content: bytes | str) -> Callable[[Path], None]:
    def damage(root: Path) -> None:
        path = root / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")

    return damage


def _replace(name: str, old: str, new: str) -> Callable[[Path], None]:
    def damage(root: Path) -> None:
        path = root / name
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {name}"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    return damage


def _remove(name: str) -> Callable[[Path], None]:
    return lambda root: (root / name).unlink()


def _break_line(name: str, number: int, content: bytes) -> Callable[[Path], None]:
    def damage(root: Path) -> None:
        path = root / name
        lines = path.read_bytes().splitlines(keepends=True)
        lines[number - 1] = content + b"\n"
        path.write_bytes(b"".join(lines))

    return damage


# -- run configs ------------------------------------------------------------------------------

CONFIGS = [
    Corruption("not-utf8", _write("run.yaml", b"benchmark: smoke\ntarget: \xff\n"), ("run.yaml", "UTF-8")),
    Corruption("bad-yaml", _write("run.yaml", "benchmark: [smoke\ntarget: oracle\n"), ("run.yaml", "YAML")),
    Corruption("repeated-key", _write("run.yaml", "benchmark: smoke\ntarget: oracle\nmode: text\nmode: audio\n"), ("run.yaml", "mode", "line 4")),
    Corruption("a-list", _write("run.yaml", "- benchmark: smoke\n"), ("run.yaml", "mapping")),
    Corruption("unknown-key", _write("run.yaml", "benchmark: smoke\ntarget: oracle\nmodel: x\n"), ("run.yaml", "model")),
    Corruption("wrong-type", _write("run.yaml", "benchmark: smoke\ntarget: oracle\nturn_timeout: soon\n"), ("run.yaml", "turn_timeout")),
    Corruption("impossible-date", _write("run.yaml", "benchmark: smoke\ntarget: oracle\nseed: 2020-13-45\n"), ("run.yaml",)),
    Corruption("empty", _write("run.yaml", ""), ("run.yaml", "benchmark")),
    Corruption("no-target", _write("run.yaml", "benchmark: smoke\n"), ("run.yaml", "--target")),
    Corruption("bad-option", _write("run.yaml", "benchmark: smoke\ntarget: oracle\ntarget_options: {temprature: 1}\n"), ("run.yaml", "target_options.temprature")),
    Corruption("bad-turns", _write("run.yaml", "benchmark: smoke\ntarget: oracle\nonly_turns: '3-1'\n"), ("run.yaml", "only_turns")),
    Corruption("missing-turn", _write("run.yaml", "benchmark: smoke\ntarget: oracle\nonly_turns: [42]\n"), ("only_turns", "42")),
    Corruption("a-directory", lambda root: (root / "run.yaml").mkdir(), ("run.yaml", "directory")),
]  # fmt: skip


@pytest.mark.parametrize("case", CONFIGS, ids=lambda c: c.id)
def test_corrupt_run_config(monkeypatch, capsys, tmp_path: Path, case: Corruption) -> None:
    case.damage(tmp_path)
    runs = tmp_path / "runs"
    code, out = voxbench(
        monkeypatch, capsys, "run", "--config", str(tmp_path / "run.yaml"), "--runs-dir", str(runs)
    )
    assert_clear_failure(code, out, *case.names)
    assert not runs.exists() or not any(runs.rglob("run.json"))  # refused before any run


def test_a_missing_config_file_is_named(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out = voxbench(monkeypatch, capsys, "run", "--config", str(tmp_path / "gone.yaml"))
    assert_clear_failure(code, out, "gone.yaml")


# -- benchmark packages -------------------------------------------------------------------------

PACKAGES = [
    Corruption("header-not-utf8", _write("benchmark.yaml", b"id: smoke\ndescription: caf\xe9\n"), ("benchmark.yaml", "UTF-8")),
    Corruption("header-bad-yaml", _write("benchmark.yaml", "id: [smoke\n"), ("benchmark.yaml", "YAML")),
    Corruption("header-empty", _write("benchmark.yaml", ""), ("benchmark.yaml", "empty")),
    Corruption("header-a-list", _write("benchmark.yaml", "- id\n"), ("benchmark.yaml", "mapping")),
    Corruption("header-repeated-key", _replace("benchmark.yaml", 'version: "1.1"\n', 'version: "1.1"\nid: other\n'), ("benchmark.yaml", "id", "line")),
    Corruption("header-unknown-variable", _replace("benchmark.yaml", "{current_date}", "{current_dat}"), ("benchmark.yaml", "system_prompt", "{current_dat}")),
    Corruption("header-bad-date", _replace("benchmark.yaml", '"2026-03-13"', '"13/03/2026"'), ("benchmark.yaml", "current_date")),
    Corruption("kb-missing", _remove("knowledge_base.md"), ("knowledge_base.md", "missing")),
    Corruption("kb-not-utf8", _write("knowledge_base.md", b"\xff\xfe kb"), ("knowledge_base.md", "UTF-8")),
    Corruption("turns-empty", _write("turns.yaml", ""), ("turns.yaml", "empty")),
    Corruption("turns-none", _write("turns.yaml", "turns: []\n"), ("turns.yaml", "turns")),
    Corruption("turns-a-list", _write("turns.yaml", "- id: 0\n"), ("turns.yaml", "turns")),
    Corruption("turns-missing-field", _replace("turns.yaml", '    text: Hi! What time', '    txt: Hi! What time'), ("turns.yaml", "turns[0]")),
    Corruption("turns-repeated-key", _replace("turns.yaml", '  - id: "0"\n', '  - id: "0"\n    id: "00"\n'), ("turns.yaml", "id", "line")),
    Corruption("tools-required-string", _replace("tools.yaml", "required: [name, session_id]", "required: name"), ("tools.yaml", "required", "'name'")),
    Corruption("tools-not-utf8", _write("tools.yaml", b"tools:\n  - name: \xc3\x28\n"), ("tools.yaml", "UTF-8")),
    Corruption("backend-bad-yaml", _write("backend.yaml", "tools: {: :\n"), ("backend.yaml",)),
]  # fmt: skip

PACKAGE_COMMANDS = {
    "bench-validate": ("bench", "validate", "{pkg}"),
    "bench-stats": ("bench", "stats", "{pkg}"),
    "bench-check": ("bench", "check", "{pkg}"),
    "run": ("run", "{pkg}", "-t", "oracle", "--runs-dir", "{tmp}/runs"),
    "synth": ("synth", "{pkg}", "--out", "{tmp}/audio"),
}


@pytest.mark.parametrize("command", PACKAGE_COMMANDS, ids=str)
@pytest.mark.parametrize("case", PACKAGES, ids=lambda c: c.id)
def test_corrupt_benchmark_package(
    monkeypatch, capsys, tmp_path: Path, case: Corruption, command: str
) -> None:
    pkg = Path(shutil.copytree(BUILTIN_DIR / "smoke", tmp_path / "pkg"))
    case.damage(pkg)
    args = [a.format(pkg=pkg, tmp=tmp_path) for a in PACKAGE_COMMANDS[command]]
    code, out = voxbench(monkeypatch, capsys, *args)
    assert_clear_failure(code, out, *case.names)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("run.json"))


# -- turn WAVs ---------------------------------------------------------------------------------

WAVS = {
    "empty": b"",
    "text": b"hello, this is not audio at all\n" * 8,
    "header-only": b"RIFF\x24\x00\x00\x00WAVEfmt ",
    "random": bytes(range(256)) * 4,
}


@pytest.mark.parametrize("command", ["bench-validate", "run-audio"])
@pytest.mark.parametrize("content", WAVS.values(), ids=list(WAVS))
def test_corrupt_turn_wav(
    monkeypatch, capsys, tmp_path: Path, content: bytes, command: str
) -> None:
    pkg = Path(shutil.copytree(BUILTIN_DIR / "smoke", tmp_path / "pkg"))
    (pkg / "turn0.wav").write_bytes(content)
    _replace("turns.yaml", '  - id: "0"\n', '  - id: "0"\n    audio: turn0.wav\n')(pkg)
    if command == "bench-validate":
        args = ["bench", "validate", str(pkg)]
    else:
        args = ["run", str(pkg), "-t", "oracle", "--mode", "audio", "--heard-asr", "none",
                "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    code, out = voxbench(monkeypatch, capsys, *args)
    assert_clear_failure(code, out, "turn0.wav", "turns[0] (id 0).audio")
    assert not (tmp_path / "runs").exists()


# -- run directories ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One short text run of the oracle, recorded and judged."""
    import asyncio

    from voxbench.evaluation import evaluate_run
    from voxbench.runner.config import RunConfig
    from voxbench.runner.launch import run_conversation

    runs = tmp_path_factory.mktemp("runs")
    config = RunConfig(
        benchmark="smoke", target="local/oracle", runs_dir=runs, only_turns=[0, 1, 2]
    )
    path = asyncio.run(run_conversation(config))
    evaluate_run(path)
    return path


RUN_FILES = [
    Corruption("run-json-not-json", _write("run.json", "{not json"), ("run.json",)),
    Corruption("run-json-a-list", _write("run.json", "[1, 2]"), ("run.json",)),
    Corruption("run-json-not-utf8", _write("run.json", b'{"benchmark": "\xff"}'), ("run.json",)),
    Corruption("run-json-missing", _remove("run.json"), ("run",)),
    Corruption("run-json-fields", _write("run.json", '{"benchmark": 3}'), ("run.json",)),
    Corruption("transcript-line", _break_line("transcript.jsonl", 2, b"{broken"), ("transcript.jsonl:2",)),
    Corruption("transcript-not-utf8", _break_line("transcript.jsonl", 1, b'{"turn": "\xff"}'), ("transcript.jsonl:1",)),
    Corruption("transcript-not-object", _break_line("transcript.jsonl", 1, b"[1, 2]"), ("transcript.jsonl:1",)),
    Corruption("transcript-fields", _break_line("transcript.jsonl", 1, b'{"turn": []}'), ("transcript.jsonl",)),
    Corruption("events-line", _break_line("events.jsonl", 3, b"{broken"), ("events.jsonl:3",)),
    Corruption("events-deep", _break_line("events.jsonl", 3, b"[" * 100000), ("events.jsonl:3",)),
]  # fmt: skip

RUN_COMMANDS = {
    "show": ("show", "{run}"),
    "judge": ("judge", "{run}"),
    "analyze": ("analyze", "{run}"),
    "compare": ("compare", "{run}", "{run}"),
}


def _fresh_run(recorded_run: Path, tmp_path: Path) -> Path:
    run = Path(shutil.copytree(recorded_run, tmp_path / "run"))
    for derived in ("scorecard.json", "judged.jsonl", "analysis.json"):
        (run / derived).unlink(missing_ok=True)  # make every command read the raw files
    return run


def _readers(case: Corruption) -> list[str]:
    """The commands that read the damaged file."""
    if case.id.startswith("transcript"):
        return ["show", "judge", "compare"]  # analyze measures from the timeline alone
    if case.id.startswith("events"):
        # show, judge and compare evaluate without latency when the timeline is unreadable
        # (evaluation reports it through the judges); analyze measures it and must refuse.
        return ["analyze"]
    return list(RUN_COMMANDS)


@pytest.mark.parametrize(
    ("case", "command"),
    [pytest.param(c, cmd, id=f"{c.id}-{cmd}") for c in RUN_FILES for cmd in _readers(c)],
)
def test_corrupt_run_directory(
    monkeypatch, capsys, tmp_path: Path, recorded_run: Path, case: Corruption, command: str
) -> None:
    run = _fresh_run(recorded_run, tmp_path)
    case.damage(run)
    args = [a.format(run=run) for a in RUN_COMMANDS[command]]
    code, out = voxbench(monkeypatch, capsys, *args)
    assert_clear_failure(code, out, *case.names)


@pytest.mark.parametrize("case", RUN_FILES[:4], ids=lambda c: c.id)
def test_corrupt_run_directory_on_resume(
    monkeypatch, capsys, tmp_path: Path, recorded_run: Path, case: Corruption
) -> None:
    run = _fresh_run(recorded_run, tmp_path)
    case.damage(run)
    code, out = voxbench(monkeypatch, capsys, "run", "--resume", str(run))
    assert_clear_failure(code, out, *case.names)


def test_a_missing_run_directory_is_named(monkeypatch, capsys, tmp_path: Path) -> None:
    for command in RUN_COMMANDS:
        args = [a.format(run=tmp_path / "nowhere") for a in RUN_COMMANDS[command]]
        code, out = voxbench(monkeypatch, capsys, *args)
        assert_clear_failure(code, out, "nowhere")


# -- FDB corpora --------------------------------------------------------------------------------

FDB_FILES = [
    Corruption("annotation-not-json", _write("v1_0/candor_pause_handling/1/pause.json", "{oops"), ("pause.json",)),
    Corruption("annotation-wrong-shape", _write("v1_0/candor_pause_handling/1/pause.json", '{"a": 1}'), ("pause.json",)),
    Corruption("annotation-not-utf8", _write("v1_0/candor_pause_handling/1/pause.json", b"\xff\xfe"), ("pause.json",)),
    Corruption("output-wav", _write("v1_0/candor_pause_handling/1/output.wav", b"not audio " * 50), ("candor_pause_handling/1",)),
    Corruption("output-json", _write("v1_0/candor_pause_handling/1/output.json", "[1, 2"), ("output.json",)),
    Corruption("gt-not-json", _write("v1_0/icc_gt_distribution.json", "{oops"), ("icc_gt_distribution.json",)),
    Corruption("gt-wrong-shape", _write("v1_0/icc_gt_distribution.json", '{"0": "many"}'), ("icc_gt_distribution.json",)),
]  # fmt: skip


def _modes(case: Corruption) -> list[str]:
    # The public fdb-v1 pause metric never reads pause.json: only voxbench mode reads it.
    return ["voxbench"] if case.id.startswith("annotation") else ["fdb-v1", "voxbench"]


@pytest.mark.parametrize(
    ("case", "mode"),
    [pytest.param(c, m, id=f"{c.id}-{m}") for c in FDB_FILES for m in _modes(c)],
)
def test_corrupt_fdb_corpus(
    monkeypatch, capsys, mini_outputs: Path, case: Corruption, mode: str
) -> None:
    case.damage(mini_outputs)
    if case.id == "output-wav":
        (mini_outputs / "v1_0/candor_pause_handling/1/output.json").unlink(missing_ok=True)
    code, out = voxbench(monkeypatch, capsys, "fdb", "score", str(mini_outputs), "--mode", mode)
    assert_clear_failure(code, out, *case.names)


def test_corrupt_fdb_input_wav_on_run(monkeypatch, capsys, mini_corpus: Path, tmp_path) -> None:
    wav = mini_corpus / "v1_0/candor_pause_handling/1/input.wav"
    wav.write_bytes(b"not audio " * 50)
    code, out = voxbench(
        monkeypatch, capsys, "fdb", "run", str(mini_corpus / "v1_0"), "--virtual",
        "-t", "tests.fullduplex.tone_session:ToneSession", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert_clear_failure(code, out, "candor_pause_handling/1")


# -- the recording of an audio run ----------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded_audio_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two spoken turns of the oracle (eSpeak voices, no ASR of the agent)."""
    import asyncio

    from voxbench.runner.config import RunConfig
    from voxbench.runner.launch import run_conversation

    config = RunConfig(
        benchmark="smoke", target="local/oracle", mode="audio", heard_asr="none",
        runs_dir=tmp_path_factory.mktemp("audio_runs"), only_turns=[0, 1],
    )  # fmt: skip
    return asyncio.run(run_conversation(config))


@pytest.mark.parametrize("content", WAVS.values(), ids=list(WAVS))
def test_corrupt_recording_on_analyze(
    monkeypatch, capsys, tmp_path: Path, recorded_audio_run: Path, content: bytes
) -> None:
    run = _fresh_run(recorded_audio_run, tmp_path)
    (run / "conversation.wav").write_bytes(content)
    code, out = voxbench(monkeypatch, capsys, "analyze", str(run))
    assert_clear_failure(code, out, "conversation.wav")


@pytest.mark.parametrize("content", WAVS.values(), ids=list(WAVS))
def test_corrupt_recording_on_judge_is_an_incomplete_evaluation(
    monkeypatch, capsys, tmp_path: Path, recorded_audio_run: Path, content: bytes
) -> None:
    """Turn-taking cannot be judged on a broken recording: too many undecided turns, exit 4."""
    run = _fresh_run(recorded_audio_run, tmp_path)
    (run / "conversation.wav").write_bytes(content)
    code, out = voxbench(monkeypatch, capsys, "judge", str(run))
    assert code == 4, out
    assert_clear_failure(code, out, "conversation.wav", "undecided")
