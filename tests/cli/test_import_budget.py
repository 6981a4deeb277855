"""Issue 24: ``voxbench --help`` answers at once. The root command imports no command module
(each is imported when it runs or its own help is asked), so none of the heavy packages the
rooms use is loaded to print the help; and the table of summaries the help is printed from
stays the commands' own. (Wall time is printed by ``bench/cli_startup.py``, not asserted.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from voxbench.cli.main import COMMANDS, LazyGroup, app, load_command

FORBIDDEN: dict[str, str] = {
    "numpy": "audio arrays: only the commands that read or write audio need it",
    "scipy": "statistics and resampling filters (cli/judge_audio → judging/audio/calibrate)",
    "faster_whisper": "local ASR: the engine loads it when a run transcribes",
    "ctranslate2": "faster-whisper's inference engine, the largest native library we load",
    "onnxruntime": "Silero VAD: only runs that detect speech need it",
    "httpx": "the provider clients' HTTP: nothing is sent by --help",
    "ray": "the optional scale-out executor",
    "starlette": "the web viewer (voxbench view)",
    "uvicorn": "the web viewer's server (voxbench view, fake-server, tools serve)",
    "jinja2": "report and viewer templates",
    "soundfile": "wav I/O (loads libsndfile)",
    "soxr": "resampling (native library)",
    "jiwer": "WER for the audio tasks",
    "sacrebleu": "BLEU for the translation tasks",
    "websockets": "realtime protocols and agent bridges",
    "pydantic": "the domain models: 60 ms alone, and what it validates is not needed to list commands",
    "yaml": "benchmark and task configs are read by the commands that take them",
    "dotenv": "the user's .env is loaded when a command runs, not for --help or --version",
    "voxbench.core": "its __init__ imports every domain model (pydantic): a fifth of a second",
    "voxbench.providers": "pydantic-heavy provider registry and clients",
    "voxbench.targets": "the systems under test and their SDKs",
    "voxbench.metrics": "the task metrics (numpy, sacrebleu, rapidfuzz)",
    "voxbench.tasks": "the audio-task harness (datasets, engine)",
    "voxbench.importers": "importers of upstream benchmarks and configs",
    "voxbench.judging": "judges, among them the audio judge's calibration (scipy)",
    "voxbench.evaluation": "the whole evaluation chain: analysis, judging, scoring, report",
}
"""Top-level packages (or voxbench rooms) that ``voxbench --help`` must not import, and why."""

ALLOWED: dict[str, str] = {
    "typer": "the command itself (with its bundled click)",
    "annotated_doc": "typer's own dependency, imported by typer.main",
    "shellingham": "typer's completion helper, imported by typer itself",
    "rich": "typer renders --help with rich",
    "markdown_it": "typer.rich_utils imports rich.markdown at the top (markdown help mode)",
    "mdurl": "markdown_it's dependency",
    "pygments": "rich.syntax, imported by typer.rich_utils",
    "attr": "rich.pretty uses attrs when it is installed",
    "voxbench": "voxbench/__init__ (the version), voxbench.cli and voxbench.cli.main only",
}
"""Every other package ``voxbench --help`` may import, and why it is there. A package not in
either list fails the test: add it here with its reason if it is cheap, or import it later."""

_PROBE = """
import json, sys
before = set(sys.modules)
import voxbench.cli.main
after_import = set(sys.modules)
if sys.argv[1] == "help":
    sys.argv = ["voxbench", "--help"]
    try:
        voxbench.cli.main.main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    print(json.dumps({"code": code, "new": sorted(set(sys.modules) - before)}), file=sys.stderr)
else:
    print(json.dumps({"code": 0, "new": sorted(after_import - before)}), file=sys.stderr)
"""


def _loaded(mode: str) -> list[str]:
    """Module names a fresh interpreter loads for ``mode``: "import" (``import
    voxbench.cli.main``) or "help" (the entry point with ``--help``)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, mode],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    result = json.loads(done.stderr.strip().splitlines()[-1])
    assert result["code"] in (0, None), result
    return result["new"]


def _matches(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize("mode", ["import", "help"])
def test_the_help_loads_no_heavy_package_and_no_command_module(mode: str) -> None:
    loaded = _loaded(mode)
    forbidden = sorted(m for m in loaded if any(_matches(m, p) for p in FORBIDDEN))
    assert forbidden == [], f"voxbench {mode} loads: {forbidden}"
    cli_modules = {m for m in loaded if _matches(m, "voxbench.cli")}
    assert cli_modules <= {"voxbench.cli", "voxbench.cli.main"}, sorted(cli_modules)
    # Private top-level modules (``_cffi_backend``, ``_soundfile``) come with a package.
    tops = {m.split(".")[0] for m in loaded if not m.startswith("_")}
    unlisted = sorted(tops - set(sys.stdlib_module_names) - set(ALLOWED))
    assert unlisted == [], f"voxbench {mode} loads packages in neither list: {unlisted}"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_summary_in_the_table_is_the_commands_own(name: str) -> None:
    """The root help prints the table's summaries; each must stay the first help paragraph
    of the command it names (what the help printed when every command was imported)."""
    command = load_command(name)
    assert command.name == name
    assert not command.hidden and not command.deprecated
    assert not getattr(command, "rich_help_panel", None)
    first = (command.short_help or command.help or "").partition("\n\n")[0]
    assert first == COMMANDS[name][1]


def test_the_root_help_is_the_one_every_command_loaded_would_print(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    lazy = CliRunner().invoke(app, ["--help"])
    monkeypatch.setattr(LazyGroup, "get_command", TyperGroup.get_command)
    eager = CliRunner().invoke(app, ["--help"])
    assert lazy.exit_code == eager.exit_code == 0
    assert lazy.output == eager.output
    assert all(f" {name} " in lazy.output for name in COMMANDS)


def test_the_command_tree_is_whole_for_those_who_walk_it() -> None:
    """Tests (and tools) that walk ``typer.main.get_command(app).commands`` see every
    command and every subcommand, in the help's order."""
    root = typer.main.get_command(app)
    assert list(root.commands) == list(COMMANDS)  # type: ignore[attr-defined]
    tasks = root.commands["tasks"]  # type: ignore[attr-defined]
    assert "run" in tasks.commands
