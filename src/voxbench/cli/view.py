"""``voxbench view``: the local web viewer of the runs under a directory."""

from __future__ import annotations

from pathlib import Path

import typer

from voxbench.cli.console import escape, make_console
from voxbench.cli.store import STORE_HELP
from voxbench.core.errors import ConfigError
from voxbench.store import open_store
from voxbench.viewer import LOOPBACK


def view_command(
    runs_dir: Path = typer.Argument(Path("runs"), help="Directory of run directories."),
    port: int = typer.Option(8765, "--port", "-p", help="Port on 127.0.0.1."),
    store: str = typer.Option(None, "--store", help=STORE_HELP),
    host: str = typer.Option(
        LOOPBACK,
        "--host",
        help="Address to listen on; anything but 127.0.0.1 shows your runs to the network.",
    ),
    bundle: Path = typer.Option(
        None,
        "--bundle",
        help="Write the leaderboard and every run page, with their clips, as a static folder "
        "here (opens from disk, search works offline) instead of serving.",
    ),
) -> None:
    """Serve the leaderboard, run pages and comparisons at http://127.0.0.1:PORT/ (or, with
    --bundle OUT, write them as a static folder to send)."""
    console = make_console()
    if not runs_dir.is_dir():
        raise ConfigError(
            "no such directory", file=runs_dir, field="DIR", expected="a runs directory"
        )
    if bundle is not None:
        from voxbench.viewer.bundle import write_bundle

        with open_store(store, runs_dir) as db:
            written = write_bundle(runs_dir, db, bundle)
        console.print(
            f"wrote {len(written.runs)} run page(s) and the leaderboard: "
            f"{escape(str(bundle / 'index.html'))}"
        )
        return
    if not 0 < port < 65536:
        raise ConfigError(f"{port} is not a port", field="--port", expected="1-65535")
    from voxbench.viewer.app import serve  # the web stack loads only for this command

    with open_store(store, runs_dir) as db:
        if host != LOOPBACK:
            console.print(
                f"[yellow]warning:[/yellow] listening on {escape(host)}: anyone who can reach it sees these runs"
            )
        console.print(
            f"voxbench viewer: [b]http://{escape(host)}:{port}/[/b]  (store: {escape(db.where)}; Ctrl-C stops)"
        )
        serve(runs_dir, db, port=port, host=host)
