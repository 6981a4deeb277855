"""The ``voxbench`` command: mounts one module per command group, and nothing else."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape

from voxbench import __version__
from voxbench.cli import analyze, bench, fake_server, importing, judge, listing, run, show, tasks
from voxbench.cli.compare import compare_command
from voxbench.cli.fdb import app as fdb_app
from voxbench.cli.synth import synth_command
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
app.command("analyze")(analyze.analyze_command)
app.command("fake-server")(fake_server.fake_server_command)
app.command("synth")(synth_command)
app.add_typer(listing.app, name="list")
app.add_typer(bench.app, name="bench")
app.add_typer(fdb_app, name="fdb")
app.add_typer(importing.app, name="import")
app.add_typer(tasks.app, name="tasks")


def _version(value: bool) -> None:
    if value:
        print(f"voxbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """voxbench: evaluate voice AI systems."""


def main() -> None:
    """Entry point: user mistakes print a message and an exit code, never a traceback."""
    load_dotenv()
    try:
        # Without standalone mode click returns the code of a ``typer.Exit`` instead of exiting.
        code = app(standalone_mode=False)
    except VoxbenchError as exc:
        Console(stderr=True).print("[red]error:[/red]", escape(str(exc)), highlight=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        Console(stderr=True).print("interrupted")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(1)
    except Exception as exc:  # click usage errors
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":
    main()
