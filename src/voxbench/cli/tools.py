"""``voxbench tools serve``: run a benchmark against an agent that calls its tools itself."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from voxbench.benchmarks.loader import load_benchmark
from voxbench.cli.console import escape, make_console
from voxbench.cli.run import _parse_options, _progress, _progress_callback, check_before_run
from voxbench.core.errors import ConfigError
from voxbench.evaluation import EvaluationOptions, evaluate_run
from voxbench.evaluation.gates import refuse_incomplete
from voxbench.report.terminal import scorecards_table
from voxbench.runner.config import build_config
from voxbench.runner.launch import new_run_path

app = typer.Typer(
    help="The benchmark's tools for an agent that owns its tools (HTTP or MCP).",
    no_args_is_help=True,
)


@app.command("serve")
def serve_command(
    benchmark: str = typer.Argument(..., help="Built-in benchmark name or a benchmark directory."),
    target: str = typer.Option(
        ..., "--target", "-t", help="The agent, e.g. websocket/ws://127.0.0.1:8765/agent."
    ),
    mcp: bool = typer.Option(False, "--mcp", help="Serve the tools as an MCP server (at /mcp)."),
    http: bool = typer.Option(False, "--http", help="Serve the tools as plain HTTP (default)."),
    port: int = typer.Option(8900, "--port", "-p", help="Port to listen on (0 picks a free one)."),
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        help="Address to listen on (default loopback only; another address exposes the tools "
        "to the network, behind the token).",
    ),
    run: Path = typer.Option(
        None, "--run", help="The run directory to record into (default: a new one in runs/)."
    ),
    mapping: Path = typer.Option(
        None, "--mapping", help="YAML mapping of the agent's tool names and argument paths."
    ),
    agent_owns_prompt: bool = typer.Option(
        False,
        "--agent-owns-prompt",
        help="Send the agent no system prompt; it reads the instructions from the server.",
    ),
    mode: str = typer.Option("text", "--mode", help="text or audio."),
    option: list[str] = typer.Option(None, "--option", "-o", help="Target option KEY=VALUE."),
    base_url: str = typer.Option(None, "--base-url", help="Endpoint override for the target."),
    only_turns: str = typer.Option(None, "--only-turns", help="Turn positions, e.g. 0,3-5."),
    runs_dir: Path = typer.Option(None, "--runs-dir", help="Where run directories go."),
    turn_timeout: float = typer.Option(None, "--turn-timeout", help="Seconds a turn may take."),
) -> None:
    """Serve BENCHMARK's tools, run BENCHMARK against the agent, and print the scorecard.

    Every call the agent makes to the served tools is recorded on the run's turn and judged
    like a call made over its session; the end state is the served backend's."""
    from voxbench.toolserver.guard import TOKEN_ENV, is_loopback
    from voxbench.toolserver.serve import build_bridge, run_with_served_tools

    console = make_console()
    if mcp and http:
        raise ConfigError("--mcp and --http both given", field="--mcp", expected="one of them")
    if mcp and not is_loopback(host):
        # The MCP server's Host/Origin checks (the SDK's) hold on loopback only, and it
        # takes no token: it is never put on the network.
        raise ConfigError(
            "--mcp serves on loopback only", field="--host", expected="127.0.0.1 or ::1"
        )
    flags = {
        "benchmark": benchmark,
        "target": target,
        "base_url": base_url,
        "only_turns": only_turns,
        "runs_dir": runs_dir,
        "turn_timeout": turn_timeout,
        "mode": mode,
        "target_options": _parse_options(option) if option else None,
    }
    config = build_config({k: v for k, v in flags.items() if v is not None})
    check_before_run(config, from_file=None)
    bridge = build_bridge(config, mapping)  # a bad mapping file stops here, before any run
    if run is not None and run.exists() and any(run.iterdir()):
        raise ConfigError(
            "already holds a run", file=run, field="--run", expected="a new directory"
        )
    path = run or new_run_path(config, load_benchmark(config.benchmark))
    path.mkdir(parents=True, exist_ok=True)

    if not is_loopback(host):
        console.print(
            f"[yellow]warning:[/yellow] listening on {escape(host)}: the tools are reachable "
            "from the network (every request still needs the token)",
            highlight=False,
        )

    def ready(url: str, token: str | None) -> None:
        where = "MCP (streamable HTTP)" if mcp else "HTTP: GET /tools, POST /tools/NAME"
        console.print(f"tools served at {escape(url)}  ({where}; instructions: ", end="")
        console.print("resource voxbench://instructions)" if mcp else "GET /instructions)")
        if token is not None:
            console.print(
                f"token for the agent: {escape(token)}  (send Authorization: Bearer TOKEN "
                f"with every request; set {TOKEN_ENV} to choose it)",
                highlight=False,
                soft_wrap=True,
            )

    with _progress(make_console(stderr=True)) as progress:
        on_turn = _progress_callback(progress, progress.add_task(target, total=None, last=""))
        path = asyncio.run(
            run_with_served_tools(
                config,
                transport="mcp" if mcp else "http",
                port=port,
                host=host,
                bridge=bridge,
                agent_owns_prompt=agent_owns_prompt,
                run_path=path,
                on_ready=ready,
                progress=on_turn,
            )
        )
    evaluation = evaluate_run(path, EvaluationOptions())
    card = evaluation.card
    console.print(scorecards_table([card], title=escape(f"{card.benchmark} · {card.target}")))
    where = escape(str(path))
    console.print(f"run directory: [b]{where}[/b]  (details: voxbench show {where})")
    refuse_incomplete(card, evaluation.records, evaluation.judgments, path)
