"""One table of exit codes: each command that runs, scores or serves something, with the
code each kind of outcome ends in and the words the user reads (issue 32, item 6).

``CASES`` runs here, in-process, each in a fresh folder with no API key in the environment;
the rows that need a corpus, a fake server or a long run are proven where those live
(``ELSEWHERE``, checked to exist). ``test_every_command_has_a_row_for_each_code_it_can_end_in``
keeps the table whole, and the README's table is checked against ``EXIT_CODES`` by
``test_exit_codes_issue32``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from tests.fullduplex.minicorpus import build_corpus
from voxbench.core.errors import EXIT_CODES

REPO = Path(__file__).resolve().parents[2]
DEAD = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "XAI_API_KEY")


def _write(name: str, text: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        (folder / name).write_text(text, encoding="utf-8")

    return setup


def _tone(folder: Path) -> None:
    import numpy as np

    from voxbench.audio.wav import Audio, write_wav

    t = np.arange(16_000) / 16_000
    write_wav(
        folder / "a.wav", Audio((0.1 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16_000)
    )


@dataclass(frozen=True)
class Case:
    command: str
    """The command as the README names it (``tasks run``, ``judge-audio``)."""
    code: int
    args: tuple[str, ...]
    says: tuple[str, ...]
    """Words the output must hold (stdout and stderr together)."""
    setup: Callable[[Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.command.replace(' ', '-')}-exit{self.code}-{'_'.join(self.says[:1])[:24]}"


CASES = [
    # 0: completed
    Case("run", 0, ("run", "smoke", "-t", "local/oracle"), ("run directory",)),
    Case(
        "tasks run",
        0,
        ("tasks", "run", "eval.yaml"),
        ("Scores",),
        _write(
            "eval.yaml",
            "models: [{name: oracle, model: local/oracle}]\ntasks: [builtin_passage_qa]\n",
        ),
    ),  # fmt: skip
    # 1: a gate failed
    Case(
        "run", 1, ("run", "smoke", "-t", "local/baseline", "--fail-under", "facts=0.9"), ("facts",)
    ),  # fmt: skip
    # 2: a user error, before anything ran
    Case("run", 2, ("run", "nope", "-t", "local/oracle"), ("no benchmark named 'nope'",)),
    Case("run", 2, ("run", "smoke", "-t", "local/oracle", "--bogus"), ("No such option",)),
    Case(
        "run",
        2,
        ("run", "smoke", "-t", "local/oracle", "--fail-under", "bogus=0.5"),
        ("bogus", "--fail-under"),
    ),  # fmt: skip
    Case("tasks run", 2, ("tasks", "run", "missing.yaml"), ("missing.yaml", "not found")),
    Case(
        "tasks run",
        2,
        ("tasks", "run", "eval.yaml"),
        ("eval.yaml", "unknown key"),
        _write(
            "eval.yaml", "models: [{name: o, model: local/oracle}]\ntasks: [builtin]\nfilter: {}\n"
        ),
    ),  # fmt: skip
    Case("fdb run", 2, ("fdb", "run", "nodir", "-t", "local/oracle"), ("nodir", "CORPUS")),
    Case("fdb score", 2, ("fdb", "score", "nodir"), ("nodir", "OUT_DIR")),
    Case("judge", 2, ("judge", "runs/none"), ("not a run directory",)),
    Case(
        "judge-audio",
        2,
        (
            "judge-audio",
            "nofile.wav",
            "-r",
            "accent",
            "-o",
            "target_accent=RP",
            "-j",
            "openai/gpt-4o-audio-preview",
        ),
        ("nofile.wav",),
    ),  # fmt: skip
    Case("matrix", 2, ("matrix", "plan.yaml"), ("plan.yaml", "not found")),
    Case("tools serve", 2, ("tools", "serve", "nope", "-t", "local/oracle"), ("nope",)),
    Case("store", 2, ("store", "ls", "--store", "mysql://x@y/z"), ("unknown store scheme",)),
    Case("store", 2, ("store", "ls", "--store", "off"), ("--store",)),
    Case("view", 2, ("view", "nodir"), ("nodir",)),
    Case("show", 2, ("show", "runs/none"), ("not a run directory",)),
    Case("report", 2, ("report", "runs/none"), ("not a run directory",)),
    # 3: a missing (or rejected: ELSEWHERE) credential, naming the variable
    Case("run", 3, ("run", "smoke", "-t", "openai/gpt-4o-mini"), ("OPENAI_API_KEY",)),
    Case(
        "tasks run",
        3,
        ("tasks", "run", "eval.yaml"),
        ("OPENAI_API_KEY",),
        _write(
            "eval.yaml",
            "models: [{name: m, model: openai/gpt-4o-mini}]\ntasks: [builtin_passage_qa]\n",
        ),
    ),  # fmt: skip
    Case(
        "judge-audio",
        3,
        (
            "judge-audio",
            "a.wav",
            "-r",
            "accent",
            "-o",
            "target_accent=RP",
            "-j",
            "openai/gpt-4o-audio-preview",
        ),
        ("OPENAI_API_KEY",),
        _tone,
    ),  # fmt: skip
    Case(
        "fdb run",
        3,
        ("fdb", "run", "corpus", "-t", "openai/gpt-4o-mini"),
        ("OPENAI_API_KEY",),
        lambda folder: build_corpus(folder / "corpus"),
    ),  # fmt: skip
    # 4: the run could not be completed
    Case(
        "run",
        4,
        ("run", "smoke", "-t", "openai/gpt-4o-mini", "--base-url", DEAD),
        ("could not be reached",),
        env={"OPENAI_API_KEY": "sk-test-not-a-key"},
    ),  # fmt: skip
    Case(
        "tasks run",
        4,
        ("tasks", "run", "eval.yaml"),
        ("no scored record", "8 failed of 8", "--resume"),
        _write(
            "eval.yaml",
            f"models: [{{name: nobody, model: vllm/x, base_url: '{DEAD}', retries: 0}}]\n"
            "tasks: [builtin_passage_qa]\n",
        ),
    ),  # fmt: skip
]

ELSEWHERE = [
    ("run", 3, "tests/reliability/test_exit_codes_issue32.py::test_judge_with_a_rejected_key_exits_3"),
    ("judge", 3, "tests/reliability/test_exit_codes_issue32.py::test_judge_with_a_rejected_key_exits_3"),
    ("judge-audio", 4, "tests/judging/audio/test_judge_audio_cli.py::test_every_judgment_undecided_exits_non_zero"),
    ("judge-audio", 4, "tests/reliability/test_hanging_judge.py::test_an_http_judge_that_never_answers_is_bounded_by_timeout"),
    ("fdb run", 4, "tests/fullduplex/test_target_failures.py::test_fdb_run_against_a_dead_endpoint_lists_every_sample_and_exits_4"),
    ("fdb score", 4, "tests/fullduplex/test_cli_fdb_errors.py::test_fdb_score_with_a_corrupt_output_names_it_and_exits_4"),
    ("fdb score", 1, "tests/fullduplex/test_cli_fdb.py::test_baseline_gate_fails_on_regression_only"),
    ("view", 2, "tests/viewer/test_serve.py::test_port_in_use_exits_2_naming_the_option"),
]  # fmt: skip
"""Rows proven by a test elsewhere (a corpus, a fake server, or minutes of running)."""

EXPECTED = {
    "run": {0, 1, 2, 3, 4},
    "tasks run": {0, 2, 3, 4},
    "fdb run": {2, 3, 4},
    "fdb score": {1, 2, 4},
    "judge": {2, 3},
    "judge-audio": {2, 3, 4},
    "matrix": {2},
    "tools serve": {2},
    "store": {2},
    "view": {2},
    "show": {2},
    "report": {2},
}
"""The codes each command can end in (beyond 0) that the table must show."""


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_exit_code_and_message(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    if case.setup is not None:
        case.setup(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, *case.args)
    said = out + err
    assert code == case.code, said[-2000:]
    for words in case.says:
        assert words in said, said[-2000:]
    assert "Traceback" not in said
    assert "sk-test-not-a-key" not in said


def test_every_command_has_a_row_for_each_code_it_can_end_in() -> None:
    here = {(c.command, c.code) for c in CASES} | {(cmd, code) for cmd, code, _ in ELSEWHERE}
    for command, codes in EXPECTED.items():
        for code in codes:
            assert (command, code) in here, f"no row for `voxbench {command}` exiting {code}"
    assert {code for _, code in here} == set(EXIT_CODES)


@pytest.mark.parametrize("node", sorted({node for _, _, node in ELSEWHERE}))
def test_the_rows_proven_elsewhere_exist(node: str) -> None:
    path, _, name = node.partition("::")
    source = (REPO / path).read_text(encoding="utf-8")
    assert re.search(rf"^(async )?def {re.escape(name)}\(", source, re.M), node
