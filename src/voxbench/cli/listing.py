"""``voxbench list benchmarks|targets|judges|asr|tts|aliases``: read from the provider registry."""

from __future__ import annotations

import typer
from rich.table import Table

from voxbench.benchmarks.loader import builtin_benchmarks, load_benchmark
from voxbench.benchmarks.stats import benchmark_stats
from voxbench.cli.console import make_console
from voxbench.core.names import parse_component_name
from voxbench.providers.registry import Role, providers_for
from voxbench.targets.registry import aliases, providers

app = typer.Typer(
    help="List benchmarks, targets, judges, ASR/TTS engines and aliases.", no_args_is_help=True
)
console = make_console()


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
    """Target providers, the kind of system each drives, and the env vars it needs."""
    table = Table(title="Targets (use as provider/model)", title_justify="left")
    for col in ("provider", "kind", "models", "env vars", "description"):
        table.add_column(col, overflow="fold")
    for p in providers():
        models = ", ".join(p.models) if p.models else (p.default_model or "any")
        table.add_row(p.name, p.kind, models, p.requirement.describe() or "—", p.description)
    console.print(table)


def _list_role(role: Role, title: str) -> None:
    table = Table(title=title, title_justify="left")
    for col in ("provider", "models", "env vars", "base URL", "description"):
        table.add_column(col, overflow="fold")
    for provider in providers_for(role):
        capability = provider.roles[role]
        models = ", ".join(capability.models) or capability.default_model or "any"
        url = provider.default_base_url or "—"
        if provider.base_url_vars:
            url += f" (or {' / '.join(provider.base_url_vars)})"
        table.add_row(
            provider.name,
            models,
            provider.env.describe() or "—",
            url,
            capability.description or provider.description,
        )
    console.print(table)


@app.command("judges")
def list_judges() -> None:
    """Providers an LLM judge can run on (the text_completion role)."""
    _list_role(Role.TEXT_COMPLETION, "Judges (use as --judge provider/model)")


@app.command("asr")
def list_asr() -> None:
    """Speech recognition engines."""
    _list_role(Role.ASR, "ASR engines (use as provider/model)")


@app.command("tts")
def list_tts() -> None:
    """Text-to-speech engines."""
    _list_role(Role.TTS, "TTS engines (use as provider/model)")


@app.command("aliases")
def list_aliases() -> None:
    """Short names and the provider/model they stand for."""
    table = Table(title="Aliases", title_justify="left")
    table.add_column("alias")
    table.add_column("stands for")
    table.add_column("env vars")
    by_name = {p.name: p for p in providers()}
    for alias, full in aliases().items():
        provider = by_name.get(parse_component_name(full, field="alias").provider)
        needs = provider.requirement.describe() if provider else ""
        table.add_row(alias, full, needs or "—")
    console.print(table)
