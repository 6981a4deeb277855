"""Check every credential a command needs before its first turn, not after the whole run.

``check_credentials(target, judge=..., stt=..., tts=...)`` raises the missing-key
``PrerequisiteError`` naming the env var(s) to set. The runner calls it for the target and
its cascade parts before a run starts or resumes; the CLI calls it with ``--judge`` too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from voxbench.core.errors import ConfigError, PrerequisiteError
from voxbench.core.names import parse_component_name
from voxbench.providers.registry import EnvVars, Provider, Role, resolve_name
from voxbench.targets.pipelines import route_target
from voxbench.targets.registry import TARGET_ROLES
from voxbench.targets.registry import aliases as target_aliases

SDK_CREDENTIAL_CHAIN = frozenset({"bedrock", "nova-sonic"})
"""Providers whose SDK finds credentials itself (AWS profiles, instance roles): not checked."""
_ENDPOINT_VARS = ("_ENDPOINT", "_BASE_URL")


def check_credentials(
    target: str | None,
    judge: str | None = None,
    stt: str | None = None,
    tts: str | None = None,
    *,
    base_url: str | None = None,
    target_options: Mapping[str, Any] | None = None,
) -> None:
    """Raise ``PrerequisiteError`` naming the env var of the first component missing its key.

    ``target`` may be a cascade (``cascade/openai/gpt-4o-mini``, checked with its ``stt``
    and ``tts`` from ``target_options``) or a realtime model; ``judge`` is an LLM judge name,
    ``stt`` / ``tts`` the speech engines of an audio run. A ``base_url`` pointing at a local
    server does not waive the key: the adapters send it all the same. Unknown names are left
    to the component's own loader (it reports them with the field to fix).
    """
    options = dict(target_options or {})
    if target is not None:
        _check_target(target, options, base_url)
    if judge is not None:
        _check(Role.TEXT_COMPLETION, judge, "the judge")
    if stt is not None and stt != "none":
        _check(Role.ASR, stt, "speech recognition")
    if tts is not None:
        _check(Role.TTS, tts, "speech synthesis")


def _check_target(name: str, options: dict[str, Any], base_url: str | None) -> None:
    if options.get("api_key"):
        return  # an explicit key in the target options
    name = route_target(name, dict(options))
    name = target_aliases().get(name, name)
    if name.startswith("cascade"):
        inner = parse_component_name(name, allow_bare=True).model
        for role, part, what in (
            (Role.ASR, options.get("stt"), "speech recognition"),
            (Role.TTS, options.get("tts"), "speech synthesis"),
        ):
            if part is not None and part != "none":
                _check(role, str(part), what)
        if inner:
            _check_target(inner, {}, base_url)
        return
    _check_roles(TARGET_ROLES, name, "the target", base_url)


def _check(role: Role, name: str, purpose: str) -> None:
    _check_roles((role,), name, purpose, None)


def _check_roles(roles: tuple[Role, ...], name: str, purpose: str, base_url: str | None) -> None:
    try:
        provider, parsed = resolve_name(name, *roles, allow_bare=True)
    except ConfigError:
        return  # a class path or a typo: reported where the component is built
    _require(provider, f"{purpose} {parsed.provider}/{parsed.model}".rstrip("/"), base_url)


def _require(provider: Provider, purpose: str, base_url: str | None) -> None:
    if provider.name in SDK_CREDENTIAL_CHAIN or not provider.key_required:
        return
    env: EnvVars = provider.env
    # An explicit --base-url replaces the endpoint variables (AZURE_OPENAI_ENDPOINT).
    skip = {v for v in env.names if v.endswith(_ENDPOINT_VARS)} if base_url else set()
    skip |= set(provider.base_url_vars) if base_url else set()
    missing = [v for v in env.all_of if v not in skip and not os.environ.get(v)]
    if env.any_of and not any(os.environ.get(v) for v in env.any_of):
        missing.append(" or ".join(env.any_of))
    if missing:
        raise PrerequisiteError(
            f"missing API key for {purpose}: set {' and '.join(missing)} "
            "(in the environment or .env)"
        )


def provider_env(target: str) -> EnvVars | None:
    """The env vars the target's provider needs (None for a class path or an unknown name)."""
    try:
        provider, _ = resolve_name(
            target_aliases().get(target, target), *TARGET_ROLES, allow_bare=True
        )
    except ConfigError:
        return None
    return provider.env
