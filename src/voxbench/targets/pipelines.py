"""Which pipeline a model needs: a realtime (speech-to-speech) socket or a text chat API.

Speech-to-speech models are often named under their vendor's text provider
(``openai/gpt-realtime``, ``gemini/gemini-2.5-flash-native-audio-...``). ``detect_pipeline``
recognises them by name and ``route_target`` rewrites such a name to the vendor's realtime
provider (``openai-realtime/gpt-realtime``), unless ``options["pipeline"]`` says otherwise
(``"text"`` keeps the text provider, ``"realtime"`` forces the realtime one).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from voxbench.core.errors import ConfigError
from voxbench.core.names import parse_component_name
from voxbench.providers.registry import canonical_provider

Pipeline = Literal["realtime", "text"]

_REALTIME_NAME = re.compile(
    r"realtime|native-audio|ultravox|nova(-\d+)?-sonic|grok-voice|(^|[-_./:])live([-_./:]|$)",
    re.IGNORECASE,
)
REALTIME_NAME_HINT = "realtime, native-audio, live, ultravox, grok-voice or nova-sonic"
"""What ``_REALTIME_NAME`` looks for, in words (for listings)."""
_NOVA_SONIC = re.compile(r"nova(-\d+)?-sonic", re.IGNORECASE)

REALTIME_PROVIDER_OF: dict[str, str] = {
    "openai": "openai-realtime",
    "azure-openai": "azure-openai-realtime",
    "azure": "azure-openai-realtime",
    "xai": "xai-realtime",
    "grok": "xai-realtime",
    "gemini": "gemini-live",
    "google": "gemini-live",
    "ultravox": "ultravox",
    "bedrock": "nova-sonic",
}
"""Text (or vendor) provider → the provider of its realtime models."""


def detect_pipeline(model: str) -> Pipeline:
    """``"realtime"`` for speech-to-speech model names, ``"text"`` otherwise."""
    return "realtime" if _REALTIME_NAME.search(model) else "text"


def route_target(name: str, options: dict[str, Any] | None = None) -> str:
    """Rewrite ``vendor/realtime-model`` to ``vendor-realtime/realtime-model``.

    Names already on a realtime provider, class paths and text models pass unchanged.
    """
    pipeline = (options or {}).get("pipeline")
    if pipeline not in (None, "realtime", "text"):
        raise ConfigError(
            f"unknown pipeline {pipeline!r}",
            field="target_options.pipeline",
            expected="realtime or text",
        )
    provider, model = _split(name)
    if provider == "bedrock" and _NOVA_SONIC.search(model) and pipeline == "text":
        raise ConfigError(
            f"{name}: Amazon Nova Sonic is a speech-to-speech model with no text pipeline",
            field="target_options.pipeline",
            expected="realtime (it runs on the nova-sonic provider)",
        )
    if provider is None or provider in REALTIME_PROVIDER_OF.values():
        return name
    wanted = pipeline or detect_pipeline(model)
    realtime = REALTIME_PROVIDER_OF.get(provider)
    if wanted == "realtime" and realtime is not None:
        return f"{realtime}/{model}"
    if pipeline == "realtime":
        raise ConfigError(
            f"provider {provider!r} has no realtime adapter",
            field="target_options.pipeline",
            expected="a provider among " + ", ".join(sorted(REALTIME_PROVIDER_OF)),
        )
    return name


def _split(name: str) -> tuple[str | None, str]:
    # ``pkg.module:Class`` is a class path, not a provider: the name parser rejects its dots.
    try:
        parsed = parse_component_name(name, field="target")
    except ConfigError:
        return None, name
    return canonical_provider(parsed.provider), parsed.model
