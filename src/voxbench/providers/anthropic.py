"""Anthropic: the Messages API as a text-completion client, and the provider's registration.

``POST {base_url}/v1/messages`` with ``x-api-key`` and ``anthropic-version``. A reply schema
is given as the ``input_schema`` of one tool the model is forced to call (``tool_choice`` of
type ``tool``), so the JSON arrives as that tool call's ``input``. The system block (for a
judge: instructions + knowledge base, identical on every call of a run) is marked for prompt
caching. ``ANTHROPIC_BASE_URL`` overrides the endpoint, as in Anthropic's SDKs.

The request carries only what the model takes (``providers.claude_models``): no
``temperature`` for the models that refuse sampling parameters (Opus 4.7 and later answer
it with a 400), and no forced ``tool_choice`` for a model that always thinks (``auto``
then, and the reply is validated by the caller as any text would be).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from voxbench.providers.claude_models import accepts_sampling, thinks_always
from voxbench.providers.completion import (
    Completion,
    CompletionRequest,
    HTTPCompletionClient,
    TextCompletionClient,
    protocol_error,
    resolve_endpoint,
)
from voxbench.providers.registry import (
    Capability,
    EnvVars,
    Provider,
    Role,
    find_provider,
    register,
)

API_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
BASE_URL_VARS = ("ANTHROPIC_BASE_URL",)
KEY_VARS = ("ANTHROPIC_API_KEY",)
MAX_TOKENS = 2048


def headers(api_key: str | None) -> dict[str, str]:
    """The Messages API request headers."""
    return {
        "content-type": "application/json",
        "anthropic-version": API_VERSION,
        "x-api-key": api_key or "",
    }


class AnthropicTextCompletion(HTTPCompletionClient, TextCompletionClient):
    """Text completion behind the Anthropic Messages API."""

    async def complete(self, request: CompletionRequest) -> Completion:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": MAX_TOKENS,
            "system": [
                {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
            ],
            "messages": [{"role": "user", "content": request.user}],
        }
        if request.temperature is not None and accepts_sampling(self.model):
            body["temperature"] = request.temperature
        if request.schema is not None:
            body["tools"] = [
                {
                    "name": request.schema_name,
                    "description": "Record your answer.",
                    "input_schema": request.schema,
                }
            ]
            body["tool_choice"] = (
                {"type": "auto"}
                if thinks_always(self.model)
                else {"type": "tool", "name": request.schema_name}
            )
        data = await self.post_json(
            f"{self.base_url}/v1/messages", body, headers(self.endpoint.api_key)
        )
        return self._reply(data, request.schema_name if request.schema is not None else None)

    def _reply(self, data: Any, tool_name: str | None) -> Completion:
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise protocol_error(self.name, "response has no content blocks")
        usage = data.get("usage") or {}
        counts = {
            "input_tokens": int(usage.get("input_tokens", 0) or 0),
            "output_tokens": int(usage.get("output_tokens", 0) or 0),
            "cache_read_input_tokens": int(usage.get("cache_read_input_tokens", 0) or 0),
            "cache_creation_input_tokens": int(usage.get("cache_creation_input_tokens", 0) or 0),
        }
        for block in blocks:
            if tool_name and block.get("type") == "tool_use" and block.get("name") == tool_name:
                return Completion(text=json.dumps(block.get("input")), usage=counts)
        # No tool call: whatever text came back goes to the caller's validation.
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        return Completion(text=text, usage=counts)


def _text_completion(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    base_url_field: str = "--base-url",
    **options: Any,
) -> AnthropicTextCompletion:
    provider = find_provider("anthropic")
    assert provider is not None
    endpoint = resolve_endpoint(
        provider, model, base_url=base_url, api_key=api_key, base_url_field=base_url_field
    )
    return AnthropicTextCompletion(endpoint, transport=transport, **options)


register(
    Provider(
        name="anthropic",
        description="Anthropic Messages API (Claude)",
        env=EnvVars(all_of=KEY_VARS),
        default_base_url=DEFAULT_BASE_URL,
        base_url_vars=BASE_URL_VARS,
        roles={Role.TEXT_COMPLETION: Capability(_text_completion, models=("claude-sonnet-4-5",))},
        key_vars=KEY_VARS,
    )
)
