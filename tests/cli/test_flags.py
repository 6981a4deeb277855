"""Issue 12 item 11: a short flag means one thing in every command, ``--json`` is a flag
everywhere, and the README's table of short flags is the command tree's."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from tests.cli_invoke import invoke
from voxbench.cli.main import app

README = Path(__file__).resolve().parents[2] / "README.md"


def _commands(command: Any, path: str = "voxbench") -> Iterator[tuple[str, Any]]:
    yield path, command
    for name, sub in (getattr(command, "commands", None) or {}).items():
        yield from _commands(sub, f"{path} {name}")


def _options() -> Iterator[tuple[str, Any]]:
    """(command path, option) for every option of every command (typer bundles its own
    click, so options are told apart from arguments by their dashes)."""
    for path, command in _commands(typer.main.get_command(app)):
        for param in command.params:
            if any(o.startswith("-") for o in param.opts):
                yield path, param


def _short_and_long(param: Any) -> tuple[list[str], list[str]]:
    names = [*param.opts, *param.secondary_opts]
    return (
        [n for n in names if not n.startswith("--")],
        [n for n in param.opts if n.startswith("--")],
    )


def short_flags() -> dict[str, dict[str, set[str]]]:
    """short flag → long option → the commands where the short flag stands for it."""
    table: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path, param in _options():
        shorts, longs = _short_and_long(param)
        for short in shorts:
            table[short][longs[0] if longs else "(none)"].add(path)
    return table


def test_each_short_flag_means_one_long_option_everywhere() -> None:
    clashes = {short: dict(longs) for short, longs in short_flags().items() if len(longs) > 1}
    assert clashes == {}


def test_a_long_option_with_a_short_flag_has_it_in_every_command() -> None:
    """``--judge`` is ``-j`` in run, judge and fdb score alike: never in one and not another."""
    long_to_short = {next(iter(longs)): short for short, longs in short_flags().items()}
    missing = []
    for path, param in _options():
        shorts, longs = _short_and_long(param)
        for long in longs:
            if long in long_to_short and long_to_short[long] not in shorts:
                missing.append(f"{path} {long} (elsewhere {long_to_short[long]})")
    assert missing == []


def test_json_is_a_flag_that_prints_to_stdout_everywhere() -> None:
    takes_a_value = [
        path
        for path, param in _options()
        if "--json" in param.opts and not getattr(param, "is_flag", False)
    ]
    assert takes_a_value == []


def test_the_readme_table_lists_every_short_flag() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index("### Short flags")
    section = text[start : text.index("\n#", start + 1)]
    rows = {line.split("|")[1].strip(): line for line in section.splitlines() if "| `-" in line}
    expected = {short: next(iter(longs)) for short, longs in short_flags().items()}
    assert set(rows) == {f"`{short}`" for short in expected}
    for short, long in expected.items():
        assert f"`{long}`" in rows[f"`{short}`"], (short, long)


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["fdb", "run", ".", "-t", "oracle", "-j", "2"], "use --concurrency N"),
        (["import", "aiewf", ".", "-o", "out"], "use --out DIR"),
        (["compare", "a", "b", "--json", "cmp.json"], "--out FILE writes it to a file"),
    ],
)
def test_a_retired_spelling_says_what_to_write_instead(monkeypatch, capsys, args, hint) -> None:
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert code == 2 and hint in out + err


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["run", "--benchmark", "smoke"], "the benchmark is the first argument"),
        (["tasks", "run", "--task", "builtin_en_asr"], "tasks: [builtin_en_asr] in eval.yaml"),
    ],
)
def test_a_common_slip_says_how_it_is_spelled(monkeypatch, capsys, args, hint) -> None:
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert code == 2 and hint in out + err
    # Only where it is meant: fdb run has no benchmark argument to point to.
    code, out, err = invoke(monkeypatch, capsys, "fdb", "run", ".", "--benchmark", "x")
    assert code == 2 and "first argument" not in out + err


def test_a_new_user_without_a_key_gets_one_line_and_no_progress_bar(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    code, out, err = invoke(
        monkeypatch, capsys, "run", "smoke", "-t", "google/gemini-2.5-flash",
        "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 3 and out == ""
    assert err.strip().splitlines() == [
        "error: missing API key for the target gemini/gemini-2.5-flash: set GEMINI_API_KEY "
        "or GOOGLE_API_KEY (in the environment or .env)"
    ]


def test_every_command_summary_is_one_line_of_text() -> None:
    """Rich help keeps a docstring's line breaks: a summary wrapped in the source once broke
    mid-sentence in ``voxbench --help`` ("(or a repeat group's" / "summary).")."""
    for path, command in _commands(typer.main.get_command(app)):
        summary = (command.help or "").partition("\n\n")[0]
        assert summary.strip(), path
        assert "\n" not in summary, (path, summary)


def test_the_command_list_shows_each_summary_whole(monkeypatch, capsys) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "--help", columns=200)
    assert code == 0
    (line,) = [x for x in out.splitlines() if "│ show " in x]
    assert "verdicts (or a repeat group's summary)." in line
