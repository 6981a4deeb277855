"""The ``voxbench`` command: a table of commands, each module imported only when it is used.

``voxbench --help`` lists the commands from the table's summaries, so it imports none of
them (a command module pulls in its room: scipy, onnxruntime, the provider clients...);
``voxbench CMD ...`` and ``voxbench CMD --help`` import CMD's module alone. This is click's
"lazy loading subcommands" pattern on typer's group class."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from voxbench import __version__

COMMANDS: dict[str, tuple[str, str]] = {
    "run": (
        "voxbench.cli.run:run_command",
        "Run a benchmark against a target and print its scorecard.",
    ),
    "demo": (
        "voxbench.cli.run:demo_command",
        "The offline demo: the oracle and a local agent, scored side by side.",
    ),
    "show": (
        "voxbench.cli.show:show_command",
        "Show each turn of a run: user, agent, tool calls and verdicts (or a repeat group's"
        " summary).",
    ),
    "judge": (
        "voxbench.cli.judge:judge_command",
        "Judge a run: writes judged.jsonl, scorecard.json and report.md, prints the scorecard.",
    ),
    "compare": (
        "voxbench.cli.compare:compare_command",
        "Per-dimension pass rates of B against A, paired by turn (exact McNemar test).",
    ),
    "report": (
        "voxbench.cli.report:report_command",
        "Write a run's reports (judging a conversation run deterministically first if it was"
        " never judged); task runs and FDB scorings get their HTML page.",
    ),
    "analyze": (
        "voxbench.cli.analyze:analyze_command",
        "Latency per turn (TTFB, TTFT, first audio) and, for audio runs, turn-taking:"
        " voice-to-voice, silent padding, overlaps.",
    ),
    "fake-server": (
        "voxbench.cli.fake_server:fake_server_command",
        "Run a fake provider server (offline dry runs, adapter development) until Ctrl-C.",
    ),
    "synth": (
        "voxbench.cli.synth:synth_command",
        "Write each turn's audio (24 kHz mono WAV) and manifest.json; only changed turns are"
        " redone.",
    ),
    "download": (
        "voxbench.cli.download:download_command",
        "Download a public upstream benchmark (its Hugging Face dataset, audio included) and"
        " import it. With HF_HUB_OFFLINE=1 only the cache is used.",
    ),
    "matrix": (
        "voxbench.cli.matrix:matrix_command",
        "Run an evaluation matrix; finished runs are reused, interrupted ones resumed.",
    ),
    "robustness": (
        "voxbench.cli.robustness:robustness_command",
        "Run a benchmark clean and under a ladder of perturbations; report each dimension's"
        " drop (exact paired test, 95% interval), latency shifts and degradation curves (HTML).",
    ),
    "view": (
        "voxbench.cli.view:view_command",
        "Serve the leaderboard, run pages and comparisons at http://127.0.0.1:PORT/ (or, with"
        " --bundle OUT, write them as a static folder to send).",
    ),
    "doctor": (
        "voxbench.cli.doctor:doctor_command",
        "Versions of the packages and model files that change numbers, against the tested ones.",
    ),
    "list": (
        "voxbench.cli.listing:app",
        "List benchmarks, targets, pipelines, judges, ASR/TTS engines and aliases.",
    ),
    "bench": ("voxbench.cli.bench:app", "Validate, describe and check benchmark packages."),
    "fdb": (
        "voxbench.cli.fdb:app",
        "Full-Duplex-Bench: drive a target over FDB corpora and score the outputs.",
    ),
    "import": (
        "voxbench.cli.importing:app",
        "Import upstream benchmarks (ConversationBench, AIEWF) from a local checkout. Their"
        " Python files are parsed, never executed.",
    ),
    "tasks": (
        "voxbench.cli.tasks:app",
        "Evaluate audio models on audio tasks (ASR, translation, spoken QA, ...).",
    ),
    "store": ("voxbench.cli.store:app", "The results store: index runs, list them."),
    "judge-audio": (
        "voxbench.cli.judge_audio:app",
        "Judge audio with a rubric (G-Eval over audio). judge-audio FILE|DIR --rubric R"
        " [-o KEY=VALUE] --judge P/M [--samples N] [--json] prints a table per file and"
        " criterion; judge-audio calibrate RUBRIC DIR measures a judge against a labelled set."
        " judge-audio files --help lists the options.",
    ),
    "rubric": ("voxbench.cli.rubric:app", "Validate and show audio rubrics."),
    "tools": (
        "voxbench.cli.tools:app",
        "The benchmark's tools for an agent that owns its tools (HTTP or MCP).",
    ),
}
"""name → ("module:attribute", summary), in the order ``--help`` lists them. The attribute is
a command function or a ``typer.Typer`` group. The summary is the command's first help
paragraph on one line, as ``--help`` shows it (``tests/cli/test_import_budget.py`` checks that
it still is)."""


def _one_line_summaries(typer_app: typer.Typer) -> None:
    """Rich help prints a docstring's line breaks as they are, so a summary wrapped in the
    source broke mid-sentence in ``--help``'s command lists: each command's and group's first
    paragraph becomes one line (Rich wraps it to the terminal)."""

    def flowed(text: str | None) -> str | None:
        if not text:
            return text
        first, sep, rest = inspect.cleandoc(text).partition("\n\n")
        return " ".join(first.split()) + sep + rest

    for command in typer_app.registered_commands:
        command.help = flowed(command.help or inspect.getdoc(command.callback))
    for group in typer_app.registered_groups:
        sub = group.typer_instance
        if sub is not None:
            sub.info.help = flowed(sub.info.help)
            _one_line_summaries(sub)


_load_dotenv_first = False
"""Set while ``main`` runs: the user's ``.env`` is loaded before a command's module is imported
(a module may read the environment when imported), and not at all for ``--help``,
``--version`` or a mistyped command. Tests that call ``app`` directly load none, as before."""


def load_command(name: str) -> Any:
    """Import the module of command ``name`` and build its click command (or group), as
    ``app.command(name)`` / ``app.add_typer(..., name=name)`` would have."""
    if _load_dotenv_first:
        from voxbench.core.secrets import load_dotenv

        load_dotenv()
    module_name, _, attribute = COMMANDS[name][0].partition(":")
    target = getattr(importlib.import_module(module_name), attribute)
    holder = typer.Typer(
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
        suggest_commands=app.suggest_commands,
    )
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    _one_line_summaries(holder)
    return typer.main.get_group(holder).commands[name]


class _LazyCommands(MutableMapping[str, Any]):
    """The root group's ``commands``: every name of ``COMMANDS``, each command built on first
    access. Typer reads the names alone (``keys()``) to suggest a mistyped command's spelling;
    ``items()`` builds them all (the tests that walk the whole command tree)."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._built[name] = load_command(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError(f"the command {name!r} cannot be removed")

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._built if name not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(name not in COMMANDS for name in self._built)


class LazyGroup(TyperGroup):
    """The root group: a command is imported when it runs or its own help is asked; the
    group's help lists every command from its ``COMMANDS`` summary."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands()
        self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        # TyperGroup's own reads ``commands.items()``, which would build every command.
        return list(self.commands)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if self._listing and cmd_name in COMMANDS:
            # The help's command list reads only a command's name, help, hidden, deprecated
            # and panel; every command in the table has the defaults of the last three.
            return TyperCommand(name=cmd_name, help=COMMANDS[cmd_name][1])
        return self.commands.get(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="voxbench",
    help="Evaluate voice AI systems: spoken multi-turn conversations with tools, offline or against real providers.",
    cls=LazyGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"voxbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """voxbench: evaluate voice AI systems."""


# typer bundles its own copy of click (``typer._click``): ``click.ClickException`` from the
# click package is another class. Take the base class of typer's own usage errors instead.
_CLICK_ERRORS: tuple[type[Exception], ...] = tuple(
    {
        cls
        for cls in typer.BadParameter.__mro__
        if cls.__name__ == "ClickException" and issubclass(cls, Exception)
    }
)

USAGE_EXIT = 2
"""Exit code of a user error: a bad command line, option, config or input file."""

RETIRED_SPELLINGS: tuple[tuple[str, str, str], ...] = (
    ("fdb run", "No such option: -j", "-j now means --judge only; use --concurrency N"),
    ("import", "No such option: -o", "-o now means --option only; use --out DIR"),
    (
        "compare",
        "unexpected extra argument",
        "--json prints the comparison on stdout; --out FILE writes it to a file",
    ),
)
"""(command, usage error, hint): spellings issue 12 retired so a short flag or ``--json``
means one thing everywhere, and what to write instead."""

COMMON_SLIPS: tuple[tuple[str, str, str], ...] = (
    (
        "run",
        "No such option: --benchmark",
        "the benchmark is the first argument: voxbench run smoke --target local/oracle",
    ),
    (
        "tasks run",
        "No such option: --task",
        "tasks are chosen in the config: tasks: [builtin_en_asr] in eval.yaml",
    ),
)
"""(command, usage error, hint): options a new user reaches for that are spelled otherwise."""


def _with_hint(exc: Exception) -> Exception:
    """Add the replacement of a retired spelling, or the spelling a common slip meant, to
    the usage error it causes."""
    ctx = getattr(exc, "ctx", None)
    message = getattr(exc, "message", None)
    if ctx is None or not isinstance(message, str):
        return exc
    path = str(ctx.command_path)
    hints = [h for c, e, h in RETIRED_SPELLINGS if f" {c}" in f" {path}" and e in message]
    hints += [h for c, e, h in COMMON_SLIPS if _subcommand(ctx) == c and e in message]
    if hints:
        exc.message = f"{message} ({'; '.join(hints)})"  # type: ignore[attr-defined]
    return exc


def _subcommand(ctx: Any) -> str:
    """The command's path below the program (``tasks run``), whatever the program is called
    (``voxbench``, ``python -m voxbench.cli.main``, a test runner's name)."""
    names = []
    while ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(reversed(names))


def _error(message: str) -> None:
    from voxbench.cli.console import escape, make_console

    # soft_wrap: a long path stays on one line, whole, for the user to copy.
    make_console(stderr=True).print(
        "[red]error:[/red]", escape(message), highlight=False, soft_wrap=True
    )


def _voxbench_errors() -> tuple[type[Exception], ...]:
    """``VoxbenchError``, once a module has imported it: until then none can have been raised,
    and importing it (all of ``voxbench.core``, pydantic with it) only to catch nothing would
    cost ``voxbench --help`` a fifth of a second. An ``except`` clause's classes are looked
    up only when an exception reaches it."""
    errors = sys.modules.get("voxbench.core.errors")
    return (errors.VoxbenchError,) if errors is not None else ()


def main() -> None:
    """Entry point: user mistakes print a message and an exit code, never a traceback.

    Exit codes: 0 the evaluation completed (whatever the scores); 1 a ``--fail-under`` or
    ``--baseline`` gate failed; 2 a user error; 3 a missing or rejected credential; 4 the
    run could not be completed."""
    global _load_dotenv_first
    try:
        _load_dotenv_first = True
        try:
            # Without standalone mode click returns the code of a ``typer.Exit`` instead of
            # exiting.
            code = app(standalone_mode=False)
        finally:
            _load_dotenv_first = False
    except _voxbench_errors() as exc:
        _error(str(exc))
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    except KeyboardInterrupt:
        from voxbench.cli.console import make_console

        make_console(stderr=True).print("interrupted")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(1)
    except _CLICK_ERRORS as exc:
        _with_hint(exc).show()  # type: ignore[attr-defined]
        sys.exit(getattr(exc, "exit_code", USAGE_EXIT))
    except UnicodeDecodeError as exc:
        # A reader that forgot to say which file: still a message, not a traceback.
        _error(f"a file is not UTF-8 text: {exc}")
        sys.exit(USAGE_EXIT)
    except OSError as exc:
        # A path the user gave cannot be read or written (missing, a file, no permission).
        where = " → ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        _error(f"{where}: {exc.strerror or exc}" if where else str(exc))
        sys.exit(USAGE_EXIT)
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":
    main()
