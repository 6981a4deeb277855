"""``voxbench bench validate|stats|check``: work on benchmark packages."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from voxbench.benchmarks.consistency import consistency_problems
from voxbench.benchmarks.loader import load_benchmark, validate_benchmark
from voxbench.benchmarks.stats import benchmark_stats
from voxbench.cli.console import make_console
from voxbench.core.errors import BenchmarkError

app = typer.Typer(help="Validate, describe and check benchmark packages.", no_args_is_help=True)


@app.command("validate")
def validate(benchmark: str = typer.Argument(..., help="Benchmark name or directory.")) -> None:
    """Report every problem of a benchmark package, with file and field."""
    console = make_console()
    problems = validate_benchmark(benchmark)
    if not problems:
        console.print(f"[green]valid[/green]: {escape(benchmark)}")
        return
    for p in problems:
        console.print(f"[red]✗[/red] {escape(str(p))}")
    console.print(f"{len(problems)} problem(s)")
    raise typer.Exit(BenchmarkError.exit_code)  # an invalid package is a user error


@app.command("stats")
def stats(benchmark: str = typer.Argument(..., help="Benchmark name or directory.")) -> None:
    """Turns per category, tools, expected calls, knowledge-base tokens."""
    console = make_console()
    b = load_benchmark(benchmark)
    s = benchmark_stats(b)
    console.print(
        f"[b]{escape(b.id)}[/b] v{escape(b.version)}: {s.turns} turns, {s.tools} tools, {s.expected_calls} expected calls "
        f"on {s.tool_turns} turns, {s.forbidden_calls} forbidden calls, {s.facts} fact checks, "
        f"knowledge base {s.kb_lines} lines ≈ {s.kb_tokens:,} tokens (system prompt ≈ {s.prompt_tokens:,}), "
        f"{s.audio_turns} turns with audio"
    )
    table = Table(title_justify="left")
    table.add_column("category")
    table.add_column("turns", justify="right")
    for cat, n in s.categories.items():
        table.add_row(escape(cat), str(n))
    console.print(table)
    dims = Table(title_justify="left")
    dims.add_column("dimension")
    dims.add_column("scored on turns", justify="right")
    for dim, n in s.dimensions.items():
        dims.add_row(escape(dim), str(n))
    console.print(dims)


@app.command("check")
def check(benchmark: str = typer.Argument(..., help="Benchmark name or directory.")) -> None:
    """Consistency checks: data agrees with itself, and the oracle scores 100%."""
    console = make_console()
    from voxbench.evaluation import oracle_check  # runs the oracle: the whole house loads

    b = load_benchmark(benchmark)
    problems = consistency_problems(b) + oracle_check(b)
    if not problems:
        console.print(
            f"[green]consistent[/green]: {escape(b.id)} (static checks pass; the oracle scores 100% "
            "on every deterministic check)"
        )
        return
    for p in problems:
        console.print(f"[red]✗[/red] {escape(p)}")
    raise typer.Exit(BenchmarkError.exit_code)  # an invalid package is a user error
