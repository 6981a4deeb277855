"""The ``voxbench`` command: mounts one module per command group, and nothing else."""

from __future__ import annotations

import inspect
import sys

import typer
from rich.markup import escape

from voxbench import __version__
from voxbench.cli import (
    analyze,
    bench,
    fake_server,
    importing,
    judge,
    listing,
    run,
    show,
    store,
    tasks,
    view,
)
from voxbench.cli.compare import compare_command
from voxbench.cli.console import make_console
from voxbench.cli.download import download_command
from voxbench.cli.fdb import app as fdb_app
from voxbench.cli.judge_audio import app as judge_audio_app
from voxbench.cli.matrix import matrix_command
from voxbench.cli.report import report_command
from voxbench.cli.rubric import app as rubric_app
from voxbench.cli.synth import synth_command
from voxbench.cli.tools import app as tools_app
from voxbench.core.errors import VoxbenchError
from voxbench.core.secrets import load_dotenv

app = typer.Typer(
    name="voxbench",
    help="Evaluate voice AI systems: spoken multi-turn conversations with tools, offline or against real providers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run")(run.run_command)
app.command("demo")(run.demo_command)
app.command("show")(show.show_command)
app.command("judge")(judge.judge_command)
app.command("compare")(compare_command)
app.command("report")(report_command)
app.command("analyze")(analyze.analyze_command)
app.command("fake-server")(fake_server.fake_server_command)
app.command("synth")(synth_command)
app.command("download")(download_command)
app.command("matrix")(matrix_command)
app.add_typer(listing.app, name="list")
app.add_typer(bench.app, name="bench")
app.add_typer(fdb_app, name="fdb")
app.add_typer(importing.app, name="import")
app.add_typer(tasks.app, name="tasks")
app.add_typer(store.app, name="store")
app.command("view")(view.view_command)
app.add_typer(judge_audio_app, name="judge-audio")
app.add_typer(rubric_app, name="rubric")
app.add_typer(tools_app, name="tools")


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


_one_line_summaries(app)


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
    hints += [h for c, e, h in COMMON_SLIPS if path == f"voxbench {c}" and e in message]
    if hints:
        exc.message = f"{message} ({'; '.join(hints)})"  # type: ignore[attr-defined]
    return exc


def _error(message: str) -> None:
    # soft_wrap: a long path stays on one line, whole, for the user to copy.
    make_console(stderr=True).print(
        "[red]error:[/red]", escape(message), highlight=False, soft_wrap=True
    )


def main() -> None:
    """Entry point: user mistakes print a message and an exit code, never a traceback.

    Exit codes: 0 the evaluation completed (whatever the scores); 1 a ``--fail-under`` or
    ``--baseline`` gate failed; 2 a user error; 3 a missing or rejected credential; 4 the
    run could not be completed."""
    load_dotenv()
    try:
        # Without standalone mode click returns the code of a ``typer.Exit`` instead of exiting.
        code = app(standalone_mode=False)
    except VoxbenchError as exc:
        _error(str(exc))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
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
