"""LLM judge clients, one thin httpx module per provider, chosen by ``provider/model``.

``anthropic/MODEL``, ``openai/MODEL``, ``openai-compatible/MODEL`` (with a base URL) and
``gemini/MODEL``; ``provider:model`` is accepted too. Keys are read through
``core.secrets.get_secret``: a missing one raises ``PrerequisiteError`` naming the variable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import httpx

from voxbench.core.errors import ConfigError
from voxbench.core.secrets import get_secret
from voxbench.judging.llm.anthropic import AnthropicJudge
from voxbench.judging.llm.base import JudgeClient, JudgeReply, JudgeRequest
from voxbench.judging.llm.gemini import GeminiJudge
from voxbench.judging.llm.openai_chat import OpenAIChatJudge


@dataclass(frozen=True)
class JudgeProvider:
    """How to reach one provider: its key variables, default URL and URL override variable."""

    key_vars: tuple[str, ...]
    default_url: str | None
    url_var: str
    key_required: bool = True


JUDGE_PROVIDERS: dict[str, JudgeProvider] = {
    "openai": JudgeProvider(("OPENAI_API_KEY",), "https://api.openai.com/v1", "OPENAI_BASE_URL"),
    "openai-compatible": JudgeProvider(
        ("OPENAI_COMPATIBLE_API_KEY",), None, "OPENAI_COMPATIBLE_BASE_URL", key_required=False
    ),
    "anthropic": JudgeProvider(
        ("ANTHROPIC_API_KEY",), "https://api.anthropic.com", "ANTHROPIC_BASE_URL"
    ),
    "gemini": JudgeProvider(
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "https://generativelanguage.googleapis.com/v1beta",
        "GEMINI_BASE_URL",
    ),
}


def parse_judge_name(name: str) -> tuple[str, str]:
    """``provider/model`` or ``provider:model`` → ``(provider, model)``."""
    cuts = [i for i in (name.find("/"), name.find(":")) if i > 0]
    if cuts:
        provider, model = name[: min(cuts)], name[min(cuts) + 1 :]
        if provider in JUDGE_PROVIDERS and model:
            return provider, model
    raise ConfigError(
        f"unknown judge {name!r}",
        field="--judge",
        expected="provider/model with a provider among: " + ", ".join(JUDGE_PROVIDERS),
    )


def make_judge_client(
    name: str,
    *,
    base_url: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> JudgeClient:
    """The client for judge ``name``; raises if its key or base URL is missing."""
    provider, model = parse_judge_name(name)
    spec = JUDGE_PROVIDERS[provider]
    url = base_url or os.environ.get(spec.url_var) or spec.default_url
    if url is None:
        raise ConfigError(
            f"judge {provider}/{model} needs a base URL",
            field="--judge-base-url",
            expected=f"the server's URL, e.g. http://127.0.0.1:8000/v1 (or set {spec.url_var})",
        )
    key = get_secret(*spec.key_vars, required=spec.key_required, purpose=f"the {provider} judge")
    common = {"base_url": url, "api_key": key, "transport": transport}
    if provider in ("openai", "openai-compatible"):
        return OpenAIChatJudge(model, provider=provider, **common)
    if provider == "anthropic":
        return AnthropicJudge(model, **common)
    return GeminiJudge(model, **common)


__all__ = [
    "JUDGE_PROVIDERS",
    "AnthropicJudge",
    "GeminiJudge",
    "JudgeClient",
    "JudgeReply",
    "JudgeRequest",
    "OpenAIChatJudge",
    "make_judge_client",
    "parse_judge_name",
]
