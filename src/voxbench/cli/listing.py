"""``voxbench list benchmarks|targets|pipelines|judges|asr|tts|aliases``: read from the registry.

Every listing takes ``--json`` (an array of objects on stdout) and never cuts a name across
lines, whether printed in a terminal, a narrow one, or into a pipe (see ``cli.tables``).
"""

from __future__ import annotations

import typer

from voxbench.benchmarks.loader import builtin_benchmarks, load_benchmark
from voxbench.benchmarks.stats import benchmark_stats
from voxbench.cli.tables import Column, Listing, print_listings
from voxbench.core.names import parse_component_name
from voxbench.providers.registry import (
    Provider,
    Role,
    find_provider,
    provider_aliases,
    providers_for,
)
from voxbench.targets.registry import aliases, providers

app = typer.Typer(
    help="List benchmarks, targets, pipelines, judges, ASR/TTS engines and aliases.",
    no_args_is_help=True,
)

JSON_HELP = "Print the listing as JSON on stdout (an array of objects)."
_JSON = typer.Option(False, "--json", help=JSON_HELP)


@app.command("benchmarks")
def list_benchmarks(as_json: bool = _JSON) -> None:
    """Built-in benchmarks with their size."""
    listing = Listing(
        "benchmarks",
        "Built-in benchmarks",
        [
            Column("name", name=True),
            Column("version", name=True),
            Column("turns"),
            Column("tools"),
            Column("expected_calls"),
            Column("kb_tokens", "KB tokens"),
            Column("description"),
        ],
    )
    for name in builtin_benchmarks():
        b = load_benchmark(name)
        s = benchmark_stats(b)
        listing.add(
            name=b.id,
            version=b.version,
            turns=s.turns,
            tools=s.tools,
            expected_calls=s.expected_calls,
            kb_tokens=s.kb_tokens,
            description=b.description,
        )
    print_listings([listing], as_json=as_json)


@app.command("targets")
def list_targets(as_json: bool = _JSON) -> None:
    """Target providers, the kind of system each drives, and the env vars it needs."""
    other_names = _aliases_by_provider()
    listing = Listing(
        "targets",
        "Targets (use as provider/model)",
        [
            Column("provider", name=True),
            Column("kind"),
            Column("models"),
            Column("env", "env vars"),
            Column("aliases"),
            Column("description"),
        ],
    )
    for p in providers():
        listing.add(
            provider=p.name,
            kind=p.kind,
            models=list(p.models) or [p.default_model or "any"],
            env=p.requirement.describe(),
            aliases=other_names.get(p.name, []),
            description=p.description,
        )
    print_listings([listing], as_json=as_json)


@app.command("pipelines")
def list_pipelines(as_json: bool = _JSON) -> None:
    """How a target is run: realtime, text or cascade, each stage's engines and their keys."""
    from voxbench.targets.cascade import DEFAULT_STT, DEFAULT_TTS
    from voxbench.targets.pipelines import REALTIME_NAME_HINT, REALTIME_PROVIDER_OF

    listing = Listing(
        "pipelines",
        "Pipelines (chosen from the target name; -o pipeline=text|realtime overrides)",
        [
            Column("pipeline", name=True),
            Column("stage", name=True),
            Column("provider", name=True),
            Column("env", "env vars"),
            Column("used_when", "used when"),
        ],
    )
    targets = providers()  # loads the target providers too
    for target in (p for p in targets if p.kind == "realtime"):
        vendors = [v for v, p in REALTIME_PROVIDER_OF.items() if p == target.name != v]
        routed = ", ".join(f"{v}/<model>" for v in vendors)
        listing.add(
            pipeline="realtime",
            stage="speech-to-speech",
            provider=target.name,
            env=target.requirement.describe(),
            used_when=f"{target.name}/<model>"
            + (f", or {routed} named with {REALTIME_NAME_HINT}" if routed else ""),
        )
    listing.add(
        pipeline="text",
        stage="llm",
        provider="<a text provider>",
        env="its own (voxbench list targets)",
        used_when="any other provider/model ("
        + ", ".join(p.name for p in targets if p.kind == "text")
        + "); in --mode audio it runs inside the cascade",
    )
    cascade_when = "cascade/<text target>, or a text target in --mode audio"
    for stage, role, default, flag in (
        ("stt", Role.ASR, DEFAULT_STT, "--stt"),
        ("llm", None, None, None),
        ("tts", Role.TTS, DEFAULT_TTS, "--tts"),
    ):
        if role is None or default is None:  # the llm stage: any text target, no default
            listing.add(
                pipeline="cascade",
                stage=stage,
                provider="<any text target>",
                env="the text target's",
                used_when=cascade_when,
            )
            continue
        for provider in providers_for(role):
            models = provider.roles[role].models
            default_here = parse_component_name(default).provider == provider.name
            listing.add(
                pipeline="cascade",
                stage=stage,
                provider=provider.name,
                env=provider.env.describe(),
                used_when=f"{flag} {provider.name}/<model> ({', '.join(models) or 'any'})"
                + (f"; default {default}" if default_here else ""),
            )
    print_listings([listing], as_json=as_json)


def _list_role(role: Role, key: str, title: str, as_json: bool) -> None:
    other_names = _aliases_by_provider()
    listing = Listing(
        key,
        title,
        [
            Column("provider", name=True),
            Column("models"),
            Column("env", "env vars"),
            Column("base_url", "base URL"),
            Column("aliases"),
            Column("description"),
        ],
    )
    for provider in providers_for(role):
        capability = provider.roles[role]
        url = provider.default_base_url or ""
        if provider.base_url_vars:
            url += f" (or {' / '.join(provider.base_url_vars)})"
        listing.add(
            provider=provider.name,
            models=list(capability.models) or [capability.default_model or "any"],
            env=provider.env.describe(),
            base_url=url.strip(),
            aliases=other_names.get(provider.name, []),
            description=capability.description or provider.description,
        )
    print_listings([listing], as_json=as_json)


@app.command("judges")
def list_judges(as_json: bool = _JSON) -> None:
    """Providers an LLM judge can run on (the text_completion role)."""
    _list_role(Role.TEXT_COMPLETION, "judges", "Judges (use as --judge provider/model)", as_json)


@app.command("asr")
def list_asr(as_json: bool = _JSON) -> None:
    """Speech recognition engines."""
    _list_role(Role.ASR, "asr", "ASR engines (use as provider/model)", as_json)


@app.command("tts")
def list_tts(as_json: bool = _JSON) -> None:
    """Text-to-speech engines."""
    _list_role(Role.TTS, "tts", "TTS engines (use as provider/model)", as_json)


@app.command("aliases")
def list_aliases(as_json: bool = _JSON) -> None:
    """Short names and what they stand for: a provider/model, or another provider's name."""
    listing = Listing(
        "aliases",
        "Aliases",
        [
            Column("alias", name=True),
            Column("stands_for", "stands for", name=True),
            Column("kind"),
            Column("env", "env vars"),
        ],
    )
    for alias, full in aliases().items():
        provider = find_provider(parse_component_name(full, field="alias").provider)
        listing.add(alias=alias, stands_for=full, kind="target", env=_env(provider))
    for alias, name in provider_aliases().items():
        listing.add(
            alias=f"{alias}/<model>",
            stands_for=f"{name}/<model>",
            kind="provider",
            env=_env(find_provider(name)),
        )
    print_listings([listing], as_json=as_json)


def _env(provider: Provider | None) -> str:
    return provider.env.describe() if provider is not None else ""


def _aliases_by_provider() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for alias, name in provider_aliases().items():
        out.setdefault(name, []).append(alias)
    return out
