"""``voxbench list benchmarks|targets|aliases``."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from voxbench.benchmarks.loader import builtin_benchmarks, load_benchmark
from voxbench.benchmarks.stats import benchmark_stats
from voxbench.targets.registry import aliases, providers

app = typer.Typer(help="List benchmarks, targets and aliases.", no_args_is_help=True)
console = Console()


@app.command("benchmarks")
def list_benchmarks() -> None:
    """Built-in benchmarks with their size."""
    table = Table(title="Built-in benchmarks", title_justify="left")
    for col in ("name", "version", "turns", "tools", "expected calls", "KB tokens", "description"):
        table.add_column(col, overflow="fold")
    for name in builtin_benchmarks():
        b = load_benchmark(name)
        s = benchmark_stats(b)
        table.add_row(
            b.id,
            b.version,
            str(s.turns),
            str(s.tools),
            str(s.expected_calls),
            f"~{s.kb_tokens:,}",
            b.description,
        )
    console.print(table)


@app.command("targets")
def list_targets() -> None:
    """Target providers, the kind of system each drives, and the env var it needs."""
    table = Table(title="Targets (use as provider/model)", title_justify="left")
    for col in ("provider", "kind", "models", "env var", "description"):
        table.add_column(col, overflow="fold")
    for p in providers():
        models = ", ".join(p.models) if p.models else (p.default_model or "any")
        table.add_row(p.name, p.kind, models, " or ".join(p.env_vars) or "—", p.description)
    console.print(table)


@app.command("aliases")
def list_aliases() -> None:
    """Short names and the provider/model they stand for."""
    table = Table(title="Aliases", title_justify="left")
    table.add_column("alias")
    table.add_column("stands for")
    table.add_column("env var")
    by_name = {p.name: p for p in providers()}
    for alias, full in aliases().items():
        provider = by_name.get(full.split("/", 1)[0])
        table.add_row(
            alias, full, " or ".join(provider.env_vars) if provider and provider.env_vars else "—"
        )
    console.print(table)
