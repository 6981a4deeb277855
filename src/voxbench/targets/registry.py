"""The registry of targets: ``provider/model`` names → factories of ``Session``.

Each provider registers one ``TargetProvider``. A target name is split at the first ``/``
(``provider:model`` is accepted too); a bare name is looked up in the alias table
(``oracle`` → ``local/oracle``). ``--service`` / ``--target`` may also be a fully-qualified
class path (``mypkg.adapters:MySession``) for a user's own adapter: the class is built with
the same ``TargetContext``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from voxbench.core.benchmark import Benchmark
from voxbench.core.errors import ConfigError
from voxbench.core.session import Session
from voxbench.targets.pipelines import route_target


@dataclass(frozen=True)
class TargetContext:
    """What a target factory gets: the model, the benchmark being run, and user options."""

    model: str
    benchmark: Benchmark | None = None
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


SessionFactory = Callable[[TargetContext], Session]


@dataclass(frozen=True)
class TargetProvider:
    """A provider of targets."""

    name: str
    factory: SessionFactory
    description: str
    kind: str
    """``local``, ``text``, ``realtime`` or ``cascade``."""
    env_vars: tuple[str, ...] = ()
    default_model: str | None = None
    models: tuple[str, ...] = ()
    """Known model names, for listings (any name is accepted)."""


BUILTIN_PROVIDER_MODULES: tuple[str, ...] = (
    "voxbench.targets.local",
    "voxbench.targets.cascade",
    "voxbench.targets.openai_chat",
    "voxbench.targets.anthropic",
    "voxbench.targets.gemini",
    "voxbench.targets.bedrock",
    "voxbench.targets.realtime.providers",
)
"""Modules that register the built-in providers on import. They must not import optional
SDKs at module level: an SDK is imported when its provider's factory runs."""

_PROVIDERS: dict[str, TargetProvider] = {}
_ALIASES: dict[str, str] = {}
_LOADED = False


def register_provider(provider: TargetProvider, aliases: dict[str, str] | None = None) -> None:
    """Add a provider (and optional bare-name aliases for its targets)."""
    _PROVIDERS[provider.name] = provider
    _ALIASES.update(aliases or {})


def _ensure_loaded() -> None:
    # Providers register on import; importing them lazily keeps ``import voxbench`` light
    # and lets a provider's optional SDK be missing until it is chosen.
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for module in BUILTIN_PROVIDER_MODULES:
        importlib.import_module(module)
    from importlib.metadata import entry_points

    for ep in entry_points(group="voxbench.targets"):
        ep.load()


def providers() -> list[TargetProvider]:
    """Every registered provider, sorted by name."""
    _ensure_loaded()
    return sorted(_PROVIDERS.values(), key=lambda p: p.name)


def aliases() -> dict[str, str]:
    """Bare names and what they stand for."""
    _ensure_loaded()
    return dict(sorted(_ALIASES.items()))


def split_name(name: str) -> tuple[str, str]:
    """``provider/model`` (or ``provider:model``, or an alias) → ``(provider, model)``."""
    _ensure_loaded()
    name = _ALIASES.get(name, name)
    for sep in ("/", ":"):
        if sep in name:
            provider, model = name.split(sep, 1)
            if provider in _PROVIDERS:
                return provider, model
    if name in _PROVIDERS:
        return name, _PROVIDERS[name].default_model or ""
    known = ", ".join(sorted([*_PROVIDERS, *_ALIASES]))
    raise ConfigError(
        f"unknown target {name!r}",
        field="target",
        expected=f"provider/model with a provider among: {known}",
    )


def resolve_target(
    name: str,
    *,
    benchmark: Benchmark | None = None,
    base_url: str | None = None,
    options: dict[str, Any] | None = None,
) -> Callable[[], Session]:
    """A zero-argument factory that opens a fresh ``Session`` of target ``name``.

    The runner calls it again to reconnect or resume, so each call must give a new session.
    """
    options = dict(options or {})
    name = route_target(name, options)  # openai/gpt-realtime → openai-realtime/gpt-realtime
    if _is_class_path(name):
        cls = _import_class(name)
        context = TargetContext(model=name, benchmark=benchmark, base_url=base_url, options=options)
        return lambda: cls(context)
    provider_name, model = split_name(name)
    provider = _PROVIDERS[provider_name]
    context = TargetContext(model=model, benchmark=benchmark, base_url=base_url, options=options)
    return lambda: provider.factory(context)


def canonical_name(name: str) -> str:
    """The ``provider/model`` spelling of a target name."""
    if _is_class_path(name):
        return name
    provider, model = split_name(name)
    return f"{provider}/{model}" if model else provider


def _is_class_path(name: str) -> bool:
    # ``pkg.module:Class`` or ``pkg.module.Class``; never a ``provider/model`` name, whose
    # model part may hold dots and colons (``bedrock/anthropic.claude-…-v1:0``, ``ollama/x:3b``).
    return "/" not in name and "." in name.split(":")[0] and (":" in name or name.count(".") >= 2)


def _import_class(path: str) -> Callable[[TargetContext], Session]:
    module_name, _, attr = path.replace(":", ".").rpartition(".")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot import target class {path!r}: {exc}", field="target") from exc
    if not (isinstance(cls, type) and issubclass(cls, Session)):
        raise ConfigError(f"{path!r} is not a voxbench Session subclass", field="target")
    return cls
