"""The one parser of component names: ``provider/model`` for targets, judges, ASR and TTS.

A name splits at its first separator: ``/`` (the canonical spelling) or ``:`` (accepted as
an alias). Provider names never hold either, so the model part keeps every later ``/``,
``:`` and ``.``: ``bedrock/anthropic.claude-3-5-haiku-20241022-v1:0``, ``ollama/llama3.2:3b``,
``openrouter/meta-llama/llama-3.1-8b-instruct``, ``ollama:llama3.2:3b``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from voxbench.core.errors import ConfigError

_PROVIDER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class ComponentName:
    """A component named ``provider/model``; ``model`` is empty for a bare provider name."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}" if self.model else self.provider


def parse_component_name(
    text: str, *, field: str = "name", allow_bare: bool = False
) -> ComponentName:
    """``provider/model`` (or ``provider:model``) → ``ComponentName``.

    ``allow_bare`` accepts a name without a model (``openai``: the provider's default
    model); otherwise that is a ``ConfigError`` naming ``field``, as is an empty part.
    """
    name = text.strip() if isinstance(text, str) else ""
    cuts = [i for i in (name.find("/"), name.find(":")) if i >= 0]
    if cuts:
        cut = min(cuts)
        provider, model = name[:cut], name[cut + 1 :]
    else:
        provider, model = name, ""
    if not _PROVIDER.fullmatch(provider) or (not model and (cuts or not allow_bare)):
        raise ConfigError(
            f"{text!r} is not a component name",
            field=field,
            expected="provider/model, e.g. openai/gpt-4o-mini or local/espeak",
        )
    return ComponentName(provider, model)
