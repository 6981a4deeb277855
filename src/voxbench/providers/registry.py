"""The one registry of providers, keyed by what each can do (its roles).

A provider registers once: its name, a description, the env vars it needs (``EnvVars``:
all of some, any of others), its default endpoint, and a factory per role it plays.
Roles: ``target`` (a conversation ``Session``), ``realtime`` (a speech-to-speech
``Session`` over a websocket), ``text_completion`` (system + user → text, for LLM judges),
``audio_completion`` (audio + prompt → text), ``asr`` and ``tts``. A room above this one
(``targets``) adds the roles it implements to a provider registered here with ``add_role``.

Built-in provider modules register on import and are imported lazily, on the first lookup;
they import optional SDKs only when a factory runs. Third-party packages register through
the ``voxbench.providers`` entry-point group.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from voxbench.core.errors import ConfigError
from voxbench.core.names import ComponentName, parse_component_name


class Role(StrEnum):
    """What a provider can be used as."""

    TARGET = "target"
    REALTIME = "realtime"
    TEXT_COMPLETION = "text_completion"
    AUDIO_COMPLETION = "audio_completion"
    ASR = "asr"
    TTS = "tts"


ROLE_FIELDS: Mapping[Role, str] = {
    Role.TARGET: "target",
    Role.REALTIME: "target",
    Role.TEXT_COMPLETION: "judge",
    Role.AUDIO_COMPLETION: "model",
    Role.ASR: "asr",
    Role.TTS: "tts",
}
"""The option a name of each role comes from, for error messages."""

ROLE_LABELS: Mapping[Role, str] = {
    Role.TARGET: "target",
    Role.REALTIME: "target",
    Role.TEXT_COMPLETION: "judge",
    Role.AUDIO_COMPLETION: "audio model",
    Role.ASR: "ASR",
    Role.TTS: "TTS",
}
"""What a user calls a component of each role."""


@dataclass(frozen=True)
class EnvVars:
    """The environment a provider needs: every one of ``all_of`` and one of ``any_of``."""

    all_of: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every variable named, in order."""
        return (*self.all_of, *self.any_of)

    def describe(self) -> str:
        """``A and B``, ``A or B``, ``A and (B or C)``; empty when nothing is needed."""
        every = " and ".join(self.all_of)
        either = " or ".join(self.any_of)
        if every and either:
            return f"{every} and ({either})" if len(self.any_of) > 1 else f"{every} and {either}"
        return every or either


@dataclass(frozen=True)
class Capability:
    """One role a provider plays: the factory, and what listings say about it."""

    factory: Callable[..., Any]
    description: str = ""
    """What this role of the provider is (the provider's description when empty)."""
    kind: str = ""
    """For targets: ``local``, ``text``, ``realtime`` or ``cascade``."""
    default_model: str | None = None
    models: tuple[str, ...] = ()
    """Known model names, for listings (any name is accepted)."""
    options: frozenset[str] | None = None
    """For targets: the ``-o KEY=VALUE`` keys this role reads; None when not declared."""


@dataclass(frozen=True)
class Provider:
    """One provider: who it is, what it needs, and a factory per role it plays."""

    name: str
    description: str
    env: EnvVars = field(default_factory=EnvVars)
    default_base_url: str | None = None
    base_url_vars: tuple[str, ...] = ()
    """Env vars that override ``default_base_url``, the first set one wins."""
    roles: Mapping[Role, Capability] = field(default_factory=dict)
    key_vars: tuple[str, ...] = ()
    """Env vars holding the API key, in order of preference (empty: no key or not one var)."""
    key_required: bool = True
    """False where a key is optional (a local server)."""

    def capability(self, role: Role) -> Capability:
        """What this provider does as ``role``; ``ConfigError`` when it does not play it."""
        try:
            return self.roles[role]
        except KeyError:
            can = ", ".join(r.value for r in self.roles) or "nothing"
            raise ConfigError(
                f"provider {self.name!r} cannot be used as {role.value} (it provides: {can})",
                field=ROLE_FIELDS[role],
                expected="a provider among: " + ", ".join(p.name for p in providers_for(role)),
            ) from None


BUILTIN_MODULES: tuple[str, ...] = (
    "voxbench.providers.openai_compat",
    "voxbench.providers.anthropic",
    "voxbench.providers.gemini",
    "voxbench.providers.bedrock",
    "voxbench.providers.speech",
    "voxbench.providers.speech_vendors",
)
"""Modules that register the built-in providers on import (no optional SDK at module level)."""

ENTRY_POINT_GROUP = "voxbench.providers"

_PROVIDERS: dict[str, Provider] = {}
_ALIASES: dict[str, str] = {}
_PROVIDER_ALIASES: dict[str, str] = {
    "google": "gemini",
    "ultravox-realtime": "ultravox",
    "grok-realtime": "xai-realtime",
}
"""Other spellings of a provider's name (``google/gemini-2.5-flash`` is ``gemini/...``)."""
_LOADED = False


def register(provider: Provider, *, aliases: Mapping[str, str] | None = None) -> None:
    """Add ``provider``; registering a known name again adds its roles and fills what was unset."""
    known = _PROVIDERS.get(provider.name)
    if known is not None:
        provider = _merge(known, provider)
    _PROVIDERS[provider.name] = provider
    _ALIASES.update(aliases or {})


def register_provider_alias(alias: str, provider: str) -> None:
    """Let ``alias/model`` stand for ``provider/model`` (a plug-in's other spelling)."""
    if alias in _PROVIDERS:
        raise ConfigError(f"provider alias {alias!r} is already a provider's name")
    _PROVIDER_ALIASES[alias] = provider


def add_role(name: str, role: Role, capability: Capability) -> None:
    """Give the registered provider ``name`` one more role."""
    ensure_loaded()
    known = _PROVIDERS.get(name)
    if known is None:
        raise ConfigError(f"cannot add role {role.value} to unknown provider {name!r}")
    register(replace(known, roles={role: capability}))


def _merge(old: Provider, new: Provider) -> Provider:
    changes: dict[str, Any] = {"roles": {**old.roles, **new.roles}}
    for name in ("description", "default_base_url", "base_url_vars", "key_vars"):
        if not getattr(old, name) and getattr(new, name):
            changes[name] = getattr(new, name)
    if not old.env.names and new.env.names:
        changes["env"] = new.env
    return replace(old, **changes)


def ensure_loaded() -> None:
    """Import the built-in provider modules and the entry-point plug-ins (once)."""
    # Lazy: ``import voxbench`` stays light, and a provider's SDK may be missing until used.
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()


def all_providers() -> list[Provider]:
    """Every registered provider, sorted by name."""
    ensure_loaded()
    return sorted(_PROVIDERS.values(), key=lambda p: p.name)


def providers_for(*roles: Role) -> list[Provider]:
    """The providers that play any of ``roles``, sorted by name."""
    return [p for p in all_providers() if any(r in p.roles for r in roles)]


def find_provider(name: str) -> Provider | None:
    """The provider called ``name``, or None."""
    ensure_loaded()
    return _PROVIDERS.get(name)


def aliases() -> dict[str, str]:
    """Bare names and the ``provider/model`` they stand for."""
    ensure_loaded()
    return dict(sorted(_ALIASES.items()))


def provider_aliases() -> dict[str, str]:
    """Other names of providers and the provider each stands for."""
    ensure_loaded()
    return dict(sorted(_PROVIDER_ALIASES.items()))


def canonical_provider(name: str) -> str:
    """The provider's own name for ``name`` (itself when it is not an alias)."""
    return _PROVIDER_ALIASES.get(name, name)


def resolve_name(
    name: str, *roles: Role, field: str | None = None, allow_bare: bool = False
) -> tuple[Provider, ComponentName]:
    """Parse ``name`` (or an alias) and find its provider among those playing ``roles``.

    A provider alias (``google/...``) resolves to its provider (``gemini/...``).
    ``allow_bare`` accepts a provider name alone (its default model). An unknown provider
    is a ``ConfigError`` naming the field and listing the providers that would do.
    """
    ensure_loaded()
    field = field or ROLE_FIELDS[roles[0]]
    parsed = parse_component_name(_ALIASES.get(name, name), field=field, allow_bare=allow_bare)
    parsed = ComponentName(canonical_provider(parsed.provider), parsed.model)
    provider = _PROVIDERS.get(parsed.provider)
    if provider is None or not any(r in provider.roles for r in roles):
        known = sorted({p.name for p in providers_for(*roles)})
        raise ConfigError(
            f"unknown {ROLE_LABELS[roles[0]]} provider {parsed.provider!r} in {name!r}",
            field=field,
            expected="provider/model with a provider among: " + ", ".join(known),
        )
    default = next((provider.roles[r].default_model for r in roles if r in provider.roles), None)
    if not parsed.model and default:
        parsed = ComponentName(parsed.provider, default)
    return provider, parsed


def make(role: Role, name: str, **kwargs: Any) -> Any:
    """Build the ``role`` client called ``name`` (``provider/model``); kwargs go to its factory."""
    provider, parsed = resolve_name(name, role)
    return provider.capability(role).factory(parsed.model, **kwargs)
